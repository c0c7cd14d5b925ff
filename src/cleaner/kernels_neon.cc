// NEON (AArch64 Advanced SIMD) byte kernels of the TextCleaner (contract in internal/kernels.h;
// kernels_scalar.cc is the reference these must match byte for byte). Same algorithms as
// kernels_avx2.cc on 16-byte registers. Advanced SIMD is part of the AArch64 baseline, so no
// target attribute is needed; this file is compiled only for AArch64 (src/CMakeLists.txt).
#include <arm_neon.h>

#include "cleaner/internal/kernel_support.h"
#include "cleaner/internal/kernels.h"

namespace luminamoon::data::cleaner_internal {
namespace {

// ---- clean_prefix (see kernels_avx2.cc): 16 positions at a time, as 0x00/0xFF byte masks.

inline uint8x16_t eq(uint8x16_t v, std::uint8_t b) { return vceqq_u8(v, vdupq_n_u8(b)); }

inline uint8x16_t in_range(uint8x16_t v, std::uint8_t lo, std::uint8_t hi) {
  return vcleq_u8(vsubq_u8(v, vdupq_n_u8(lo)), vdupq_n_u8(static_cast<std::uint8_t>(hi - lo)));
}

inline uint8x16_t special_start(uint8x16_t a, uint8x16_t b, uint8x16_t c) {
  const uint8x16_t b80 = eq(b, 0x80);
  const uint8x16_t c80 = eq(c, 0x80);
  const uint8x16_t c2 = vandq_u8(eq(a, 0xC2), in_range(b, 0x80, 0xA0));
  const uint8x16_t e1 = vandq_u8(eq(a, 0xE1), vandq_u8(eq(b, 0x9A), c80));
  const uint8x16_t e2_80 = vandq_u8(b80, vorrq_u8(in_range(c, 0x80, 0x8A), eq(c, 0xAF)));
  const uint8x16_t e2_81 = vandq_u8(eq(b, 0x81), eq(c, 0x9F));
  const uint8x16_t e2 = vandq_u8(eq(a, 0xE2), vorrq_u8(e2_80, e2_81));
  const uint8x16_t e3 = vandq_u8(eq(a, 0xE3), vandq_u8(b80, c80));
  return vorrq_u8(vorrq_u8(c2, e1), vorrq_u8(e2, e3));
}

inline uint8x16_t special_lead(uint8x16_t v) {
  return vorrq_u8(eq(v, 0xC2), in_range(v, 0xE1, 0xE3));
}

// 0xFF where 0x21 <= v <= 0x7E, or where v >= 0x80.
inline uint8x16_t printable_or_high(uint8x16_t v) {
  return vorrq_u8(in_range(v, 0x21, 0x7E), vtstq_u8(v, vdupq_n_u8(0x80)));
}

}  // namespace

std::size_t clean_prefix_neon(const std::uint8_t* data, std::size_t size) {
  std::size_t p = 0;
  for (; p + 16 + 3 <= size; p += 16) {
    const uint8x16_t v0 = vld1q_u8(data + p);
    const uint8x16_t v1 = vld1q_u8(data + p + 1);
    uint8x16_t word0 = printable_or_high(v0);
    uint8x16_t word1 = printable_or_high(v1);
    if (vmaxvq_u8(vorrq_u8(special_lead(v0), special_lead(v1))) != 0) {
      const uint8x16_t v2 = vld1q_u8(data + p + 2);
      const uint8x16_t v3 = vld1q_u8(data + p + 3);
      word0 = vbicq_u8(word0, special_start(v0, v1, v2));
      word1 = vbicq_u8(word1, special_start(v1, v2, v3));
    }
    const uint8x16_t separator = vorrq_u8(eq(v0, 0x20), eq(v0, 0x0A));
    const uint8x16_t not_plain = vmvnq_u8(vorrq_u8(word0, vandq_u8(separator, word1)));
    // Narrow each 0x00/0xFF byte to a nibble: a 64-bit mask with 4 bits per position.
    const std::uint64_t bits =
        vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(not_plain), 4)), 0);
    if (bits != 0) return p + static_cast<std::size_t>(__builtin_ctzll(bits)) / 4;
  }
  return p + clean_prefix_scalar(data + p, size - p);
}

}  // namespace luminamoon::data::cleaner_internal
