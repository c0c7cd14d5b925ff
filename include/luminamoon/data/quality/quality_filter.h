// QualityFilter: per-document quality metrics and the rule sets peers ship, as named presets
// (SPEC 4; every metric, rule and default is defined in docs/quality.md).
//
// Presets: "default" (our core metrics: character entropy, word n-gram repetition, symbol ratio,
// capitalised-word ratio, word count), "gopher_quality", "gopher_repetition", "c4", "c4_lines"
// (C4 with line removal: the kept text is returned and later presets see it) and "fineweb".
// The Gopher, C4 and FineWeb rules reproduce datatrove 0.10.1 (including its word tokenizer,
// spaCy's English one); the core metrics are ours.
//
// Contract notes:
//  * documents are bytes; invalid UTF-8 is decoded with U+FFFD (CPython's "replace" rule) before
//    anything is measured, so every metric is defined on code points;
//  * results never depend on the thread count: documents are independent, and the metrics use
//    integer counts and one fixed summation order (the Python fallback agrees to the bit);
//  * a constructed filter is immutable: every const method is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "luminamoon/data/language/language_filter.h"
#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

// A list of language codes (the `languages` setting of the "language" preset).
using QualityLanguages = std::vector<std::string>;
// Per-language minimum scores, code -> score; the key "default" covers every other language
// (the `min_language_score` setting of the "language" preset, given as a mapping).
using QualityLanguageScores = std::vector<std::pair<std::string, double>>;

// A threshold or parameter value. std::monostate is Python's None: it switches a rule off. A
// std::string holds the printable form of a value of an unsupported type, which the constructor
// rejects with InvalidArgument (after unknown names, which raise ConfigError, are reported).
using QualitySetting = std::variant<std::monostate, bool, std::int64_t, double, std::string,
                                    QualityLanguages, QualityLanguageScores>;

// Why a document was rejected: the first rule it failed. `value comparison threshold` holds;
// `comparison` is '<' for a minimum and '>' for a maximum. The "language" rule (the document's
// language is not one of `languages`) has comparison '!', its language score as value and 0 as
// threshold. The names are static strings.
struct QualityRejection {
  std::string_view rule;
  std::string_view metric;
  double value = 0;
  double threshold = 0;
  char comparison = '>';
  bool operator==(const QualityRejection&) const = default;
};

struct QualityFilterOptions {
  unsigned threads = 0;  // workers for filter_batch; 0 = hardware concurrency
};

struct QualityBatchResult {
  std::vector<std::uint8_t> keep;
  std::vector<std::optional<QualityRejection>> reasons;  // nullopt for kept documents
  // "total", "kept", "rejected", then every rule that is on (first-failing counts).
  std::vector<std::pair<std::string_view, std::uint64_t>> counters;
  // With the c4_lines preset: each kept document's text after line removal (nullopt when
  // rejected). Empty otherwise.
  bool has_texts = false;
  std::vector<std::optional<std::string>> texts;
};

class QualityFilter {
 public:
  // Throws ConfigError for an unknown preset or threshold name (with a suggestion) or for a
  // threshold of a preset that is not selected, InvalidArgument for a value of the wrong kind
  // or out of range, and for an empty preset list.
  QualityFilter(std::span<const std::string_view> presets,
                std::span<const std::pair<std::string_view, QualitySetting>> thresholds = {},
                QualityFilterOptions options = {});
  ~QualityFilter();
  QualityFilter(QualityFilter&&) noexcept;
  QualityFilter& operator=(QualityFilter&&) noexcept;

  // The first rule `document` fails in the selected presets, in order; nullopt if it passes.
  std::optional<QualityRejection> check(std::string_view document) const;
  bool is_high_quality(std::string_view document) const { return !check(document).has_value(); }
  // Every metric (all presets, whichever are selected), in metric_names() order.
  std::vector<std::pair<std::string_view, double>> metrics(std::string_view document) const;
  // CLD2's language and score of the document (LanguageFilter's detection, the same code) when
  // the "language" preset is selected; nullopt otherwise (CLD2 is not run).
  std::optional<LanguageDetection> language_metrics(std::string_view document) const;
  // The text after C4 line removal with this filter's c4 settings, whatever the decision.
  std::string clean_lines(std::string_view document) const;
  QualityBatchResult filter_batch(std::span<const std::string_view> documents) const;
  // The same; documents whose flag in `known_valid_utf8` (empty, or one per document) is set
  // are not checked for UTF-8 validity again (the caller guarantees it, e.g. the cleaner ran).
  QualityBatchResult filter_batch(std::span<const std::string_view> documents,
                                  std::span<const std::uint8_t> known_valid_utf8) const;
  // The pipeline stage: drops every kept document that fails a rule (the rule, value and
  // threshold recorded), replaces kept texts by their line-removed text with c4_lines, and
  // appends filter_batch's counters to `counters`.
  void apply(DocumentBatch& batch, StageCounters& counters) const;

  const std::vector<std::string_view>& presets() const noexcept;
  // Every setting of the selected presets (defaults and overrides), in rule order.
  std::vector<std::pair<std::string_view, QualitySetting>> thresholds() const;
  // The rules that are on, in the order they are checked.
  std::vector<std::string_view> rules() const;
  const QualityFilterOptions& options() const noexcept;

  // Every preset with its settings and their published defaults.
  static std::vector<
      std::pair<std::string_view, std::vector<std::pair<std::string_view, QualitySetting>>>>
  preset_defaults();
  static std::span<const std::string_view> metric_names();
  // The word tokens every word-based metric uses (spaCy English, as datatrove).
  static std::vector<std::string> tokenize(std::string_view document);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace luminamoon::data
