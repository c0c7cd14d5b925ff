// PIIMasker: finds and masks e-mail addresses, IP addresses, API keys/secrets and credit-card
// numbers (SPEC 4). The exact matching rules, token boundaries and the overlap resolution are
// documented in docs/pii.md; the pure-Python fallback implements the same rules with `re`.
//
// Contract notes:
//  * input is bytes, normally UTF-8; every rule is defined over ASCII characters and any byte
//    >= 0x80 is "other text", so invalid UTF-8 never changes what is found;
//  * offsets: byte_start/byte_end index the input bytes; start/end count code points of the input
//    decoded the way CPython's bytes.decode("utf-8", "replace") does (maximal-subpart rule);
//  * masked output is always valid UTF-8: invalid input sequences become U+FFFD by that same rule;
//  * spans are sorted and never overlap: leftmost-longest across categories, ties broken by
//    category order (EMAIL, IP_ADDRESS, API_KEY, CREDIT_CARD);
//  * results do not depend on the thread count or on the SIMD instruction set;
//  * thread-safe: find(), find_batch_into() and splice() are const; mask(), mask_batch() and
//    find_batch() only share the statistics, under a mutex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

enum class PiiCategory : std::uint8_t { kEmail = 0, kIpAddress = 1, kApiKey = 2, kCreditCard = 3 };
inline constexpr std::size_t kPiiCategoryCount = 4;

// "EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD".
std::string_view pii_category_name(PiiCategory category) noexcept;
// The category of that exact name; nullopt for anything else.
std::optional<PiiCategory> pii_category_from_name(std::string_view name) noexcept;
// The default replacement tag: "<" + name + ">".
std::string_view pii_default_tag(PiiCategory category) noexcept;

struct PiiMaskerOptions {
  std::array<bool, kPiiCategoryCount> enabled = {true, true, true, true};
  // Private, loopback, link-local, documentation, multicast and reserved addresses are not
  // personal data and are everywhere in code and docs, so by default they are left alone.
  bool mask_private_ips = false;
  std::array<std::string, kPiiCategoryCount> tags = {"<EMAIL>", "<IP_ADDRESS>", "<API_KEY>",
                                                     "<CREDIT_CARD>"};
  unsigned threads = 0;  // mask_batch workers; 0 = hardware concurrency
};

struct PiiSpan {
  PiiCategory category;
  std::size_t byte_start;
  std::size_t byte_end;
  std::size_t start;  // code points
  std::size_t end;
  friend bool operator==(const PiiSpan&, const PiiSpan&) = default;
};

using PiiCounts = std::array<std::uint64_t, kPiiCategoryCount>;

// One span to replace, by byte offsets only (no code-point offsets: counting them costs a pass).
struct PiiMatch {
  std::size_t byte_start;
  std::size_t byte_end;
  PiiCategory category;
  friend bool operator==(const PiiMatch&, const PiiMatch&) = default;
};

// The matches of a batch, for callers that build the masked texts themselves (the Python binding
// writes each output str straight from the input and the matches, without an intermediate
// std::string). Document i's matches are matches[first[i], first[i + 1]), sorted, never
// overlapping: exactly the spans mask() replaces. valid_utf8[i] says whether document i is
// well-formed UTF-8 (1 when the caller said so, see known_valid_utf8); document i needs a change
// iff it has a match or is not valid.
struct PiiBatchMatches {
  std::vector<PiiMatch> matches;
  std::vector<std::size_t> first;
  std::vector<std::uint8_t> valid_utf8;

  std::size_t size() const noexcept { return valid_utf8.size(); }
  std::span<const PiiMatch> of(std::size_t i) const noexcept {
    return std::span<const PiiMatch>(matches).subspan(first[i], first[i + 1] - first[i]);
  }
  bool changed(std::size_t i) const noexcept {
    return first[i + 1] != first[i] || valid_utf8[i] == 0;
  }
};

struct PiiStats {
  std::uint64_t documents = 0;
  std::uint64_t bytes = 0;
  PiiCounts counts{};
};

class PiiMasker {
 public:
  // Throws InvalidArgument when a tag is not valid UTF-8.
  explicit PiiMasker(PiiMaskerOptions options = {});

  // Every span to mask in `text`, sorted by position.
  std::vector<PiiSpan> find(std::string_view text) const;

  // Writes the masked text to `out` (replacing its contents) and returns true, or returns false
  // and leaves `out` untouched when the output would equal the input (no span, valid UTF-8).
  // `counts` receives the spans masked per category. Does not touch the statistics.
  // `known_valid_utf8` skips the UTF-8 check (the caller guarantees it, e.g. text from a str).
  bool mask_into(std::string_view text, std::string& out, PiiCounts& counts,
                 bool known_valid_utf8 = false) const;

  // mask_into, then updates counts() and stats(); returns whether `out` was written.
  bool mask(std::string_view text, std::string& out, bool known_valid_utf8 = false);
  // The masked text (valid UTF-8); updates counts() and stats().
  std::string mask(std::string_view text);

  // Masks every document on options().threads workers. changed[i] = 0 means out[i] was left
  // empty because document i needs no change (see mask_into). Returns the batch totals and
  // updates counts() and stats(). out and changed are resized to texts.size(). known_valid_utf8
  // is empty or has one flag per document (see mask_into).
  PiiCounts mask_batch(std::span<const std::string_view> texts, std::vector<std::string>& out,
                       std::vector<std::uint8_t>& changed,
                       std::span<const std::uint8_t> known_valid_utf8 = {});

  // mask_batch without touching counts() and stats() (the FusedPipeline keeps its own).
  PiiCounts mask_batch_into(std::span<const std::string_view> texts, std::vector<std::string>& out,
                            std::vector<std::uint8_t>& changed,
                            std::span<const std::uint8_t> known_valid_utf8 = {}) const;

  // The matches of every document on options().threads workers (see PiiBatchMatches), with
  // the same rules, threads and validity flags as mask_batch; returns the batch totals and
  // updates counts() and stats() as mask_batch does. splice() turns them into mask_batch's text.
  PiiCounts find_batch(std::span<const std::string_view> texts, PiiBatchMatches& out,
                       std::span<const std::uint8_t> known_valid_utf8 = {});
  // find_batch without touching counts() and stats().
  PiiCounts find_batch_into(std::span<const std::string_view> texts, PiiBatchMatches& out,
                            std::span<const std::uint8_t> known_valid_utf8 = {}) const;

  // Writes `text` with each of `matches` (sorted, non-overlapping, as find_batch gives them)
  // replaced by its category's tag to `out` (replacing its contents); invalid UTF-8 outside the
  // matches becomes U+FFFD unless `valid_utf8`. mask_into's output is exactly this.
  void splice(std::string_view text, std::span<const PiiMatch> matches, bool valid_utf8,
              std::string& out) const;
  // splice() of well-formed UTF-8 written to `out`, which must hold spliced_size() bytes (the
  // binding writes straight into a new str's buffer).
  std::size_t spliced_size(std::string_view text, std::span<const PiiMatch> matches) const;
  void splice_valid_into(std::string_view text, std::span<const PiiMatch> matches, char* out) const;

  // The pipeline stage: masks every kept document of `batch` in place (never drops one) and
  // appends "documents", "documents_changed" and the per-category counts to `counters`.
  // Leaves counts() and stats() alone.
  void apply(DocumentBatch& batch, StageCounters& counters) const;

  // Per-category counts of the last mask() or mask_batch() call (zeros before the first).
  PiiCounts counts() const;
  // Cumulative over every mask() and mask_batch() call since construction or reset_stats().
  PiiStats stats() const;
  void reset_stats();

  const PiiMaskerOptions& options() const noexcept { return options_; }

 private:
  void record(std::uint64_t documents, std::uint64_t bytes, const PiiCounts& counts);

  PiiMaskerOptions options_;
  mutable std::mutex mutex_;
  PiiCounts last_counts_{};
  PiiStats stats_{};
};

// Code points of `bytes` decoded like CPython's bytes.decode("utf-8", "replace"): every
// well-formed sequence is one, and so is every maximal subpart of an ill-formed one.
std::size_t utf8_code_points(std::string_view bytes) noexcept;

// Code points of well-formed UTF-8 (the caller guarantees it, e.g. the UTF-8 form of a str): the
// bytes that are not continuation bytes. utf8_code_points gives the same count on such input.
std::size_t utf8_code_points_of_valid(std::string_view bytes) noexcept;

// Appends `bytes` to `out` with every ill-formed sequence replaced by U+FFFD (same rule).
void append_utf8_repaired(std::string_view bytes, std::string& out);

// Whether `bytes` is well-formed UTF-8.
bool utf8_is_valid(std::string_view bytes) noexcept;

}  // namespace luminamoon::data
