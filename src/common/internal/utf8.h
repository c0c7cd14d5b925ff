// The one UTF-8 module of the engine: validation (a runtime-dispatched SIMD kernel per ISA, with
// utf8_scalar.cc as the reference), and one decoder of the maximal-subpart rule that CPython's
// bytes.decode("utf-8", "replace") follows, with the helpers the stages build on it (code-point
// iteration and counting, repair). Private to the library: stages include it, public headers do
// not (the PIIMasker's utf8_* functions in pii_masker.h forward here).
//
// "Valid" is RFC 3629 / Unicode 3.9 table 3-7: no overlongs, no surrogates U+D800..U+DFFF,
// nothing above U+10FFFF, no sequence truncated by the end of the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::utf8_internal {

// ---- Validation

// Length of the longest prefix of data[0, size) that is complete, valid UTF-8. A sequence
// truncated by the end of the buffer is not part of the prefix. Returns size when the whole
// buffer is valid. Every ISA's function returns exactly the scalar one's value for every input.
using Utf8ValidPrefixFn = std::size_t (*)(const std::uint8_t* data, std::size_t size);

struct Utf8Kernel {
  Isa isa;
  Utf8ValidPrefixFn valid_prefix;
};

// The validator of one ISA (must be supported: see isa_supported), and of the live ISA.
const Utf8Kernel& utf8_kernel_for(Isa isa);
const Utf8Kernel& active_utf8_kernel();

std::size_t utf8_valid_prefix_scalar(const std::uint8_t* data, std::size_t size);
std::size_t utf8_valid_prefix_avx2(const std::uint8_t* data, std::size_t size);
std::size_t utf8_valid_prefix_avx512(const std::uint8_t* data, std::size_t size);
std::size_t utf8_valid_prefix_neon(const std::uint8_t* data, std::size_t size);

// The live ISA's valid prefix (0 for an empty buffer). Not noexcept: the first call resolves the
// live ISA, which throws ConfigError for a bad LUMINAMOON_SIMD (cpu_isa.h).
std::size_t valid_prefix(const std::uint8_t* data, std::size_t size);

inline std::size_t valid_prefix(std::string_view bytes) {
  return valid_prefix(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

inline bool is_valid(std::string_view bytes) { return valid_prefix(bytes) == bytes.size(); }

// Where utf8_valid_prefix_scalar may resume once a block validator has flagged no error in
// [0, p): the lead byte of the last multi-byte character starting in [p - 3, p), else p. With no
// error flagged before p, [0, p) is valid UTF-8 followed by at most the first bytes of one
// character, so the position returned is a character boundary with valid UTF-8 before it.
inline std::size_t character_start_before(const std::uint8_t* data, std::size_t p) {
  for (std::size_t k = 1; k <= 3 && k <= p; ++k) {
    const std::uint8_t b = data[p - k];
    if (b < 0x80) return p - k + 1;
    if (b >= 0xC0) return p - k;
  }
  return p;
}

// ---- Decoding

inline constexpr char32_t kReplacementCharacter = 0xFFFD;
inline constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

inline bool is_continuation(std::uint8_t b) noexcept { return (b & 0xC0u) == 0x80u; }

// Why a sequence is ill-formed, as CPython's UnicodeDecodeError reasons: "invalid start byte",
// "invalid continuation byte", "unexpected end of data".
enum class Utf8Error : std::uint8_t { kNone, kInvalidStart, kInvalidContinuation, kTruncated };

struct Decoded {
  std::uint32_t code_point;  // 0 when error != kNone
  std::uint32_t length;      // bytes consumed: the character, or the maximal invalid subpart
  Utf8Error error;
};

// One character at p[0] with p[0] >= 0x80 and left >= 1 bytes available, by table 3-7. An
// ill-formed sequence consumes its maximal subpart: the longest prefix that could still begin a
// valid character, at least one byte. That is Unicode's "best practice" for U+FFFD substitution,
// which CPython follows (one U+FFFD per maximal subpart).
// Unrolled by length: this is the per-character step of the cleaner and the shingler.
inline Decoded decode_multibyte(const std::uint8_t* p, std::size_t left) noexcept {
  const std::uint8_t b0 = p[0];
  // Continuation bytes and the overlong leads C0/C1; F5..FF would be above U+10FFFF.
  if (b0 < 0xC2 || b0 > 0xF4) return {0, 1, Utf8Error::kInvalidStart};
  if (left < 2) return {0, 1, Utf8Error::kTruncated};
  const std::uint8_t b1 = p[1];
  if (b0 < 0xE0) {
    if (!is_continuation(b1)) return {0, 1, Utf8Error::kInvalidContinuation};
    return {((b0 & 0x1Fu) << 6) | (b1 & 0x3Fu), 2, Utf8Error::kNone};
  }
  // The second byte's range excludes overlongs (E0, F0), surrogates (ED) and > U+10FFFF (F4).
  const std::uint8_t lo = b0 == 0xE0 ? 0xA0 : b0 == 0xF0 ? 0x90 : 0x80;
  const std::uint8_t hi = b0 == 0xED ? 0x9F : b0 == 0xF4 ? 0x8F : 0xBF;
  if (b1 < lo || b1 > hi) return {0, 1, Utf8Error::kInvalidContinuation};
  if (left < 3) return {0, 2, Utf8Error::kTruncated};
  const std::uint8_t b2 = p[2];
  if (!is_continuation(b2)) return {0, 2, Utf8Error::kInvalidContinuation};
  if (b0 < 0xF0) {
    return {((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu), 3, Utf8Error::kNone};
  }
  if (left < 4) return {0, 3, Utf8Error::kTruncated};
  const std::uint8_t b3 = p[3];
  if (!is_continuation(b3)) return {0, 3, Utf8Error::kInvalidContinuation};
  return {((b0 & 0x07u) << 18) | ((b1 & 0x3Fu) << 12) | ((b2 & 0x3Fu) << 6) | (b3 & 0x3Fu), 4,
          Utf8Error::kNone};
}

// One character or maximal invalid subpart at p[0], any byte, left >= 1.
inline Decoded decode(const std::uint8_t* p, std::size_t left) noexcept {
  if (p[0] < 0x80) return {p[0], 1, Utf8Error::kNone};
  return decode_multibyte(p, left);
}

// The code point at p[i] of text already known to be valid UTF-8; advances i past it. No checks.
inline std::uint32_t decode_valid(const std::uint8_t* p, std::size_t& i) noexcept {
  const std::uint8_t b0 = p[i];
  if (b0 < 0x80) {
    i += 1;
    return b0;
  }
  if (b0 < 0xE0) {
    const std::uint32_t cp = ((b0 & 0x1Fu) << 6) | (p[i + 1] & 0x3Fu);
    i += 2;
    return cp;
  }
  if (b0 < 0xF0) {
    const std::uint32_t cp = ((b0 & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu);
    i += 3;
    return cp;
  }
  const std::uint32_t cp = ((b0 & 0x07u) << 18) | ((p[i + 1] & 0x3Fu) << 12) |
                           ((p[i + 2] & 0x3Fu) << 6) | (p[i + 3] & 0x3Fu);
  i += 4;
  return cp;
}

// Code-point iteration with CPython's "replace" reading: f(code_point, offset, length) for every
// character, U+FFFD (with the maximal subpart's offset and length) for every ill-formed part.
template <typename F>
void for_each_code_point(std::string_view bytes, F&& f) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const Decoded d = decode(p + i, n - i);
    f(d.error == Utf8Error::kNone ? static_cast<char32_t>(d.code_point) : kReplacementCharacter, i,
      static_cast<std::size_t>(d.length));
    i += d.length;
  }
}

// Code points of text already known to be valid UTF-8: the bytes that are not continuations.
inline std::size_t count_valid_code_points(std::string_view text) noexcept {
  std::size_t continuation = 0;
  for (const char c : text) continuation += is_continuation(static_cast<std::uint8_t>(c)) ? 1u : 0u;
  return text.size() - continuation;
}

// len(bytes.decode("utf-8", "replace")): characters plus maximal invalid subparts.
std::size_t count_code_points(std::string_view bytes) noexcept;

// Appends bytes.decode("utf-8", "replace").encode("utf-8") to out: valid runs copied as they
// are (found by valid_prefix, so this may throw ConfigError like it), every maximal invalid
// subpart replaced by U+FFFD.
void append_repaired(std::string_view bytes, std::string& out);

inline std::string repaired(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + 16);
  append_repaired(bytes, out);
  return out;
}

// UTF-8 encoding of a code point (< 0x110000) at out; returns its length. A surrogate, which is
// not a character, gets the generic 3-byte form (Python's 'surrogatepass').
inline std::size_t encode(std::uint32_t cp, std::uint8_t* out) noexcept {
  if (cp < 0x80) {
    out[0] = static_cast<std::uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<std::uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<std::uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<std::uint8_t>(0xF0 | (cp >> 18));
  out[1] = static_cast<std::uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace luminamoon::data::utf8_internal
