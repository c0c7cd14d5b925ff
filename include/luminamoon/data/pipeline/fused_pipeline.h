// FusedPipeline: one call per batch runs clean -> language -> quality -> exact dedup -> near dedup
// -> PII mask over one DocumentBatch, each stage through its apply() on the shared worker pool
// (SPEC 4; docs/pipeline.md is the contract, python/luminamoon/data/fallbacks/pipeline.py the
// reference).
//
// Contract notes:
//  * the pipeline does not own its stages: each pointer (null = stage off) must outlive it;
//  * deterministic: the same batches in the same order give the same texts, rejections and
//    counters for any thread count (dedup probing is sequential in input order);
//  * process() calls are serialised (dedup answers depend on the order of batches); the stages'
//    own cumulative statistics (TextCleaner::stats, PiiMasker::stats) are left alone: the
//    pipeline counts for itself;
//  * without a cleaner, texts not known to be valid UTF-8 are repaired first (U+FFFD, CPython's
//    "replace" rule), so every stage sees the same text the Python fallback does.
#pragma once

#include <cstdint>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "luminamoon/data/cleaner/text_cleaner.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"
#include "luminamoon/data/language/language_filter.h"
#include "luminamoon/data/minhash/minhash_deduplicator.h"
#include "luminamoon/data/pii/pii_masker.h"
#include "luminamoon/data/pipeline/document_batch.h"
#include "luminamoon/data/quality/quality_filter.h"

namespace luminamoon::data {

struct PipelineStages {
  TextCleaner* cleaner = nullptr;
  QualityFilter* quality = nullptr;
  StreamDeduplicator* exact_dedup = nullptr;
  MinHashDeduplicator* near_dedup = nullptr;
  PiiMasker* pii = nullptr;
  LanguageFilter* language = nullptr;  // runs after the cleaner (last here: aggregate order)
};

// Counters per section: "input", then every stage that is on (by pipeline_stage_name), then
// "output"; each section's counters in a fixed order.
using PipelineCounters = std::vector<std::pair<std::string_view, StageCounters>>;

class FusedPipeline {
 public:
  explicit FusedPipeline(PipelineStages stages);

  // Runs every stage over `batch` in place: afterwards batch.rejections says which documents
  // were dropped and why, and the kept documents' texts are the final ones (valid UTF-8).
  // Returns this batch's counters and adds them to stats().
  PipelineCounters process(DocumentBatch& batch);

  // The sum of every batch's counters so far.
  PipelineCounters stats() const;
  const PipelineStages& stages() const noexcept { return stages_; }

 private:
  PipelineStages stages_;
  std::mutex process_mutex_;
  mutable std::mutex stats_mutex_;
  PipelineCounters totals_;
};

}  // namespace luminamoon::data
