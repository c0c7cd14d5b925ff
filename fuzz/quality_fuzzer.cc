// Fuzz target: the QualityFilter over arbitrary bytes (the document; invalid UTF-8 included).
// Checks: every metric is finite and >= 0; the word tokens partition the document's
// non-whitespace characters in order, and the tokenizer's fast path (block scan, word cache) gives
// the tokens of its reference path; check() agrees with filter_batch on one and two threads;
// the c4_lines text is valid UTF-8 and equals clean_lines() for kept documents; the language
// preset's metrics are LanguageFilter's and its decisions agree on one and two threads.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/language/language_filter.h"
#include "luminamoon/data/quality/quality_filter.h"
#include "quality/internal/text.h"
#include "quality/internal/words.h"

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
  std::vector<quality_internal::Token> fast;
  std::vector<quality_internal::Token> reference;
  quality_internal::tokenize_document(repaired, fast, quality_internal::TokenizerPath::kFast);
  quality_internal::tokenize_document(repaired, reference,
                                      quality_internal::TokenizerPath::kReference);
  if (fast.size() != reference.size()) std::abort();
  for (std::size_t i = 0; i < fast.size(); ++i) {
    if (fast[i].begin != reference[i].begin || fast[i].end != reference[i].end ||
        fast[i].kind != reference[i].kind) {
      std::abort();
    }
  }

  const std::vector<std::string_view> batch = {doc, doc.substr(0, size / 2), repaired};
  const QualityBatchResult a = one.filter_batch(batch);
  const QualityBatchResult b = two.filter_batch(batch);
  if (a.keep != b.keep || a.reasons != b.reasons || a.texts != b.texts) std::abort();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (a.reasons[i] != one.check(batch[i])) std::abort();
    if (a.texts[i] && !quality_internal::is_valid_utf8(*a.texts[i])) std::abort();
  }
  if (!quality_internal::is_valid_utf8(one.clean_lines(doc))) std::abort();

  // The language preset (CLD2) on the c4_lines text: its metrics are LanguageFilter's detection,
  // and its decisions do not depend on the thread count.
  const std::vector<std::string_view> with_language = {"c4_lines", "language"};
  const std::vector<std::pair<std::string_view, QualitySetting>> settings = {
      {"c4_min_sentences", std::monostate{}},
      {"languages", QualityLanguages{"en", "de", "un"}},
      {"min_language_score", QualityLanguageScores{{"de", 0.5}, {"default", 0.3}}}};
  const QualityFilter lang_one(with_language, settings, QualityFilterOptions{1});
  const QualityFilter lang_two(with_language, settings, QualityFilterOptions{2});
  if (lang_one.language_metrics(doc) != detect_language(doc)) std::abort();
  const QualityBatchResult c = lang_one.filter_batch(batch);
  const QualityBatchResult d = lang_two.filter_batch(batch);
  if (c.keep != d.keep || c.reasons != d.reasons || c.texts != d.texts) std::abort();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (c.reasons[i] != lang_one.check(batch[i])) std::abort();
    const auto& r = c.reasons[i];
    if (r && r->rule == "min_language_score" && !(r->value < r->threshold)) std::abort();
  }
  return 0;
}
