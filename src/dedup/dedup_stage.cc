// StreamDeduplicator as a pipeline stage: drop the kept documents of a DocumentBatch already
// seen (first occurrence wins, in batch order).
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace luminamoon::data {

void StreamDeduplicator::apply(DocumentBatch& batch, StageCounters& counters) {
  const std::vector<std::size_t> kept = batch.kept_indices();
  std::vector<std::uint8_t> keep(kept.size(), 0);
  filter_batch(batch.texts_at(kept), keep);
  const std::uint64_t duplicates =
      batch.reject_unkept(kept, keep, PipelineStage::kExactDedup, "duplicate");
  counters.emplace_back("total", kept.size());
  counters.emplace_back("duplicates", duplicates);
}

}  // namespace luminamoon::data
