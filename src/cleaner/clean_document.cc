// The fused cleaning pass: steps 1-7 of text_cleaner.h in one left-to-right scan, then NFC.
//
// Steps 1-7 are specified as whole-text rewrites (docs/cleaner.md gives the Python `re` form of
// each); this file computes the same result and the same counters in one pass. The input is
// decoded code point by code point (repairing as CPython does) and each code point is classified
// as LF, horizontal whitespace (H), a removed control, or a "word" character (everything else).
// Whitespace is written to the output eagerly and taken back when a later character shows it
// must go: a run of H is truncated when an LF or the end follows (trailing spaces), the leading
// gap is dropped at the first word character and the trailing gap at the end (strip).
//
// Fast path: in a "neutral" state (the last character was a word character, nothing pending),
// every byte the clean_prefix kernel calls plain is copied unchanged by every step, so the
// prefix is memcpy'd. Correctness never depends on the prefix length: the prefix is cut back to
// a character boundary and off a final space or LF, and the state machine handles the rest.
#include "cleaner/internal/clean_document.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "cleaner/internal/nfc.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"

namespace luminamoon::data::cleaner_internal {
namespace {

// Validate ahead in chunks that stay in L1/L2 while clean_prefix and memcpy read them again.
constexpr std::size_t kValidateChunk = 32 * 1024;
// After the validator finds an invalid sequence at once, let the scalar decoder (which validates
// anyway) run this many bytes before asking again: random bytes would otherwise cost a kernel
// call per byte.
constexpr std::size_t kRevalidateDistance = 64;

constexpr std::uint8_t kReplacement[3] = {0xEF, 0xBF, 0xBD};  // U+FFFD

// The per-code-point step is the common maximal-subpart decoder (common/internal/utf8.h). This
// pass keeps its own loop around it instead of utf8_internal::for_each_code_point: the loop is
// interleaved with the SIMD fast path (validate ahead, memcpy plain prefixes) and must stop at the
// first invalid byte with the reason when repair_utf8 is off.
using utf8_internal::decode_multibyte;
using utf8_internal::Decoded;
using utf8_internal::Utf8Error;

// Horizontal whitespace above ASCII: the Unicode space separators (Zs) other than U+0020.
inline bool is_unicode_space(std::uint32_t cp) {
  return cp == 0x00A0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

inline std::size_t count_code_points(const char* data, std::size_t size) {
  return utf8_internal::count_valid_code_points(std::string_view(data, size));
}

// A growable output buffer: std::string storage written through a raw pointer, so the per-byte
// path is a bounds check and a store.
class Output {
 public:
  explicit Output(std::size_t expected) : buffer_(expected + 16, '\0'), data_(buffer_.data()) {}

  std::size_t size() const noexcept { return size_; }
  const char* data() const noexcept { return data_; }
  void truncate(std::size_t size) noexcept { size_ = size; }
  void erase_front(std::size_t n) noexcept {
    std::memmove(data_, data_ + n, size_ - n);
    size_ -= n;
  }

  void put(char c) {
    if (size_ == buffer_.size()) grow(1);
    data_[size_++] = c;
  }
  void put(const std::uint8_t* bytes, std::size_t n) {
    if (buffer_.size() - size_ < n) grow(n);
    std::memcpy(data_ + size_, bytes, n);
    size_ += n;
  }

  std::string release() {
    // The buffer was sized for the input; do not let a mostly-removed document (megabytes of
    // whitespace) keep that capacity alive in the caller's vector.
    const bool oversized = size_ < buffer_.size() / 2;
    buffer_.resize(size_);
    if (oversized) buffer_.shrink_to_fit();
    return std::move(buffer_);
  }

 private:
  void grow(std::size_t extra) {
    buffer_.resize(std::max(buffer_.size() * 2, size_ + extra));
    data_ = buffer_.data();
  }

  std::string buffer_;
  char* data_;
  std::size_t size_ = 0;
};

std::string describe(std::size_t index) {
  return index == kNoIndex ? std::string("text") : "texts[" + std::to_string(index) + "]";
}

[[noreturn]] void throw_invalid_utf8(std::size_t index, std::size_t offset, std::uint8_t byte,
                                     Utf8Error error) {
  // The reasons are CPython's UnicodeDecodeError reasons, so both backends say the same thing.
  const char* reason = error == Utf8Error::kInvalidStart          ? "invalid start byte"
                       : error == Utf8Error::kInvalidContinuation ? "invalid continuation byte"
                                                                  : "unexpected end of data";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(byte));
  throw MalformedInputError(
      "TextCleaner: " + describe(index) + " is not valid UTF-8: " + reason + " at byte offset " +
      std::to_string(offset) + " (byte " + hex +
      "); pass repair_utf8=True to replace each invalid sequence with U+FFFD");
}

class DocumentCleaner {
 public:
  DocumentCleaner(std::string_view text, const TextCleanerOptions& options, const Kernels& kernels,
                  CleanStats& stats, std::size_t index)
      : p_(reinterpret_cast<const std::uint8_t*>(text.data())),
        n_(text.size()),
        opt_(options),
        kernels_(kernels),
        stats_(stats),
        index_(index),
        out_(text.size()) {}

  std::string run() {
    std::size_t i = 0;
    std::size_t valid_end = 0;
    std::size_t validate_from = 0;
    while (i < n_) {
      if (neutral()) {
        if (i >= valid_end && i >= validate_from) {
          const std::size_t chunk = std::min(n_ - i, kValidateChunk);
          valid_end = i + kernels_.utf8_valid_prefix(p_ + i, chunk);
          if (valid_end == i) validate_from = i + kRevalidateDistance;
        }
        if (i < valid_end) {
          const std::size_t m = settle(i, kernels_.clean_prefix(p_ + i, valid_end - i), valid_end);
          if (m != 0) {
            out_.put(p_ + i, m);
            i += m;
            seen_word_ = true;
            last_word_end_ = out_.size();
            if (i == n_) break;
          }
        }
      }
      i = step(i);
    }
    finish();
    return out_.release();
  }

 private:
  // Nothing pending: a plain byte would pass every step unchanged from here.
  bool neutral() const noexcept {
    return !prev_cr_ && !in_run_ && newlines_ == 0 && (seen_word_ || !opt_.strip);
  }

  // The part of a kernel prefix this machine may copy blindly: whole characters, not ending in
  // a space or LF (a plain space/LF is one followed by a word byte, so if the kernel stopped
  // right after one, the state machine must see it).
  std::size_t settle(std::size_t i, std::size_t m, std::size_t end) const noexcept {
    m = std::min(m, end - i);
    while (m > 0 && i + m < end && (p_[i + m] & 0xC0u) == 0x80u) --m;
    if (m > 0 && (p_[i + m - 1] == ' ' || p_[i + m - 1] == '\n')) --m;
    return m;
  }

  // One character (or one maximal invalid subpart) at i; returns the next offset.
  std::size_t step(std::size_t i) {
    const std::uint8_t b = p_[i];
    if (b < 0x80) {
      ascii(b);
      return i + 1;
    }
    const Decoded d = decode_multibyte(p_ + i, n_ - i);
    prev_cr_ = false;
    if (d.error != Utf8Error::kNone) {
      if (!opt_.repair_utf8) throw_invalid_utf8(index_, i, b, d.error);
      ++stats_.invalid_sequences_replaced;
      stats_.invalid_bytes_replaced += d.length;
      word(kReplacement, 3);
    } else if (d.code_point <= 0x9F) {  // C1 control
      if (opt_.remove_controls) {
        ++stats_.controls_removed;
      } else {
        word(p_ + i, d.length);
      }
    } else if (is_unicode_space(d.code_point)) {
      space(d.code_point, p_ + i, d.length);
    } else {
      word(p_ + i, d.length);
    }
    return i + d.length;
  }

  void ascii(std::uint8_t b) {
    if (b >= 0x21 && b != 0x7F) {
      prev_cr_ = false;
      word(&b, 1);
    } else if (b == ' ' || b == '\t') {
      prev_cr_ = false;
      space(b, &b, 1);
    } else if (b == '\n') {
      if (prev_cr_) {
        prev_cr_ = false;  // the LF of a CR LF: the CR already became this line's LF
      } else {
        newline();
      }
    } else if (b == '\r' && opt_.normalize_newlines) {
      ++stats_.newlines_normalized;
      newline();
      prev_cr_ = true;
    } else {  // other C0, DEL, and CR when newlines are not normalised
      prev_cr_ = false;
      if (opt_.remove_controls) {
        ++stats_.controls_removed;
      } else {
        word(&b, 1);
      }
    }
  }

  void word(const std::uint8_t* bytes, std::size_t length) {
    in_run_ = false;
    newlines_ = 0;
    if (!seen_word_) {
      seen_word_ = true;
      if (opt_.strip && out_.size() != 0) strip_leading_gap();
    }
    out_.put(bytes, length);
    last_word_end_ = out_.size();
  }

  // The output so far is the leading gap (whitespace and LF only). Collapse removes all of it;
  // the other modes remove the blank lines, up to and including the last LF, and keep the first
  // line's indentation.
  void strip_leading_gap() {
    std::size_t cut = out_.size();
    if (opt_.whitespace != Whitespace::kCollapse) {
      while (cut > 0 && out_.data()[cut - 1] != '\n') --cut;
    }
    if (cut == 0) return;
    stats_.whitespace_stripped += count_code_points(out_.data(), cut);
    out_.erase_front(cut);
  }

  void space(std::uint32_t cp, const std::uint8_t* bytes, std::size_t length) {
    if (!in_run_) {
      in_run_ = true;
      run_start_ = out_.size();
      run_code_points_ = 0;
      run_changed_ = false;
      // Without trailing-space removal this run stays and separates LF runs; with it, a run
      // before an LF is removed, so only a word character ends an LF run.
      if (!opt_.strip_trailing_spaces) newlines_ = 0;
      if (opt_.whitespace == Whitespace::kCollapse) {
        out_.put(' ');
        run_code_points_ = 1;
        if (cp != ' ') {
          run_changed_ = true;
          ++stats_.whitespace_runs_collapsed;
        }
        return;
      }
    } else if (opt_.whitespace == Whitespace::kCollapse) {
      if (!run_changed_) {
        run_changed_ = true;
        ++stats_.whitespace_runs_collapsed;
      }
      return;
    }
    if (opt_.whitespace == Whitespace::kPreserveIndent && cp != ' ' && cp != '\t') {
      ++stats_.unicode_spaces_replaced;
      out_.put(' ');
    } else {
      out_.put(bytes, length);
    }
    ++run_code_points_;
  }

  void newline() {
    if (in_run_) {
      in_run_ = false;
      if (opt_.strip_trailing_spaces) {
        stats_.trailing_spaces_removed += run_code_points_;
        out_.truncate(run_start_);
      }
    }
    ++newlines_;
    if (opt_.limit_newlines && newlines_ > 2) {
      if (newlines_ == 3) ++stats_.newline_runs_limited;
      return;
    }
    out_.put('\n');
  }

  void finish() {
    if (in_run_ && opt_.strip_trailing_spaces) {  // the last line's trailing spaces
      stats_.trailing_spaces_removed += run_code_points_;
      out_.truncate(run_start_);
      in_run_ = false;
    }
    if (opt_.strip) {
      const std::size_t from = seen_word_ ? last_word_end_ : 0;
      stats_.whitespace_stripped += count_code_points(out_.data() + from, out_.size() - from);
      out_.truncate(from);
    }
  }

  const std::uint8_t* p_;
  std::size_t n_;
  const TextCleanerOptions& opt_;
  const Kernels& kernels_;
  CleanStats& stats_;
  std::size_t index_;
  Output out_;

  bool prev_cr_ = false;       // the last character was a CR turned into LF
  bool in_run_ = false;        // the output ends with a run of horizontal whitespace
  bool run_changed_ = false;   // ... which is not a single U+0020 of the input
  std::size_t run_start_ = 0;  // output offset of that run
  std::size_t run_code_points_ = 0;
  std::size_t newlines_ = 0;       // LFs in the current run (after trailing-space removal)
  bool seen_word_ = false;         // a word character was written
  std::size_t last_word_end_ = 0;  // output offset just after the last word character
};

}  // namespace

std::string clean_document(std::string_view text, const TextCleanerOptions& options,
                           const Kernels& kernels, CleanStats& stats, std::size_t index) {
  CleanStats local;  // merged only on success: a document that throws counts nothing
  std::string out = DocumentCleaner(text, options, kernels, local, index).run();
  if (options.nfc && nfc_in_place(out)) ++local.nfc_changed_documents;
  local.documents = 1;
  local.bytes_in = text.size();
  local.bytes_out = out.size();
  local.documents_changed = std::string_view(out) != text ? 1 : 0;
  stats += local;
  return out;
}

}  // namespace luminamoon::data::cleaner_internal

namespace luminamoon::data {
namespace {
constexpr std::string_view kWhitespaceNames[] = {"preserve_indent", "collapse", "keep"};
}  // namespace

std::string_view whitespace_name(Whitespace mode) noexcept {
  return kWhitespaceNames[static_cast<std::size_t>(mode)];
}

Whitespace parse_whitespace(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kWhitespaceNames); ++i) {
    if (kWhitespaceNames[i] == name) return static_cast<Whitespace>(i);
  }
  std::string message = "TextCleaner: unknown whitespace mode '" + std::string(name) + "'";
  if (const auto best = did_you_mean(name, kWhitespaceNames)) {
    message += "; did you mean '" + *best + "'?";
  } else {
    message += "; valid modes: preserve_indent, collapse, keep";
  }
  throw ConfigError(message);
}

}  // namespace luminamoon::data
