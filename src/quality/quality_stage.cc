// QualityFilter as a pipeline stage: reject the kept documents of a DocumentBatch that fail a
// rule, and carry c4_lines' line-removed text forward.
#include "luminamoon/data/quality/quality_filter.h"

namespace luminamoon::data {

void QualityFilter::apply(DocumentBatch& batch, StageCounters& counters) const {
  const std::vector<std::size_t> kept = batch.kept_indices();
  std::vector<std::uint8_t> valid;
  if (!batch.valid_utf8.empty()) {
    valid.reserve(kept.size());
    for (const std::size_t i : kept) valid.push_back(batch.valid_utf8[i]);
  }
  QualityBatchResult result = filter_batch(batch.texts_at(kept), valid);
  std::vector<std::size_t> rewritten;
  std::vector<std::string> texts;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (const std::optional<QualityRejection>& r = result.reasons[k]) {
      batch.reject(kept[k], PipelineStage::kQuality, r->rule, r->value, r->threshold);
    } else if (result.has_texts && result.texts[k] && *result.texts[k] != batch.texts[kept[k]]) {
      rewritten.push_back(kept[k]);
      texts.push_back(std::move(*result.texts[k]));
    }
  }
  // Line removal decodes with U+FFFD like every metric, so its output is valid UTF-8.
  if (!rewritten.empty()) batch.replace_texts(rewritten, std::move(texts), /*valid=*/true);
  for (const auto& [name, value] : result.counters) counters.emplace_back(name, value);
}

}  // namespace luminamoon::data
