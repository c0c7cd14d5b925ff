// TextCleaner: stage 1 of the pipeline. UTF-8 repair, newline and control-character
// normalisation, whitespace collapsing and stripping, optional NFC (SPEC 4; the exact rules,
// character sets and counters are in docs/cleaner.md).
//
// The steps are defined as a sequence of whole-text rewrites applied in this order (each can be
// switched off; a step sees the output of the previous ones):
//   1. repair_utf8            invalid UTF-8 -> U+FFFD, one per maximal invalid subpart (CPython's
//                             bytes.decode("utf-8", "replace")); off: invalid input is an error
//   2. normalize_newlines     CR LF and lone CR -> LF
//   3. remove_controls        C0 except TAB and LF, DEL, C1 (U+0080..U+009F) removed
//   4. collapse_whitespace    each run of horizontal whitespace -> one space
//   5. strip_trailing_spaces  horizontal whitespace before LF or the end of the text removed
//   6. limit_newlines         3 or more consecutive LF -> 2
//   7. strip                  leading and trailing horizontal whitespace and LF removed
//   8. nfc                    Unicode NFC (utf8proc), off by default
// Horizontal whitespace = TAB, SPACE, U+00A0, U+1680, U+2000..U+200A, U+202F, U+205F, U+3000.
// The implementation fuses steps 1-7 into one pass over the bytes; the SIMD kernels of
// src/cleaner/ copy the stretches that no step changes, so the output never depends on the ISA.
//
// Contract notes:
//  * the output is always valid UTF-8, and cleaning is idempotent: clean(clean(x)) == clean(x);
//  * with repair_utf8 off, invalid UTF-8 throws MalformedInputError (a ValueError in Python)
//    naming the byte offset (and the document index in a batch); nothing is counted for a
//    document or batch that throws;
//  * thread-safe: clean/clean_batch may run concurrently; counters are updated under a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

struct TextCleanerOptions {
  bool repair_utf8 = true;
  bool normalize_newlines = true;
  bool remove_controls = true;
  bool collapse_whitespace = true;
  bool strip_trailing_spaces = true;
  bool limit_newlines = true;
  bool strip = true;
  bool nfc = false;
  unsigned threads = 0;  // workers for clean_batch; 0 = hardware concurrency
};

// What the steps changed, cumulative. Character counts are in code points of the text as the
// step sees it (e.g. trailing_spaces_removed counts 1 per collapsed run when collapsing is on).
struct CleanStats {
  std::uint64_t documents = 0;
  std::uint64_t documents_changed = 0;  // output bytes != input bytes
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t invalid_sequences_replaced = 0;  // U+FFFD inserted by the repair
  std::uint64_t invalid_bytes_replaced = 0;      // input bytes those U+FFFD replaced
  std::uint64_t newlines_normalized = 0;         // CR LF or lone CR -> LF (one per CR)
  std::uint64_t controls_removed = 0;            // code points removed
  std::uint64_t whitespace_runs_collapsed = 0;   // runs that were not already a single space
  std::uint64_t trailing_spaces_removed = 0;     // code points removed
  std::uint64_t newline_runs_limited = 0;        // runs of 3+ LF shortened to 2
  std::uint64_t whitespace_stripped = 0;         // code points removed by strip
  std::uint64_t nfc_changed_documents = 0;

  CleanStats& operator+=(const CleanStats& other) noexcept;
  bool operator==(const CleanStats&) const = default;

  // Calls f(name, value) for every counter, in declaration order (names as in Python's stats()).
  template <typename F>
  void for_each(F&& f) const {
    f("documents", documents);
    f("documents_changed", documents_changed);
    f("bytes_in", bytes_in);
    f("bytes_out", bytes_out);
    f("invalid_sequences_replaced", invalid_sequences_replaced);
    f("invalid_bytes_replaced", invalid_bytes_replaced);
    f("newlines_normalized", newlines_normalized);
    f("controls_removed", controls_removed);
    f("whitespace_runs_collapsed", whitespace_runs_collapsed);
    f("trailing_spaces_removed", trailing_spaces_removed);
    f("newline_runs_limited", newline_runs_limited);
    f("whitespace_stripped", whitespace_stripped);
    f("nfc_changed_documents", nfc_changed_documents);
  }
};

class TextCleaner {
 public:
  // Resolves the kernels of the live ISA (LUMINAMOON_SIMD), so a bad override throws ConfigError
  // here rather than on first use.
  explicit TextCleaner(TextCleanerOptions options = {});

  // One document: UTF-8 (possibly invalid) in, clean valid UTF-8 out.
  std::string clean(std::string_view text);

  // Every document, cleaned on up to `threads` workers; out[i] is texts[i] cleaned, whatever the
  // thread count. With repair_utf8 off, the invalid document with the smallest index throws.
  std::vector<std::string> clean_batch(std::span<const std::string_view> texts);
  // The same, leaving the cumulative counters alone: this batch's counters go to `batch_stats`.
  std::vector<std::string> clean_batch(std::span<const std::string_view> texts,
                                       CleanStats& batch_stats) const;

  // The pipeline stage: cleans every kept document of `batch` in place (the texts become valid
  // UTF-8), drops documents that clean to nothing (rule "empty"), and appends this batch's
  // counters (the CleanStats names, then "dropped_empty") to `counters`. Leaves stats() alone.
  void apply(DocumentBatch& batch, StageCounters& counters) const;

  CleanStats stats() const;
  void reset_stats();
  const TextCleanerOptions& options() const noexcept { return options_; }

 private:
  TextCleanerOptions options_;
  mutable std::mutex mutex_;
  CleanStats stats_;
};

}  // namespace luminamoon::data
