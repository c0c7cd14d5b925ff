// PIIMasker as a pipeline stage: mask the kept documents of a DocumentBatch in place.
#include "luminamoon/data/pii/pii_masker.h"

namespace luminamoon::data {

void PiiMasker::apply(DocumentBatch& batch, StageCounters& counters) const {
  const std::vector<std::size_t> kept = batch.kept_indices();
  std::vector<std::uint8_t> valid;
  if (!batch.valid_utf8.empty()) {
    valid.reserve(kept.size());
    for (const std::size_t i : kept) valid.push_back(batch.valid_utf8[i]);
  }
  std::vector<std::string> out;
  std::vector<std::uint8_t> changed;
  const PiiCounts counts = mask_batch_into(batch.texts_at(kept), out, changed, valid);
  std::vector<std::size_t> rewritten;
  std::vector<std::string> texts;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (changed[k] != 0) {
      rewritten.push_back(kept[k]);
      texts.push_back(std::move(out[k]));
    }
  }
  const std::uint64_t documents_changed = rewritten.size();
  if (!rewritten.empty()) batch.replace_texts(rewritten, std::move(texts), /*valid=*/true);
  counters.emplace_back("documents", kept.size());
  counters.emplace_back("documents_changed", documents_changed);
  for (std::size_t c = 0; c < kPiiCategoryCount; ++c) {
    counters.emplace_back(pii_category_name(static_cast<PiiCategory>(c)), counts[c]);
  }
}

}  // namespace luminamoon::data
