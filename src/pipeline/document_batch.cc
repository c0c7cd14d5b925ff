// DocumentBatch: kept/rejected bookkeeping and text replacement shared by every stage.
#include "luminamoon/data/pipeline/document_batch.h"

#include <array>

namespace luminamoon::data {
namespace {

constexpr std::array<std::string_view, kPipelineStageCount + 1> kStageNames = {
    "", "cleaner", "language", "quality", "exact_dedup", "near_dedup", "pii"};

}  // namespace

std::string_view pipeline_stage_name(PipelineStage stage) noexcept {
  const auto i = static_cast<std::size_t>(stage);
  return i < kStageNames.size() ? kStageNames[i] : std::string_view();
}

void DocumentBatch::clear() {
  texts.clear();
  valid_utf8.clear();
  for (auto& column : fields) column.clear();
  coordinates.clear();
  end = StreamCoordinate{};
  storage.clear();
  rejections.clear();
}

std::vector<std::size_t> DocumentBatch::kept_indices() const {
  std::vector<std::size_t> out;
  out.reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (kept(i)) out.push_back(i);
  }
  return out;
}

std::size_t DocumentBatch::kept_count() const noexcept {
  if (rejections.empty()) return texts.size();
  std::size_t n = 0;
  for (const DocumentRejection& r : rejections) n += r.stage == PipelineStage::kKept ? 1 : 0;
  return n;
}

std::vector<std::string_view> DocumentBatch::texts_at(
    const std::vector<std::size_t>& indices) const {
  std::vector<std::string_view> out;
  out.reserve(indices.size());
  for (const std::size_t i : indices) out.push_back(texts[i]);
  return out;
}

void DocumentBatch::reject(std::size_t i, PipelineStage stage, std::string_view rule, double value,
                           double threshold) {
  if (rejections.empty()) rejections.resize(texts.size());
  DocumentRejection& r = rejections[i];
  if (r.stage != PipelineStage::kKept) return;
  r = DocumentRejection{stage, rule, value, threshold};
}

std::uint64_t DocumentBatch::reject_unkept(const std::vector<std::size_t>& indices,
                                           const std::vector<std::uint8_t>& keep,
                                           PipelineStage stage, std::string_view rule,
                                           double threshold) {
  std::uint64_t rejected = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (keep[k] != 0) continue;
    reject(indices[k], stage, rule, std::nan(""), threshold);
    ++rejected;
  }
  return rejected;
}

void DocumentBatch::replace_texts(const std::vector<std::size_t>& indices,
                                  std::vector<std::string>&& replacement, bool valid) {
  auto owned = std::make_shared<std::vector<std::string>>(std::move(replacement));
  if (valid && valid_utf8.empty()) valid_utf8.assign(texts.size(), 0);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    texts[indices[k]] = (*owned)[k];
    if (!valid_utf8.empty()) valid_utf8[indices[k]] = valid ? 1 : 0;
  }
  storage.push_back(std::move(owned));
}

void DocumentBatch::mark_all_valid_utf8() { valid_utf8.assign(texts.size(), 1); }

}  // namespace luminamoon::data
