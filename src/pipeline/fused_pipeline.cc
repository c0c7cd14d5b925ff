// FusedPipeline: the stages in order over one DocumentBatch, and the counters they report.
#include "luminamoon/data/pipeline/fused_pipeline.h"

#include <string>

namespace luminamoon::data {
namespace {

// Repairs (U+FFFD) the texts not known to be valid UTF-8; afterwards every flag is set.
void ensure_valid_utf8(DocumentBatch& batch) {
  std::vector<std::size_t> repaired;
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch.known_valid_utf8(i) || utf8_is_valid(batch.texts[i])) continue;
    repaired.push_back(i);
    append_utf8_repaired(batch.texts[i], texts.emplace_back());
  }
  if (!repaired.empty()) batch.replace_texts(repaired, std::move(texts), /*valid=*/true);
  batch.mark_all_valid_utf8();
}

void add_into(PipelineCounters& totals, const PipelineCounters& batch) {
  for (const auto& [section, counters] : batch) {
    auto it = totals.begin();
    while (it != totals.end() && it->first != section) ++it;
    if (it == totals.end()) {
      totals.emplace_back(section, counters);
      continue;
    }
    for (const auto& [name, value] : counters) {
      auto c = it->second.begin();
      while (c != it->second.end() && c->first != name) ++c;
      if (c == it->second.end()) {
        it->second.emplace_back(name, value);
      } else {
        c->second += value;
      }
    }
  }
}

}  // namespace

FusedPipeline::FusedPipeline(PipelineStages stages) : stages_(stages) {}

PipelineCounters FusedPipeline::process(DocumentBatch& batch) {
  std::lock_guard lock(process_mutex_);
  PipelineCounters counters;
  std::uint64_t input_bytes = 0;
  for (const std::string_view t : batch.texts) input_bytes += t.size();
  counters.push_back({"input", {{"documents", batch.size()}, {"bytes", input_bytes}}});

  if (stages_.cleaner != nullptr) {
    stages_.cleaner->apply(batch, counters.emplace_back("cleaner", StageCounters{}).second);
  } else {
    ensure_valid_utf8(batch);
  }
  if (stages_.language != nullptr) {
    stages_.language->apply(batch, counters.emplace_back("language", StageCounters{}).second);
  }
  if (stages_.quality != nullptr) {
    stages_.quality->apply(batch, counters.emplace_back("quality", StageCounters{}).second);
  }
  if (stages_.exact_dedup != nullptr) {
    stages_.exact_dedup->apply(batch, counters.emplace_back("exact_dedup", StageCounters{}).second);
  }
  if (stages_.near_dedup != nullptr) {
    stages_.near_dedup->apply(batch, counters.emplace_back("near_dedup", StageCounters{}).second);
  }
  if (stages_.pii != nullptr) {
    stages_.pii->apply(batch, counters.emplace_back("pii", StageCounters{}).second);
  }

  std::uint64_t kept = 0;
  std::uint64_t output_bytes = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!batch.kept(i)) continue;
    ++kept;
    output_bytes += batch.texts[i].size();
  }
  counters.push_back({"output", {{"documents", kept}, {"bytes", output_bytes}}});
  std::lock_guard stats_lock(stats_mutex_);
  add_into(totals_, counters);
  return counters;
}

PipelineCounters FusedPipeline::stats() const {
  std::lock_guard lock(stats_mutex_);
  return totals_;
}

}  // namespace luminamoon::data
