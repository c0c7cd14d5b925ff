// Fuzz target: the QualityFilter over arbitrary bytes (the document; invalid UTF-8 included).
// Checks: every metric is finite and >= 0; the word tokens partition the document's
// non-whitespace characters in order; check() agrees with filter_batch on one and two threads;
// the c4_lines text is valid UTF-8 and equals clean_lines() for kept documents.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/quality/quality_filter.h"
#include "quality/internal/text.h"

namespace {

using namespace luminamoon::data;

std::string without_whitespace(std::string_view text) {
  std::string out;
  std::size_t length = 0;
  for (std::size_t i = 0; i < text.size(); i += length) {
    if (!quality_internal::space_at(text, i, length)) out.append(text.substr(i, length));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view doc(reinterpret_cast<const char*>(data), size);
  const std::string repaired = quality_internal::repair_utf8(doc);

  const std::vector<std::string_view> presets = {"default", "gopher_quality", "gopher_repetition",
                                                 "c4_lines", "fineweb"};
  const QualityFilter one(presets, {}, QualityFilterOptions{1});
  const QualityFilter two(presets, {}, QualityFilterOptions{2});

  for (const auto& [name, value] : one.metrics(doc)) {
    if (!std::isfinite(value) || value < 0) std::abort();
  }
  std::string joined;
  for (const std::string& token : QualityFilter::tokenize(doc)) {
    if (token.empty()) std::abort();
    joined += token;
  }
  if (joined != without_whitespace(repaired)) std::abort();

  const std::vector<std::string_view> batch = {doc, doc.substr(0, size / 2), repaired};
  const QualityBatchResult a = one.filter_batch(batch);
  const QualityBatchResult b = two.filter_batch(batch);
  if (a.keep != b.keep || a.reasons != b.reasons || a.texts != b.texts) std::abort();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (a.reasons[i] != one.check(batch[i])) std::abort();
    if (a.texts[i] && !quality_internal::is_valid_utf8(*a.texts[i])) std::abort();
  }
  if (!quality_internal::is_valid_utf8(one.clean_lines(doc))) std::abort();
  return 0;
}
