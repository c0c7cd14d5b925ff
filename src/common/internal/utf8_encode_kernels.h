// The kernels behind encode_utf8 (common/utf8_encode.h): the portable one (utf8_encode.cc: SSE2
// blocks on x86-64, plain loops elsewhere) for every width, and AVX2-level ones for the Latin-1
// and UCS-2 widths (utf8_encode_avx2.cc), which also encode blocks of 1-, 2- and 3-byte
// characters with vector code. Every kernel gives the portable one's bytes and first_invalid for
// every input (tests/cpp/common/utf8_encode_test.cc holds each to a unit-by-unit reference).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/utf8_encode.h"

namespace luminamoon::data::internal {

using Utf8EncodeFn = Utf8Encoded (*)(const unsigned char* units, std::size_t count, char* out);

struct Utf8EncodeKernel {
  Isa isa;
  Utf8EncodeFn latin1;  // width 1
  Utf8EncodeFn ucs2;    // width 2
  Utf8EncodeFn utf32;   // width 4
};

// The kernel of one ISA (must be supported: see isa_supported), and of the live ISA.
const Utf8EncodeKernel& utf8_encode_kernel_for(Isa isa);
const Utf8EncodeKernel& active_utf8_encode_kernel();

Utf8Encoded encode_latin1_portable(const unsigned char* units, std::size_t count, char* out);
Utf8Encoded encode_ucs2_portable(const unsigned char* units, std::size_t count, char* out);
Utf8Encoded encode_utf32_portable(const unsigned char* units, std::size_t count, char* out);
Utf8Encoded encode_latin1_avx2(const unsigned char* units, std::size_t count, char* out);
Utf8Encoded encode_ucs2_avx2(const unsigned char* units, std::size_t count, char* out);
Utf8Encoded encode_utf32_avx2(const unsigned char* units, std::size_t count, char* out);

namespace utf8_encode {

// One code point at `out`; returns the end of what it wrote: utf8_internal::encode, which gives
// a surrogate its generic 3-byte form (surrogatepass), with a value above U+10FFFF (never in a
// Python str) as the replacement character.
inline char* put(std::uint32_t c, char* out) noexcept {
  if (c >= 0x110000) [[unlikely]]
    c = utf8_internal::kReplacementCharacter;
  return out + utf8_internal::encode(c, reinterpret_cast<std::uint8_t*>(out));
}

// Not a Unicode scalar value: a surrogate, or above U+10FFFF.
inline bool invalid(std::uint32_t c) noexcept { return c - 0xD800u < 0x800u || c >= 0x110000u; }

// Unit k of `in` as a code point, copied out with memcpy (the input need not be aligned).
template <typename Unit>
inline std::uint32_t unit_at(const unsigned char* in, std::size_t k) noexcept {
  Unit u;
  std::memcpy(&u, in + k * sizeof(Unit), sizeof u);
  return static_cast<std::uint32_t>(u);
}

// Units [from, to) one by one at *out, noting the first invalid one in `result`.
template <typename Unit>
inline char* units_one_by_one(const unsigned char* in, std::size_t from, std::size_t to, char* out,
                              Utf8Encoded& result) noexcept {
  for (std::size_t k = from; k < to; ++k) {
    const std::uint32_t c = unit_at<Unit>(in, k);
    if (sizeof(Unit) > 1 && invalid(c) && result.first_invalid == Utf8Encoded::npos) {
      result.first_invalid = k;
    }
    out = put(c, out);
  }
  return out;
}

// The definition every kernel is held to (tests/cpp/common/utf8_encode_test.cc and
// fuzz/utf8_encode_fuzzer.cc), written apart from the kernels' own unit loop: each of `count`
// units of `width` bytes (host order) through utf8_internal::encode, a surrogate in its 3-byte
// form, a value above U+10FFFF as U+FFFD; `first_invalid` receives the first of those two kinds
// (Utf8Encoded::npos when there is none).
inline std::string reference_encode(const unsigned char* units, std::size_t count, unsigned width,
                                    std::size_t& first_invalid) {
  std::string out;
  first_invalid = Utf8Encoded::npos;
  for (std::size_t k = 0; k < count; ++k) {
    std::uint32_t c = 0;
    if (width == 1) {
      c = units[k];
    } else if (width == 2) {
      std::uint16_t u;
      std::memcpy(&u, units + 2 * k, 2);
      c = u;
    } else {
      std::memcpy(&c, units + 4 * k, 4);
    }
    const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
    if ((surrogate || c > 0x10FFFF) && first_invalid == Utf8Encoded::npos) first_invalid = k;
    std::uint8_t bytes[4];
    std::size_t length = 0;
    if (surrogate) {
      bytes[0] = static_cast<std::uint8_t>(0xE0 | (c >> 12));
      bytes[1] = static_cast<std::uint8_t>(0x80 | ((c >> 6) & 0x3F));
      bytes[2] = static_cast<std::uint8_t>(0x80 | (c & 0x3F));
      length = 3;
    } else {
      length = utf8_internal::encode(c > 0x10FFFF ? 0xFFFD : c, bytes);
    }
    out.append(reinterpret_cast<const char*>(bytes), length);
  }
  return out;
}

}  // namespace utf8_encode
}  // namespace luminamoon::data::internal
