// TextCleaner as a pipeline stage: clean the kept documents of a DocumentBatch in place.
#include "luminamoon/data/cleaner/text_cleaner.h"

namespace luminamoon::data {

void TextCleaner::apply(DocumentBatch& batch, StageCounters& counters) const {
  const std::vector<std::size_t> kept = batch.kept_indices();
  const std::vector<std::string_view> texts = batch.texts_at(kept);
  CleanStats stats;
  std::vector<std::string> cleaned = clean_batch(texts, stats);
  std::uint64_t dropped_empty = 0;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (cleaned[k].empty()) {
      batch.reject(kept[k], PipelineStage::kCleaner, "empty");
      ++dropped_empty;
    }
  }
  batch.replace_texts(kept, std::move(cleaned), /*valid=*/true);
  stats.for_each(
      [&](std::string_view name, std::uint64_t value) { counters.emplace_back(name, value); });
  counters.emplace_back("dropped_empty", dropped_empty);
}

}  // namespace luminamoon::data
