// QualityFilter: presets and their settings, rule evaluation in preset order, and the
// multi-threaded batch path. The preset table mirrors _PRESETS in fallbacks/quality.py.
#include "luminamoon/data/quality/quality_filter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "common/internal/object_pool.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/common/worker_pool.h"
#include "quality/internal/metrics.h"
#include "quality/internal/text.h"

namespace luminamoon::data {
namespace {

using namespace quality_internal;

enum class Preset : std::uint8_t {
  kDefault,
  kGopherQuality,
  kGopherRepetition,
  kC4,
  kC4Lines,
  kFineWeb,
  kLanguage
};
constexpr std::array<std::string_view, 7> kPresetNames = {
    "default", "gopher_quality", "gopher_repetition", "c4", "c4_lines", "fineweb", "language"};

// kRatio: a float threshold; kCount: an int threshold; kFlag: a bool rule switch (or option);
// kParam: an int parameter; kLanguages: a list of CLD2 codes; kLanguageScore: a score in [0, 1]
// or a per-language mapping. A rule rejects when `metric comparison threshold`.
enum class Kind : std::uint8_t { kRatio, kCount, kFlag, kParam, kLanguages, kLanguageScore };
constexpr std::uint8_t kNoMetric = kMetricCount;
// The language metrics are not part of Metrics (CLD2 runs only for the "language" preset).
constexpr std::uint8_t kLanguageMetric = kMetricCount + 1;
constexpr std::uint8_t kLanguageScoreMetric = kMetricCount + 2;

std::string_view metric_name(std::uint8_t metric) {
  if (metric == kLanguageMetric) return "language";
  if (metric == kLanguageScoreMetric) return "language_score";
  return kMetricNames[metric];
}

struct Spec {
  std::string_view name;
  Preset preset;  // c4 settings are shared by c4 and c4_lines
  Kind kind;
  QualitySetting default_value;
  std::uint8_t metric;
  char comparison;
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> table = [] {
    using P = Preset;
    using K = Kind;
    auto i = [](std::int64_t v) { return QualitySetting(v); };
    auto d = [](double v) { return QualitySetting(v); };
    auto b = [](bool v) { return QualitySetting(v); };
    std::vector<Spec> t = {
        {"min_words", P::kDefault, K::kCount, i(10), kWords, '<'},
        {"min_char_entropy", P::kDefault, K::kRatio, d(3.5), kCharEntropy, '<'},
        {"max_char_entropy", P::kDefault, K::kRatio, d(5.5), kAdjustedCharEntropy, '>'},
        {"max_ngram_repetition", P::kDefault, K::kRatio, d(0.4), kNgramRepetition, '>'},
        {"max_symbol_ratio", P::kDefault, K::kRatio, d(0.3), kSymbolRatio, '>'},
        {"max_capitalized_word_ratio", P::kDefault, K::kRatio, d(0.5), kCapitalizedWordShare, '>'},
        {"ngram_n", P::kDefault, K::kParam, i(2), kNoMetric, 0},
        {"ngram_window", P::kDefault, K::kParam, i(1000), kNoMetric, 0},

        {"gopher_min_words", P::kGopherQuality, K::kCount, i(50), kGopherWords, '<'},
        {"gopher_max_words", P::kGopherQuality, K::kCount, i(100000), kGopherWords, '>'},
        {"gopher_min_mean_word_length", P::kGopherQuality, K::kRatio, d(3.0), kGopherMeanWordLength,
         '<'},
        {"gopher_max_mean_word_length", P::kGopherQuality, K::kRatio, d(10.0),
         kGopherMeanWordLength, '>'},
        {"gopher_max_hash_ratio", P::kGopherQuality, K::kRatio, d(0.1), kGopherHashRatio, '>'},
        {"gopher_max_ellipsis_ratio", P::kGopherQuality, K::kRatio, d(0.1), kGopherEllipsisRatio,
         '>'},
        {"gopher_max_bullet_lines_ratio", P::kGopherQuality, K::kRatio, d(0.9),
         kGopherBulletLinesRatio, '>'},
        {"gopher_max_ellipsis_lines_ratio", P::kGopherQuality, K::kRatio, d(0.3),
         kGopherEllipsisLinesRatio, '>'},
        {"gopher_min_alpha_words_ratio", P::kGopherQuality, K::kRatio, d(0.8),
         kGopherAlphaWordsRatio, '<'},
        {"gopher_min_stop_words", P::kGopherQuality, K::kCount, i(2), kGopherStopWords, '<'},

        {"gopher_min_chars", P::kGopherRepetition, K::kCount, i(1), kChars, '<'},
        {"gopher_max_dup_para_ratio", P::kGopherRepetition, K::kRatio, d(0.3), kGopherDupParaRatio,
         '>'},
        {"gopher_max_dup_para_char_ratio", P::kGopherRepetition, K::kRatio, d(0.2),
         kGopherDupParaCharRatio, '>'},
        {"gopher_max_dup_line_ratio", P::kGopherRepetition, K::kRatio, d(0.3), kGopherDupLineRatio,
         '>'},
        {"gopher_max_dup_line_char_ratio", P::kGopherRepetition, K::kRatio, d(0.2),
         kGopherDupLineCharRatio, '>'},
        {"gopher_max_top_2gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.20),
         kGopherTop2gramCharRatio, '>'},
        {"gopher_max_top_3gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.18),
         kGopherTop3gramCharRatio, '>'},
        {"gopher_max_top_4gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.16),
         kGopherTop4gramCharRatio, '>'},
        {"gopher_max_dup_5gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.15),
         kGopherDup5gramCharRatio, '>'},
        {"gopher_max_dup_6gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.14),
         kGopherDup6gramCharRatio, '>'},
        {"gopher_max_dup_7gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.13),
         kGopherDup7gramCharRatio, '>'},
        {"gopher_max_dup_8gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.12),
         kGopherDup8gramCharRatio, '>'},
        {"gopher_max_dup_9gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.11),
         kGopherDup9gramCharRatio, '>'},
        {"gopher_max_dup_10gram_char_ratio", P::kGopherRepetition, K::kRatio, d(0.10),
         kGopherDup10gramCharRatio, '>'},

        {"c4_lorem_ipsum", P::kC4, K::kFlag, b(true), kC4LoremIpsumLines, '>'},
        {"c4_curly_bracket", P::kC4, K::kFlag, b(true), kC4CurlyBracketLines, '>'},
        {"c4_min_sentences", P::kC4, K::kCount, i(5), kC4Sentences, '<'},
        {"c4_max_word_length", P::kC4, K::kParam, i(1000), kNoMetric, 0},
        {"c4_min_words_per_line", P::kC4, K::kParam, i(3), kNoMetric, 0},
        {"c4_terminal_punct", P::kC4, K::kFlag, b(true), kNoMetric, 0},
        {"c4_remove_citations", P::kC4, K::kFlag, b(true), kNoMetric, 0},
        {"c4_javascript", P::kC4, K::kFlag, b(true), kNoMetric, 0},
        {"c4_policy", P::kC4, K::kFlag, b(true), kNoMetric, 0},

        {"fineweb_min_lines", P::kFineWeb, K::kCount, i(1), kFinewebLines, '<'},
        {"fineweb_min_line_punct_ratio", P::kFineWeb, K::kRatio, d(0.12), kFinewebLinePunctRatio,
         '<'},
        {"fineweb_max_short_line_ratio", P::kFineWeb, K::kRatio, d(0.67), kFinewebShortLineRatio,
         '>'},
        {"fineweb_max_dup_line_char_ratio", P::kFineWeb, K::kRatio, d(0.01),
         kFinewebDupLineCharRatio, '>'},
        {"fineweb_max_newline_word_ratio", P::kFineWeb, K::kRatio, d(0.3), kFinewebNewlineWordRatio,
         '>'},
        {"fineweb_short_line_length", P::kFineWeb, K::kParam, i(30), kNoMetric, 0},
        {"fineweb_line_punct_exclude_zero", P::kFineWeb, K::kFlag, b(false), kNoMetric, 0},

        // FineWeb's language rule (English, score >= 0.65), with CLD2's share of letters as the
        // score (docs/quality.md, "language").
        {"languages", P::kLanguage, K::kLanguages, QualitySetting(QualityLanguages{"en"}),
         kLanguageMetric, '!'},
        {"min_language_score", P::kLanguage, K::kLanguageScore, d(0.65), kLanguageScoreMetric, '<'},
    };
    return t;
  }();
  return table;
}

// Message text by appending (GCC 12 at -O3 reports a false -Wrestrict on chains of
// std::string operator+).
std::string concat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (const std::string_view part : parts) out.append(part);
  return out;
}

std::size_t spec_index(std::string_view name) {
  const std::vector<Spec>& t = specs();
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].name == name) return k;
  }
  return t.size();
}

Preset owner(Preset p) { return p == Preset::kC4Lines ? Preset::kC4 : p; }

constexpr std::int64_t kIntLimit = std::int64_t{1} << 53;  // exact as a double

std::string repr(const QualitySetting& value) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool v) const { return v ? "True" : "False"; }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.17g", v);
      return buffer;
    }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const QualityLanguages& v) const {
      std::string out = "[";
      for (const std::string& code : v) out += (out.size() > 1 ? ", '" : "'") + code + "'";
      return out + "]";
    }
    std::string operator()(const QualityLanguageScores& v) const {
      std::string out = "{";
      for (const auto& [code, score] : v) {
        out += (out.size() > 1 ? ", '" : "'") + code + "': " + (*this)(score);
      }
      return out + "}";
    }
  };
  return std::visit(Visitor{}, value);
}

// Validates `value` for `spec`; returns the stored form (ratios as double).
QualitySetting check_setting(const Spec& spec, const QualitySetting& value) {
  const std::string where = concat({"QualityFilter: ", spec.name});
  if (spec.kind == Kind::kLanguages) {
    if (!std::holds_alternative<std::monostate>(value) &&
        !std::holds_alternative<QualityLanguages>(value)) {
      throw InvalidArgument(
          concat({where, " must be a list of language codes or None, got ", repr(value)}));
    }
    return value;  // codes are checked by the LanguageFilter built from them
  }
  if (spec.kind == Kind::kLanguageScore) {
    if (std::holds_alternative<std::monostate>(value) ||
        std::holds_alternative<QualityLanguageScores>(value)) {
      return value;  // scores and codes are checked by the LanguageFilter built from them
    }
    if (std::holds_alternative<double>(value)) return value;
    if (const auto* n = std::get_if<std::int64_t>(&value)) {
      return QualitySetting(static_cast<double>(*n));
    }
    throw InvalidArgument(concat({where,
                                  " must be a number, a mapping of language code to score (key "
                                  "'default' for the others) or None, got ",
                                  repr(value)}));
  }
  if (spec.kind == Kind::kFlag) {
    if (!std::holds_alternative<bool>(value)) {
      throw InvalidArgument(concat({where, " must be True or False, got ", repr(value)}));
    }
    return value;
  }
  if (std::holds_alternative<std::monostate>(value)) {
    const bool nullable = spec.name == "c4_max_word_length" || spec.name == "c4_min_words_per_line";
    if (spec.kind == Kind::kParam && !nullable) {
      throw InvalidArgument(concat({where, " cannot be None (it is a parameter, not a rule)"}));
    }
    return value;
  }
  if (spec.kind == Kind::kRatio) {
    double v = 0;
    if (const auto* x = std::get_if<double>(&value)) {
      v = *x;
    } else if (const auto* n = std::get_if<std::int64_t>(&value)) {
      v = static_cast<double>(*n);
    } else {
      throw InvalidArgument(concat({where, " must be a number or None, got ", repr(value)}));
    }
    if (!std::isfinite(v)) {
      throw InvalidArgument(concat({where, " must be finite, got ", repr(value)}));
    }
    return QualitySetting(v);
  }
  const auto* n = std::get_if<std::int64_t>(&value);
  if (n == nullptr) {
    throw InvalidArgument(concat({where, " must be an int or None, got ", repr(value)}));
  }
  const std::int64_t low = spec.name == "ngram_n" ? 1 : spec.kind == Kind::kParam ? 0 : -kIntLimit;
  if (*n < low || *n > kIntLimit) {
    throw InvalidArgument(
        concat({where, " must be in [", std::to_string(low), ", 2**53], got ", repr(value)}));
  }
  return value;
}

[[noreturn]] void throw_unknown(std::string_view kind, std::string_view name,
                                std::span<const std::string_view> known) {
  const std::string message = concat({"QualityFilter: unknown ", kind, " '", name, "'"});
  if (const std::optional<std::string> best = did_you_mean(name, known)) {
    throw ConfigError(concat({message, "; did you mean '", *best, "'?"}));
  }
  std::string valid;
  for (const std::string_view k : known) valid.append(concat({valid.empty() ? "" : ", ", k}));
  throw ConfigError(concat({message, "; valid ", kind, "s: ", valid}));
}

// Documents per unit of work handed to a worker; quality metrics cost ~10-100 us per document,
// so small units balance well without contention on the counter.
constexpr std::size_t kBatchUnit = 16;

}  // namespace

struct QualityFilter::Impl {
  std::vector<Preset> presets;
  std::vector<std::string_view> preset_names;
  std::vector<QualitySetting> settings;  // by spec index
  QualityFilterOptions options;
  C4Options c4;
  // Settings read for every document, resolved once.
  std::int64_t ngram_n = 2;
  std::int64_t ngram_window = 0;
  std::int64_t short_line_length = 0;
  // The fineweb_max_newline_word_ratio threshold (-inf when the rule is off): fineweb_metrics
  // needs only to know whether the ratio passes it.
  double newline_word_ratio_passes_at = -std::numeric_limits<double>::infinity();
  // The gopher_max_top_{2..4}gram_char_ratio and gopher_max_dup_{5..10}gram_char_ratio
  // thresholds (-inf when a rule is off): gopher_repetition_metrics needs only to know whether
  // each ratio passes its threshold.
  NgramPassesAt ngram_passes_at = [] {
    NgramPassesAt at{};
    at.fill(-std::numeric_limits<double>::infinity());
    return at;
  }();
  // c4_pass counts sentences up to this (the c4_min_sentences threshold; 0 when the rule is
  // off): evaluate() only compares the count with the threshold.
  double c4_sentence_cap = 0;
  bool exclude_zero_punct = false;
  // The "language" preset: the rules as a LanguageFilter (nullopt when the preset is off).
  std::optional<LanguageFilter> language;
  bool language_rule = false;        // `languages` is on
  bool language_score_rule = false;  // `min_language_score` is on

  // The language preset's rules on one detection (LanguageFilter::judge, as a QualityRejection).
  std::optional<QualityRejection> check_language(const LanguageDetection& d) const {
    const std::optional<LanguageRejection> r = language->judge(d);
    if (!r) return std::nullopt;
    if (r->rule == "language") return QualityRejection{"languages", "language", d.score, 0, '!'};
    return QualityRejection{"min_language_score", "language_score", d.score, r->threshold, '<'};
  }

  const QualitySetting& setting(std::string_view name) const { return settings[spec_index(name)]; }
  std::int64_t int_setting(std::string_view name) const {
    return std::get<std::int64_t>(setting(name));
  }
  bool flag(std::string_view name) const { return std::get<bool>(setting(name)); }

  // Per-thread state: the document and its buffers.
  struct Scratch {
    Document doc;
    Metrics metrics{};
    C4Pass c4;
    std::vector<Token> tokens;
    std::string repaired;
    std::string rewritten;  // text after c4_lines, when later presets read it
  };

  // Scratch that earlier calls used, for the next ones: a call takes one per worker and gives
  // them back, so a document's buffers (grown to the largest document a worker has seen) are
  // not allocated, faulted in and unmapped again at every batch, which was 3-4% of a
  // gopher_repetition batch of 600 real documents (kernel time in page faults and munmap).
  // At most kSpareScratch are kept; taken and given back under the pool's mutex (filter_batch is
  // const and may run on several threads at once).
  static constexpr std::size_t kSpareScratch = 64;
  mutable internal::ObjectPool<Scratch> spare{kSpareScratch};

  // The rules that are on, per preset (c4 and c4_lines share theirs), in rule order.
  struct ActiveRule {
    std::size_t spec;
    double threshold;  // flags: 0 (the rule fails when its metric counts any line)
  };
  std::array<std::vector<ActiveRule>, kPresetNames.size()> active;

  const std::vector<ActiveRule>& rules_of(Preset preset) const {
    return active[static_cast<std::size_t>(owner(preset))];
  }

  std::optional<QualityRejection> check_rule(const ActiveRule& rule, const Metrics& values) const {
    const Spec& spec = specs()[rule.spec];
    const double value = values[spec.metric];
    bool failed = spec.comparison == '<' ? value < rule.threshold : value > rule.threshold;
    if (failed && exclude_zero_punct && value == 0 && spec.name == "fineweb_min_line_punct_ratio") {
      failed = false;
    }
    if (!failed) return std::nullopt;
    return QualityRejection{spec.name, metric_name(spec.metric), value, rule.threshold,
                            spec.comparison};
  }

  // Checks the rules from `next` on whose metric comes no later than `last`.
  std::optional<QualityRejection> check_up_to(const std::vector<ActiveRule>& rules,
                                              std::size_t& next, const Metrics& values,
                                              std::size_t last) const {
    for (; next < rules.size() && specs()[rules[next].spec].metric <= last; ++next) {
      if (auto rejection = check_rule(rules[next], values)) return rejection;
    }
    return std::nullopt;
  }

  std::optional<QualityRejection> check_named(Preset preset, std::string_view name,
                                              const Metrics& values) const {
    for (const ActiveRule& rule : rules_of(preset)) {
      if (specs()[rule.spec].name == name) return check_rule(rule, values);
    }
    return std::nullopt;  // switched off
  }

  // The first failing rule, or nullopt; with c4_lines, `kept_text` receives the final text.
  // `known_valid` skips the UTF-8 check (the pipeline's cleaner already guaranteed it).
  std::optional<QualityRejection> evaluate(std::string_view raw, Scratch& s,
                                           std::optional<std::string>* kept_text,
                                           bool known_valid = false) const {
    std::string_view text = raw;
    if (!known_valid && !is_valid_utf8(raw)) {
      s.repaired = repair_utf8(raw);
      text = s.repaired;
    }
    s.doc.reset(text);
    for (const Preset preset : presets) {
      const std::vector<ActiveRule>& rules = rules_of(preset);
      std::size_t next = 0;
      std::optional<QualityRejection> rejection;
      // Rules are checked as soon as their metrics exist; the first failure stops the work.
      const std::function<bool(Metric)> stop = [&](Metric last) {
        rejection = check_up_to(rules, next, s.metrics, last);
        return rejection.has_value();
      };
      switch (preset) {
        case Preset::kDefault:
          core_metrics(s.doc, ngram_n, ngram_window, s.metrics, &stop);
          break;
        case Preset::kGopherQuality:
          gopher_quality_metrics(s.doc, s.metrics);
          break;
        case Preset::kGopherRepetition:
          gopher_repetition_metrics(s.doc, s.metrics, &stop, &ngram_passes_at);
          break;
        case Preset::kFineWeb:
          fineweb_metrics(s.doc, short_line_length, s.metrics, &stop, newline_word_ratio_passes_at);
          break;
        case Preset::kLanguage:
          // The text is valid UTF-8 here (repaired above), as LanguageFilter's detection needs.
          if (language_rule || language_score_rule) {
            rejection = check_language(detect_language_utf8(s.doc.text()));
            if (rejection) return rejection;
          }
          continue;
        case Preset::kC4:
        case Preset::kC4Lines: {
          const bool lines = preset == Preset::kC4Lines;
          c4_pass(s.doc.text(), c4, c4_sentence_cap, lines, s.c4, s.tokens);
          c4_metrics(s.c4, s.metrics);
          // datatrove stops at the first line with lorem ipsum or a curly bracket.
          if (s.c4.first_drop == C4Pass::Drop::kLoremIpsum) {
            rejection = check_named(preset, "c4_lorem_ipsum", s.metrics);
          } else if (s.c4.first_drop == C4Pass::Drop::kCurlyBracket) {
            rejection = check_named(preset, "c4_curly_bracket", s.metrics);
          }
          if (!rejection) rejection = check_named(preset, "c4_min_sentences", s.metrics);
          if (rejection) return rejection;
          if (lines) {
            s.rewritten = join_kept_lines(s.c4.kept_lines);
            s.doc.reset(s.rewritten);
          }
          continue;
        }
      }
      if (!rejection) rejection = check_up_to(rules, next, s.metrics, kMetricCount);
      if (rejection) return rejection;
    }
    if (kept_text != nullptr) {
      // The line-removed text moves out (one copy per document, made by the join); a text that
      // no preset rewrote is copied once.
      const bool rewritten = !s.rewritten.empty() && s.doc.text().data() == s.rewritten.data();
      *kept_text = rewritten ? std::move(s.rewritten) : std::string(s.doc.text());
      s.rewritten.clear();
    }
    return std::nullopt;
  }
};

QualityFilter::QualityFilter(
    std::span<const std::string_view> presets,
    std::span<const std::pair<std::string_view, QualitySetting>> thresholds,
    QualityFilterOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.options = options;
  for (const std::string_view name : presets) {
    const auto it = std::find(kPresetNames.begin(), kPresetNames.end(), name);
    if (it == kPresetNames.end()) throw_unknown("preset", name, kPresetNames);
    const auto preset = static_cast<Preset>(it - kPresetNames.begin());
    if (std::find(m.presets.begin(), m.presets.end(), preset) == m.presets.end()) {
      m.presets.push_back(preset);
      m.preset_names.push_back(*it);
    }
  }
  if (m.presets.empty()) throw InvalidArgument("QualityFilter: at least one preset is needed");
  const std::vector<Spec>& t = specs();
  m.settings.reserve(t.size());
  for (const Spec& spec : t) m.settings.push_back(spec.default_value);
  std::vector<std::string_view> names;
  for (const Spec& spec : t) names.push_back(spec.name);
  for (const auto& [name, value] : thresholds) {
    const std::size_t k = spec_index(name);
    if (k == t.size()) throw_unknown("threshold", name, names);
    const Preset p = t[k].preset;
    const bool selected =
        std::any_of(m.presets.begin(), m.presets.end(), [&](Preset q) { return owner(q) == p; });
    if (!selected) {
      std::string list;
      for (const std::string_view s : m.preset_names) list.append(concat({"'", s, "', "}));
      const std::string_view preset = kPresetNames[static_cast<std::size_t>(p)];
      throw ConfigError(
          concat({"QualityFilter: threshold '", name, "' belongs to preset '", preset,
                  "', which is not selected; add it: presets=(", list, "'", preset, "')"}));
    }
    m.settings[k] = check_setting(t[k], value);
  }
  auto optional_int = [&](std::string_view name) -> std::optional<std::int64_t> {
    const QualitySetting& s = m.setting(name);
    if (std::holds_alternative<std::monostate>(s)) return std::nullopt;
    return std::get<std::int64_t>(s);
  };
  m.c4.max_word_length = optional_int("c4_max_word_length");
  m.c4.min_words_per_line = optional_int("c4_min_words_per_line");
  m.c4.terminal_punct = m.flag("c4_terminal_punct");
  m.c4.remove_citations = m.flag("c4_remove_citations");
  m.c4.lorem_ipsum = m.flag("c4_lorem_ipsum");
  m.c4.javascript = m.flag("c4_javascript");
  m.c4.curly_bracket = m.flag("c4_curly_bracket");
  m.c4.policy = m.flag("c4_policy");
  m.ngram_n = m.int_setting("ngram_n");
  m.ngram_window = m.int_setting("ngram_window");
  m.short_line_length = m.int_setting("fineweb_short_line_length");
  if (const auto* max_ratio = std::get_if<double>(&m.setting("fineweb_max_newline_word_ratio"))) {
    m.newline_word_ratio_passes_at = *max_ratio;
  }
  for (std::size_t n = 2; n <= 10; ++n) {
    const std::string name = concat(
        {n <= 4 ? "gopher_max_top_" : "gopher_max_dup_", std::to_string(n), "gram_char_ratio"});
    // (a bound on the ratio decides only a rule that fails above its threshold)
    if (specs()[spec_index(name)].comparison != '>') continue;
    if (const auto* max_ratio = std::get_if<double>(&m.setting(name))) {
      m.ngram_passes_at[n - 2] = *max_ratio;
    }
  }
  if (const auto min_sentences = optional_int("c4_min_sentences")) {
    m.c4_sentence_cap = static_cast<double>(*min_sentences);
  }
  m.exclude_zero_punct = m.flag("fineweb_line_punct_exclude_zero");
  if (std::find(m.presets.begin(), m.presets.end(), Preset::kLanguage) != m.presets.end()) {
    LanguageFilterOptions lang;
    lang.threads = options.threads;
    if (const auto* codes = std::get_if<QualityLanguages>(&m.setting("languages"))) {
      lang.languages = *codes;
      m.language_rule = !codes->empty();
    }
    const QualitySetting& score = m.setting("min_language_score");
    if (const auto* v = std::get_if<double>(&score)) {
      lang.min_score = *v;
      m.language_score_rule = true;
    } else if (const auto* per = std::get_if<QualityLanguageScores>(&score)) {
      for (const auto& [code, value] : *per) {
        if (code == "default") {
          lang.min_score = value;
        } else {
          lang.min_scores.emplace_back(code, value);
        }
      }
      m.language_score_rule = true;
    }
    m.language.emplace(std::move(lang));  // unknown codes: ConfigError with a suggestion
  }
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].metric == kNoMetric || t[k].preset == Preset::kLanguage) continue;
    const QualitySetting& s = m.settings[k];
    double threshold = 0;
    if (std::holds_alternative<std::monostate>(s)) continue;
    if (const auto* on = std::get_if<bool>(&s)) {
      if (!*on) continue;
    } else if (const auto* n = std::get_if<std::int64_t>(&s)) {
      threshold = static_cast<double>(*n);
    } else {
      threshold = std::get<double>(s);
    }
    m.active[static_cast<std::size_t>(t[k].preset)].push_back(Impl::ActiveRule{k, threshold});
  }
}

QualityFilter::~QualityFilter() = default;
QualityFilter::QualityFilter(QualityFilter&&) noexcept = default;
QualityFilter& QualityFilter::operator=(QualityFilter&&) noexcept = default;

std::optional<QualityRejection> QualityFilter::check(std::string_view document) const {
  const internal::ObjectPool<Impl::Scratch>::Lease scratch(impl_->spare);
  return impl_->evaluate(document, *scratch, nullptr);
}

std::vector<std::pair<std::string_view, double>> QualityFilter::metrics(
    std::string_view document) const {
  const Impl& m = *impl_;
  std::string repaired;
  std::string_view text = document;
  if (!is_valid_utf8(document)) {
    repaired = repair_utf8(document);
    text = repaired;
  }
  Document doc;
  doc.reset(text);
  Metrics values{};
  core_metrics(doc, m.ngram_n, m.ngram_window, values);
  gopher_quality_metrics(doc, values);
  gopher_repetition_metrics(doc, values);
  C4Pass pass;
  std::vector<Token> scratch;
  c4_pass(text, m.c4, std::numeric_limits<double>::infinity(), false, pass, scratch);
  c4_metrics(pass, values);
  fineweb_metrics(doc, m.short_line_length, values);
  std::vector<std::pair<std::string_view, double>> out;
  out.reserve(kMetricCount);
  for (std::size_t k = 0; k < kMetricCount; ++k) out.emplace_back(kMetricNames[k], values[k]);
  return out;
}

std::optional<LanguageDetection> QualityFilter::language_metrics(std::string_view document) const {
  if (!impl_->language) return std::nullopt;
  return detect_language(document);
}

std::string QualityFilter::clean_lines(std::string_view document) const {
  std::string repaired;
  std::string_view text = document;
  if (!is_valid_utf8(document)) {
    repaired = repair_utf8(document);
    text = repaired;
  }
  C4Pass pass;
  std::vector<Token> scratch;
  c4_pass(text, impl_->c4, 0, true, pass, scratch);
  return join_kept_lines(pass.kept_lines);
}

QualityBatchResult QualityFilter::filter_batch(std::span<const std::string_view> documents) const {
  return filter_batch(documents, {});
}

QualityBatchResult QualityFilter::filter_batch(std::span<const std::string_view> documents,
                                               std::span<const std::uint8_t> known_valid) const {
  const Impl& m = *impl_;
  if (!known_valid.empty() && known_valid.size() != documents.size()) {
    throw InvalidArgument("QualityFilter::filter_batch: " + std::to_string(known_valid.size()) +
                          " validity flags for " + std::to_string(documents.size()) + " documents");
  }
  const std::size_t n = documents.size();
  QualityBatchResult result;
  result.keep.assign(n, 0);
  result.reasons.assign(n, std::nullopt);
  result.has_texts =
      std::find(m.presets.begin(), m.presets.end(), Preset::kC4Lines) != m.presets.end();
  if (result.has_texts) result.texts.assign(n, std::nullopt);

  WorkerPool& pool = WorkerPool::shared();
  const unsigned workers = pool.workers_for(n, m.options.threads, kBatchUnit);
  // Per worker: the document and its buffers, from the filter's spares.
  std::vector<internal::ObjectPool<Impl::Scratch>::Lease> scratch;
  scratch.reserve(workers);
  for (unsigned w = 0; w < workers; ++w) scratch.emplace_back(m.spare);
  pool.run(n, workers, kBatchUnit, [&](std::size_t begin, std::size_t end, unsigned worker) {
    for (std::size_t i = begin; i < end; ++i) {
      std::optional<std::string>* text = result.has_texts ? &result.texts[i] : nullptr;
      const bool valid = !known_valid.empty() && known_valid[i] != 0;
      result.reasons[i] = m.evaluate(documents[i], *scratch[worker], text, valid);
      result.keep[i] = result.reasons[i].has_value() ? 0 : 1;
    }
  });

  const std::vector<std::string_view> active = rules();
  std::vector<std::uint64_t> per_rule(active.size(), 0);
  std::uint64_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!result.reasons[i]) {
      ++kept;
      continue;
    }
    const auto it = std::find(active.begin(), active.end(), result.reasons[i]->rule);
    if (it != active.end()) ++per_rule[static_cast<std::size_t>(it - active.begin())];
  }
  result.counters.emplace_back("total", n);
  result.counters.emplace_back("kept", kept);
  result.counters.emplace_back("rejected", n - kept);
  for (std::size_t k = 0; k < active.size(); ++k)
    result.counters.emplace_back(active[k], per_rule[k]);
  return result;
}

const std::vector<std::string_view>& QualityFilter::presets() const noexcept {
  return impl_->preset_names;
}

std::vector<std::pair<std::string_view, QualitySetting>> QualityFilter::thresholds() const {
  std::vector<std::pair<std::string_view, QualitySetting>> out;
  const std::vector<Spec>& t = specs();
  for (const Preset preset : impl_->presets) {
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (t[k].preset != owner(preset)) continue;
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const auto& entry) { return entry.first == t[k].name; });
      if (!seen) out.emplace_back(t[k].name, impl_->settings[k]);
    }
  }
  return out;
}

std::vector<std::string_view> QualityFilter::rules() const {
  std::vector<std::string_view> out;
  const std::vector<Spec>& t = specs();
  for (const Preset preset : impl_->presets) {
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (t[k].preset != owner(preset) || t[k].metric == kNoMetric) continue;
      const QualitySetting& s = impl_->settings[k];
      if (std::holds_alternative<std::monostate>(s)) continue;
      if (const auto* on = std::get_if<bool>(&s); on != nullptr && !*on) continue;
      if (const auto* codes = std::get_if<QualityLanguages>(&s); codes && codes->empty()) continue;
      if (std::find(out.begin(), out.end(), t[k].name) == out.end()) out.push_back(t[k].name);
    }
  }
  return out;
}

const QualityFilterOptions& QualityFilter::options() const noexcept { return impl_->options; }

std::vector<std::pair<std::string_view, std::vector<std::pair<std::string_view, QualitySetting>>>>
QualityFilter::preset_defaults() {
  std::vector<std::pair<std::string_view, std::vector<std::pair<std::string_view, QualitySetting>>>>
      out;
  for (std::size_t p = 0; p < kPresetNames.size(); ++p) {
    std::vector<std::pair<std::string_view, QualitySetting>> settings;
    for (const Spec& spec : specs()) {
      if (spec.preset == owner(static_cast<Preset>(p))) {
        settings.emplace_back(spec.name, spec.default_value);
      }
    }
    out.emplace_back(kPresetNames[p], std::move(settings));
  }
  return out;
}

std::span<const std::string_view> QualityFilter::metric_names() { return kMetricNames; }

std::vector<std::string> QualityFilter::tokenize(std::string_view document) {
  std::string repaired;
  std::string_view text = document;
  if (!is_valid_utf8(document)) {
    repaired = repair_utf8(document);
    text = repaired;
  }
  Document doc;
  doc.reset(text);
  std::vector<std::string> out;
  for (const std::string_view t : doc.tokens()) out.emplace_back(t);
  return out;
}

}  // namespace luminamoon::data
