// The kernels behind decode_utf8 (common/utf8_decode.h) for the Latin-1 and UCS-2 widths: the
// portable ones (utf8_decode.cc: SSE2 blocks of ASCII on x86-64, a plain loop elsewhere),
// AVX2-level ones (utf8_decode_avx2.cc) that also decode blocks holding characters that are not
// ASCII with vector code, and, for UCS-2, an AVX-512 one for CPUs with VBMI2
// (utf8_decode_avx512.cc). Every kernel writes the portable one's units for valid input; on other
// bytes the units are meaningless, but no kernel reads outside its input or writes past its
// capacity (tests/cpp/common/utf8_decode_test.cc, fuzz/utf8_decode_fuzzer.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::internal {

// Valid UTF-8 `utf8[0, n)` whose code points are all below U+0100, as Latin-1 units at `out`
// (`capacity` of them: its code points); decode_utf8's contract for width 1.
using Utf8DecodeLatin1Fn = void (*)(const std::uint8_t* utf8, std::size_t n, std::uint8_t* out,
                                    std::size_t capacity);

// Valid UTF-8 `utf8[0, n)` whose code points are all below U+10000, as UCS-2 units at `out`
// (`capacity` of them); decode_utf8's contract for width 2.
using Utf8DecodeUcs2Fn = void (*)(const std::uint8_t* utf8, std::size_t n, std::uint16_t* out,
                                  std::size_t capacity);

struct Utf8DecodeKernel {
  Isa isa;
  Utf8DecodeLatin1Fn latin1;
  Utf8DecodeUcs2Fn
      ucs2;  // decode_ucs2_portable, or a vector kernel (decode_utf8_dense_is_vectorized)
};

// The kernel of one ISA (must be supported: see isa_supported; at the avx512 level the UCS-2
// kernel is the VBMI2 one where the CPU has VBMI2), and of the live ISA.
const Utf8DecodeKernel& utf8_decode_kernel_for(Isa isa);
const Utf8DecodeKernel& active_utf8_decode_kernel();

void decode_latin1_portable(const std::uint8_t* utf8, std::size_t n, std::uint8_t* out,
                            std::size_t capacity);
void decode_latin1_avx2(const std::uint8_t* utf8, std::size_t n, std::uint8_t* out,
                        std::size_t capacity);
void decode_ucs2_portable(const std::uint8_t* utf8, std::size_t n, std::uint16_t* out,
                          std::size_t capacity);
void decode_ucs2_avx2(const std::uint8_t* utf8, std::size_t n, std::uint16_t* out,
                      std::size_t capacity);
void decode_ucs2_avx512_vbmi2(const std::uint8_t* utf8, std::size_t n, std::uint16_t* out,
                              std::size_t capacity);

namespace utf8_decode {

// The vector UCS-2 kernels take text with a continuation byte (its bytes less its code points) in
// every this many bytes or more, and leave sparser text to the portable kernel, whose blocks of
// ASCII go faster than any vector block while characters that are not ASCII, each a restart,
// are rare enough. Where the two cross on the real corpus's UCS-2 documents (docs/benchmarks.md,
// session 29; its characters that are not ASCII come in clusters, a Cyrillic name or a quoted
// title, which suits the portable kernel; spread evenly, the vector blocks win on text half as
// dense again): the AVX2 blocks of 16 bytes and the VBMI2 blocks of 32.
inline constexpr std::size_t kUcs2Avx2VectorBytes = 32;
inline constexpr std::size_t kUcs2Vbmi2VectorBytes = 64;

// Whether valid UTF-8 of n bytes and `code_points` characters has a continuation byte in every
// `bytes` bytes or more.
inline bool continuation_in_every(std::size_t n, std::size_t code_points,
                                  std::size_t bytes) noexcept {
  return code_points < n && (n - code_points) * bytes > n;
}

// One character at p[i], as a unit of the output. Never reads past n: with 4 bytes left, the
// lead byte alone says how many follow (decode_valid: no checks, the text is valid), and a byte
// that is not a lead still advances i; nearer the end, the checked decoder.
template <typename Unit>
inline Unit next_unit(const std::uint8_t* p, std::size_t n, std::size_t& i) noexcept {
  if (i + 4 <= n) return static_cast<Unit>(utf8_internal::decode_valid(p, i));
  const utf8_internal::Decoded d = utf8_internal::decode(p + i, n - i);
  i += d.length;
  return static_cast<Unit>(d.error == utf8_internal::Utf8Error::kNone
                               ? d.code_point
                               : utf8_internal::kReplacementCharacter);
}

// The characters from p[i] and unit k on, one at a time (a kernel's tail).
template <typename Unit>
inline void units_one_by_one(const std::uint8_t* p, std::size_t n, std::size_t i, Unit* out,
                             std::size_t k, std::size_t capacity) noexcept {
  while (i < n && k < capacity) {
    if (p[i] < 0x80) {
      out[k++] = static_cast<Unit>(p[i++]);
    } else {
      out[k++] = next_unit<Unit>(p, n, i);
    }
  }
}

// A vector kernel's end: continuation bytes at p[i] belong to the character its last block
// decoded (from bytes past the block); the characters after them one at a time.
template <typename Unit>
inline void after_blocks(const std::uint8_t* p, std::size_t n, std::size_t i, Unit* out,
                         std::size_t k, std::size_t capacity) noexcept {
  while (i < n && (p[i] & 0xC0u) == 0x80u) ++i;
  units_one_by_one(p, n, i, out, k, capacity);
}

}  // namespace utf8_decode
}  // namespace luminamoon::data::internal
