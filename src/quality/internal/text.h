// UTF-8 and Python-string helpers of the QualityFilter. Every metric is defined on code points
// with Python's str semantics (docs/quality.md); the document is first made valid UTF-8
// (repair_utf8), after which these helpers work on its bytes: the separators and needles the
// rules use are ASCII, which never occur inside a multi-byte sequence.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/utf8.h"
#include "quality/internal/tables.h"

namespace luminamoon::data::quality_internal {

// The UTF-8 primitives are the common module's (common/internal/utf8.h); these keep the names
// and std::string_view signatures the quality code is written against.
inline bool is_continuation(unsigned char byte) { return utf8_internal::is_continuation(byte); }

// The code point at text[i] of valid UTF-8; `length` receives its byte count.
inline char32_t decode_at(std::string_view text, std::size_t i, std::size_t& length) {
  std::size_t next = i;
  const std::uint32_t cp =
      utf8_internal::decode_valid(reinterpret_cast<const std::uint8_t*>(text.data()), next);
  length = next - i;
  return static_cast<char32_t>(cp);
}

inline char32_t decode_at(std::string_view text, std::size_t i) {
  std::size_t length = 0;
  return decode_at(text, i, length);
}

// Start of the code point that ends at `end` (exclusive), end > 0.
inline std::size_t previous_start(std::string_view text, std::size_t end) {
  std::size_t i = end - 1;
  while (i > 0 && is_continuation(static_cast<unsigned char>(text[i]))) --i;
  return i;
}

inline char32_t decode_before(std::string_view text, std::size_t end) {
  return decode_at(text, previous_start(text, end));
}

// len() of the Python str: the number of code points (of valid UTF-8).
inline std::size_t count_code_points(std::string_view text) {
  return utf8_internal::count_valid_code_points(text);
}

inline bool is_valid_utf8(std::string_view text) { return utf8_internal::is_valid(text); }

// CPython's bytes.decode("utf-8", "replace"), re-encoded: every maximal subpart of an ill-formed
// sequence becomes U+FFFD.
inline std::string repair_utf8(std::string_view bytes) { return utf8_internal::repaired(bytes); }

// The ASCII characters str.isspace() accepts: ' ', \t \n \v \f \r and 0x1C-0x1F.
constexpr bool is_ascii_space(unsigned char b) {
  return b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F);
}

inline bool is_space(char32_t cp) {
  if (cp < 0x80) return is_ascii_space(static_cast<unsigned char>(cp));
  return (flags(cp) & kSpace) != 0;
}

// Python's str.strip() / lstrip() / rstrip() (str.isspace characters).
std::string_view strip(std::string_view text);
std::string_view lstrip(std::string_view text);
std::string_view rstrip(std::string_view text);
// Whether text.strip() == "".
bool is_blank(std::string_view text);

// Scans that skip 16 bytes at a time the bytes they cannot stop at and then look at the next
// byte exactly as a byte-by-byte loop would. SSE2 is part of x86-64, so there is nothing to
// dispatch at run time; other targets (and the last 15 bytes of a text) take the byte loop.
// Wider vectors would not pay: words and lines end within a few blocks.

#if defined(__SSE2__)
// 0xFF in each byte of `v` that is_ascii_space accepts, 0 elsewhere: \t..\r is 9..13, so
// (v - 9) as unsigned is < 5; 0x1C..0x1F is (v & ~3) == 0x1C; and ' '.
inline __m128i ascii_space_bytes(__m128i v) {
  const __m128i low = _mm_sub_epi8(v, _mm_set1_epi8(9));
  const __m128i controls = _mm_cmpeq_epi8(_mm_min_epu8(low, _mm_set1_epi8(4)), low);
  const __m128i separators =
      _mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xFC))), _mm_set1_epi8(0x1C));
  return _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_or_si128(controls, separators));
}
#endif

// The first i' >= i where text[i'] is <= 0x20 (whitespace and other controls) or >= 0x80 (part
// of a non-ASCII character), or text.size(): every byte skipped is printable ASCII.
inline std::size_t skip_printable_ascii(std::string_view text, std::size_t i) {
#if defined(__SSE2__)
  const std::size_t n = text.size();
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    // Signed compare: bytes >= 0x80 are negative, so "< 0x21" catches both kinds.
    const auto stops =
        static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x21))));
    if (stops != 0) return i + static_cast<std::size_t>(std::countr_zero(stops));
  }
  for (; i < n; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b <= 0x20 || b >= 0x80) return i;
  }
  return n;
#else
  for (; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b <= 0x20 || b >= 0x80) return i;
  }
  return text.size();
#endif
}

// The first i' >= i where a line terminator may start: a byte in 0x00-0x1E (\n \v \f \r and
// \x1c-\x1e among them) or 0xC2 / 0xE2 (lead bytes of U+0085, U+2028, U+2029); or text.size().
inline std::size_t skip_to_line_break_candidate(std::string_view text, std::size_t i) {
  const std::size_t n = text.size();
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i control = _mm_and_si128(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x1F)),
                                          _mm_cmpgt_epi8(bytes, _mm_set1_epi8(-1)));
    const __m128i lead =
        _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(static_cast<char>(0xC2))),
                     _mm_cmpeq_epi8(bytes, _mm_set1_epi8(static_cast<char>(0xE2))));
    const auto stops = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_or_si128(control, lead)));
    if (stops != 0) return i + static_cast<std::size_t>(std::countr_zero(stops));
  }
#endif
  for (; i < n; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x1F || b == 0xC2 || b == 0xE2) return i;
  }
  return n;
}

// Python's str.splitlines(): lines without their terminators (\n, \r, \r\n, \v, \f, \x1c,
// \x1d, \x1e, U+0085, U+2028, U+2029); no final empty line after a terminator.
template <typename F>
void for_each_splitline(std::string_view text, F&& f) {
  const std::size_t n = text.size();
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < n) {
    i = skip_to_line_break_candidate(text, i);
    if (i == n) break;
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t terminator = 0;
    if (b == '\n' || b == 0x0B || b == 0x0C || b == 0x1C || b == 0x1D || b == 0x1E) {
      terminator = 1;
    } else if (b == '\r') {
      terminator = (i + 1 < n && text[i + 1] == '\n') ? 2 : 1;
    } else if (b == 0xC2 && i + 1 < n && static_cast<unsigned char>(text[i + 1]) == 0x85) {
      terminator = 2;  // U+0085
    } else if (b == 0xE2 && i + 2 < n && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      terminator = 3;  // U+2028, U+2029
    }
    if (terminator == 0) {
      ++i;
      continue;
    }
    f(text.substr(start, i - start));
    i += terminator;
    start = i;
  }
  if (start < n) f(text.substr(start));
}

// Whether the code point at text[i] is whitespace; `length` receives its byte count.
inline bool space_at(std::string_view text, std::size_t i, std::size_t& length) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) {
    length = 1;
    return is_space(b);
  }
  return is_space(decode_at(text, i, length));
}

// Python's str.split() (no argument): the maximal runs of non-whitespace.
template <typename F>
void for_each_whitespace_word(std::string_view text, F&& f) {
  const std::size_t n = text.size();
  std::size_t i = 0;
  std::size_t length = 0;
  while (i < n) {
    while (i < n && space_at(text, i, length)) i += length;
    const std::size_t start = i;
    while (i < n) {
      i = skip_printable_ascii(text, i);
      if (i == n || space_at(text, i, length)) break;
      i += length;
    }
    if (i > start) f(text.substr(start, i - start));
  }
}

// str.count(needle): non-overlapping occurrences, left to right.
std::size_t count_occurrences(std::string_view text, std::string_view needle);

}  // namespace luminamoon::data::quality_internal
