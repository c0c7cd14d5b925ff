// LanguageFilter: language identification with CLD2 (Debian libcld2, its model compiled into the
// library: nothing is downloaded) and a keep/drop rule over it, as a component and as a pipeline
// stage (docs/language.md is the contract).
//
// Contract notes:
//  * a document is bytes; invalid UTF-8 is repaired with U+FFFD (CPython's "replace" rule) before
//    CLD2 sees it, since CLD2 itself is only defined on valid UTF-8;
//  * detection is CLD2's DetectLanguageSummary in plain-text mode, no hints: `language` is the
//    CLD2 code of its answer, `score` the share of the document's letters it attributes to that
//    language (percent / 100), `reliable` its flag; when the answer is not among CLD2's top
//    three (its default ENGLISH for empty or indeterminate text) it is "un" with score 0;
//  * the Python fallback calls the same function of the same shared library, so both backends
//    give the same answers by construction (tests/test_language_parity.py checks it);
//  * documents are independent: results never depend on the thread count; a constructed filter
//    is immutable and every const method is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

struct LanguageDetection {
  std::string_view language;  // CLD2's code (a static string), "un" = unknown
  double score = 0;           // 0..1: share of the letters in `language`
  bool reliable = false;
  bool operator==(const LanguageDetection&) const = default;
};

// Why a document was dropped: rule "language" (its language is not in the list) or
// "min_language_score" (score < threshold). The strings are static.
struct LanguageRejection {
  std::string_view rule;
  std::string_view language;
  double score = 0;
  double threshold = 0;
  bool operator==(const LanguageRejection&) const = default;
};

struct LanguageFilterOptions {
  std::vector<std::string> languages;  // empty = every language
  double min_score = 0;                // 0..1
  // Per-language minimum scores that replace min_score for those languages.
  std::vector<std::pair<std::string, double>> min_scores;
  unsigned threads = 0;  // workers for filter_batch; 0 = hardware concurrency
};

struct LanguageBatchResult {
  std::vector<std::uint8_t> keep;
  std::vector<std::optional<LanguageRejection>> reasons;
  std::vector<LanguageDetection> detections;
  // "total", "kept", "rejected", "language", "min_language_score".
  std::vector<std::pair<std::string_view, std::uint64_t>> counters;
};

// CLD2 on `text`, which must be valid UTF-8 (the caller guarantees it).
LanguageDetection detect_language_utf8(std::string_view text);
// The same on any bytes: invalid UTF-8 repaired first.
LanguageDetection detect_language(std::string_view document);
// Every language code CLD2 can answer, in its enum order (duplicates once).
std::span<const std::string_view> known_language_codes();
// CLD2's version string ("code version - data build date").
std::string_view language_model_version();

class LanguageFilter {
 public:
  // Throws ConfigError for an unknown language code (with a suggestion) and InvalidArgument for
  // a score outside [0, 1] or NaN, or a language given twice in min_scores.
  explicit LanguageFilter(LanguageFilterOptions options = {});

  LanguageDetection detect(std::string_view document) const { return detect_language(document); }
  std::optional<LanguageRejection> check(std::string_view document) const;
  std::optional<LanguageRejection> judge(const LanguageDetection& detection) const;
  LanguageBatchResult filter_batch(std::span<const std::string_view> documents,
                                   std::span<const std::uint8_t> known_valid_utf8 = {}) const;
  // The pipeline stage: drops every kept document that fails, recording the rule, the score and
  // the threshold (NaN for "language"), and appends filter_batch's counters.
  void apply(DocumentBatch& batch, StageCounters& counters) const;

  const LanguageFilterOptions& options() const noexcept { return options_; }
  // The minimum score that applies to `language`.
  double min_score_for(std::string_view language) const;

 private:
  LanguageFilterOptions options_;
};

}  // namespace luminamoon::data
