// LanguageFilter: CLD2 detection per document and the keep/drop rule (docs/language.md).
#include "luminamoon/data/language/language_filter.h"

#include <cld2/public/compact_lang_det.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <string>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/common/worker_pool.h"

namespace luminamoon::data {
namespace {

namespace u8 = utf8_internal;

// CLD2 takes an int length: longer documents are measured on their first kMaxBytes bytes, cut
// back to a character boundary (the fallback cuts the same way).
constexpr std::size_t kMaxBytes = std::size_t{1} << 30;
constexpr std::size_t kBatchUnit = 64;
// CLD2's script scanner reads past a character that ends at the end of its input (one byte in
// the cases known; docs/language.md). Every call gets a copy followed by this many zero bytes, so
// a document at the end of a mapping cannot fault and the byte after it cannot change the answer.
// Bytes after a Python `bytes` are a NUL too, so the fallback passes its buffer plus padding.
constexpr std::size_t kCld2Padding = 16;

// The padded copy. Documents up to kReusedBytes share one buffer per thread; a longer one gets
// its own, so a single huge document does not pin its size in every worker.
constexpr std::size_t kReusedBytes = std::size_t{1} << 20;

class PaddedCopy {
 public:
  explicit PaddedCopy(std::string_view text)
      : buffer_(text.size() <= kReusedBytes ? reused() : own_) {
    buffer_.assign(text.data(), text.size());
    buffer_.append(kCld2Padding, '\0');
  }
  PaddedCopy(const PaddedCopy&) = delete;
  PaddedCopy& operator=(const PaddedCopy&) = delete;
  ~PaddedCopy() = default;
  const char* data() const { return buffer_.data(); }

 private:
  static std::string& reused() {
    thread_local std::string buffer;
    return buffer;
  }
  std::string own_;
  std::string& buffer_;
};

std::vector<std::string_view> make_codes() {
  std::vector<std::string_view> codes;
  for (int i = 0; i < CLD2::NUM_LANGUAGES; ++i) {
    const char* code = CLD2::LanguageCode(static_cast<CLD2::Language>(i));
    if (code == nullptr || *code == '\0') continue;
    const std::string_view c(code);
    if (std::find(codes.begin(), codes.end(), c) == codes.end()) codes.push_back(c);
  }
  return codes;
}

const std::vector<std::string_view>& codes() {
  static const std::vector<std::string_view> all = make_codes();
  return all;
}

void check_score(std::string_view what, double value) {
  if (!(value >= 0.0 && value <= 1.0)) {
    throw InvalidArgument("LanguageFilter: " + std::string(what) + " must be in [0, 1], got " +
                          std::to_string(value));
  }
}

void check_code(std::string_view what, std::string_view code) {
  const std::vector<std::string_view>& known = codes();
  if (std::find(known.begin(), known.end(), code) != known.end()) return;
  std::string message = "LanguageFilter: unknown language code '" + std::string(code) + "' in " +
                        std::string(what) + " (CLD2 codes, e.g. 'en', 'de', 'zh', 'zh-Hant')";
  if (auto best = did_you_mean(code, known)) message += "; did you mean '" + *best + "'?";
  throw ConfigError(message);
}

}  // namespace

LanguageDetection detect_language_utf8(std::string_view text) {
  std::size_t size = text.size();
  if (size > kMaxBytes) {
    size = kMaxBytes;
    while (size > 0 && u8::is_continuation(static_cast<std::uint8_t>(text[size]))) --size;
  }
  CLD2::Language language3[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE,
                                 CLD2::UNKNOWN_LANGUAGE};
  int percent3[3] = {0, 0, 0};
  const PaddedCopy padded(text.substr(0, size));
  int text_bytes = 0;
  bool reliable = false;
  const CLD2::Language top = CLD2::DetectLanguageSummary(padded.data(), static_cast<int>(size),
                                                         /*is_plain_text=*/true, language3,
                                                         percent3, &text_bytes, &reliable);
  // CLD2 answers ENGLISH for empty or indeterminate text while its top three stay unknown: such
  // a guess is reported as "un" with score 0, like text without letters.
  LanguageDetection d;
  d.language = CLD2::LanguageCode(CLD2::UNKNOWN_LANGUAGE);
  for (int k = 0; k < 3 && top != CLD2::UNKNOWN_LANGUAGE; ++k) {
    if (language3[k] == top) {
      d.language = CLD2::LanguageCode(top);
      d.score = percent3[k] / 100.0;
      break;
    }
  }
  d.reliable = reliable;
  return d;
}

LanguageDetection detect_language(std::string_view document) {
  if (u8::is_valid(document)) return detect_language_utf8(document);
  return detect_language_utf8(u8::repaired(document));
}

std::span<const std::string_view> known_language_codes() { return codes(); }

std::string_view language_model_version() { return CLD2::DetectLanguageVersion(); }

LanguageFilter::LanguageFilter(LanguageFilterOptions options) : options_(std::move(options)) {
  check_score("min_score", options_.min_score);
  for (const std::string& code : options_.languages) check_code("languages", code);
  for (std::size_t i = 0; i < options_.min_scores.size(); ++i) {
    const auto& [code, score] = options_.min_scores[i];
    check_code("min_scores", code);
    check_score("min_scores['" + code + "']", score);
    for (std::size_t j = 0; j < i; ++j) {
      if (options_.min_scores[j].first == code) {
        throw InvalidArgument("LanguageFilter: min_scores gives '" + code + "' twice");
      }
    }
  }
}

double LanguageFilter::min_score_for(std::string_view language) const {
  for (const auto& [code, score] : options_.min_scores) {
    if (code == language) return score;
  }
  return options_.min_score;
}

std::optional<LanguageRejection> LanguageFilter::judge(const LanguageDetection& d) const {
  const std::vector<std::string>& wanted = options_.languages;
  if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), d.language) == wanted.end()) {
    return LanguageRejection{"language", d.language, d.score, std::nan("")};
  }
  const double threshold = min_score_for(d.language);
  if (d.score < threshold)
    return LanguageRejection{"min_language_score", d.language, d.score, threshold};
  return std::nullopt;
}

std::optional<LanguageRejection> LanguageFilter::check(std::string_view document) const {
  return judge(detect(document));
}

LanguageBatchResult LanguageFilter::filter_batch(std::span<const std::string_view> documents,
                                                 std::span<const std::uint8_t> known_valid) const {
  if (!known_valid.empty() && known_valid.size() != documents.size()) {
    throw InvalidArgument("LanguageFilter::filter_batch: " + std::to_string(known_valid.size()) +
                          " validity flags for " + std::to_string(documents.size()) + " documents");
  }
  const std::size_t n = documents.size();
  LanguageBatchResult result;
  result.keep.assign(n, 0);
  result.reasons.assign(n, std::nullopt);
  result.detections.assign(n, LanguageDetection{});
  WorkerPool& pool = WorkerPool::shared();
  const unsigned workers = pool.workers_for(n, options_.threads, kBatchUnit);
  pool.run(n, workers, kBatchUnit, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t i = begin; i < end; ++i) {
      const bool valid = !known_valid.empty() && known_valid[i] != 0;
      result.detections[i] =
          valid ? detect_language_utf8(documents[i]) : detect_language(documents[i]);
      result.reasons[i] = judge(result.detections[i]);
      result.keep[i] = result.reasons[i].has_value() ? 0 : 1;
    }
  });
  std::uint64_t kept = 0;
  std::uint64_t by_language = 0;
  std::uint64_t by_score = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!result.reasons[i]) {
      ++kept;
    } else if (result.reasons[i]->rule == "language") {
      ++by_language;
    } else {
      ++by_score;
    }
  }
  result.counters = {{"total", n},
                     {"kept", kept},
                     {"rejected", n - kept},
                     {"language", by_language},
                     {"min_language_score", by_score}};
  return result;
}

void LanguageFilter::apply(DocumentBatch& batch, StageCounters& counters) const {
  const std::vector<std::size_t> kept = batch.kept_indices();
  std::vector<std::uint8_t> valid;
  if (!batch.valid_utf8.empty()) {
    valid.reserve(kept.size());
    for (const std::size_t i : kept) valid.push_back(batch.valid_utf8[i]);
  }
  const LanguageBatchResult result = filter_batch(batch.texts_at(kept), valid);
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (const std::optional<LanguageRejection>& r = result.reasons[k]) {
      batch.reject(kept[k], PipelineStage::kLanguage, r->rule, r->score, r->threshold);
    }
  }
  for (const auto& [name, value] : result.counters) counters.emplace_back(name, value);
}

}  // namespace luminamoon::data
