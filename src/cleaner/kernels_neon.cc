// NEON (AArch64 Advanced SIMD) byte kernels of the TextCleaner (contract in internal/kernels.h;
// kernels_scalar.cc is the reference these must match byte for byte). Same algorithms as
// kernels_avx2.cc on 16-byte registers. Advanced SIMD is part of the AArch64 baseline, so no
// target attribute is needed; this file is compiled only for AArch64 (src/CMakeLists.txt).
#include <arm_neon.h>

#include "cleaner/internal/kernel_support.h"
#include "cleaner/internal/kernels.h"

namespace luminamoon::data::cleaner_internal {
namespace {

// ---- UTF-8 validation: Keiser & Lemire lookup algorithm (see kernels_avx2.cc for the tables).

constexpr std::uint8_t kTooShort = 1 << 0;
constexpr std::uint8_t kTooLong = 1 << 1;
constexpr std::uint8_t kOverlong3 = 1 << 2;
constexpr std::uint8_t kTooLarge = 1 << 3;
constexpr std::uint8_t kSurrogate = 1 << 4;
constexpr std::uint8_t kOverlong2 = 1 << 5;
constexpr std::uint8_t kTooLarge1000 = 1 << 6;
constexpr std::uint8_t kOverlong4 = 1 << 6;
constexpr std::uint8_t kTwoConts = 1 << 7;
constexpr std::uint8_t kCarry = kTooShort | kTooLong | kTwoConts;

constexpr std::uint8_t kByte1High[16] = {kTooLong,
                                         kTooLong,
                                         kTooLong,
                                         kTooLong,
                                         kTooLong,
                                         kTooLong,
                                         kTooLong,
                                         kTooLong,
                                         kTwoConts,
                                         kTwoConts,
                                         kTwoConts,
                                         kTwoConts,
                                         kTooShort | kOverlong2,
                                         kTooShort,
                                         kTooShort | kOverlong3 | kSurrogate,
                                         kTooShort | kTooLarge | kTooLarge1000 | kOverlong4};
constexpr std::uint8_t kByte1Low[16] = {kCarry | kOverlong3 | kOverlong2 | kOverlong4,
                                        kCarry | kOverlong2,
                                        kCarry,
                                        kCarry,
                                        kCarry | kTooLarge,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000 | kSurrogate,
                                        kCarry | kTooLarge | kTooLarge1000,
                                        kCarry | kTooLarge | kTooLarge1000};
constexpr std::uint8_t kByte2High[16] = {
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4,
    kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge,
    kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
    kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
    kTooShort,
    kTooShort,
    kTooShort,
    kTooShort};
// Byte 13 >= F0, byte 14 >= E0 or byte 15 >= C0: a character continues past the register.
constexpr std::uint8_t kIncompleteMax[16] = {0xFF, 0xFF,     0xFF,     0xFF,    0xFF, 0xFF,
                                             0xFF, 0xFF,     0xFF,     0xFF,    0xFF, 0xFF,
                                             0xFF, 0xF0 - 1, 0xE0 - 1, 0xC0 - 1};

struct Utf8Tables {
  uint8x16_t byte1_high, byte1_low, byte2_high;
};

// Non-zero in a byte iff that byte of `input` (with `prev` the 16 bytes before it) ends or
// interrupts a sequence that is not valid UTF-8.
inline uint8x16_t utf8_errors(const Utf8Tables& t, uint8x16_t input, uint8x16_t prev) {
  const uint8x16_t prev1 = vextq_u8(prev, input, 15);
  const uint8x16_t special =
      vandq_u8(vandq_u8(vqtbl1q_u8(t.byte1_high, vshrq_n_u8(prev1, 4)),
                        vqtbl1q_u8(t.byte1_low, vandq_u8(prev1, vdupq_n_u8(0x0F)))),
               vqtbl1q_u8(t.byte2_high, vshrq_n_u8(input, 4)));
  const uint8x16_t third = vqsubq_u8(vextq_u8(prev, input, 14), vdupq_n_u8(0xE0 - 0x80));
  const uint8x16_t fourth = vqsubq_u8(vextq_u8(prev, input, 13), vdupq_n_u8(0xF0 - 0x80));
  const uint8x16_t must_continue = vandq_u8(vorrq_u8(third, fourth), vdupq_n_u8(0x80));
  return veorq_u8(must_continue, special);
}

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

std::size_t utf8_valid_prefix_neon(const std::uint8_t* data, std::size_t size) {
  const Utf8Tables tables{vld1q_u8(kByte1High), vld1q_u8(kByte1Low), vld1q_u8(kByte2High)};
  const uint8x16_t incomplete_max = vld1q_u8(kIncompleteMax);
  uint8x16_t prev = vdupq_n_u8(0);
  bool prev_incomplete = false;
  std::size_t p = 0;
  // 64 bytes per step; on the first step with an error, the scalar routine finds its exact
  // position, resuming at a character start no later than p (nothing before p was flagged).
  for (; p + 64 <= size; p += 64) {
    const uint8x16_t a = vld1q_u8(data + p);
    const uint8x16_t b = vld1q_u8(data + p + 16);
    const uint8x16_t c = vld1q_u8(data + p + 32);
    const uint8x16_t d = vld1q_u8(data + p + 48);
    if (vmaxvq_u8(vorrq_u8(vorrq_u8(a, b), vorrq_u8(c, d))) < 0x80) {
      if (prev_incomplete) break;  // all ASCII: valid unless a character was left unfinished
    } else {
      const uint8x16_t errors =
          vorrq_u8(vorrq_u8(utf8_errors(tables, a, prev), utf8_errors(tables, b, a)),
                   vorrq_u8(utf8_errors(tables, c, b), utf8_errors(tables, d, c)));
      if (vmaxvq_u8(errors) != 0) break;
      prev_incomplete = vmaxvq_u8(vqsubq_u8(d, incomplete_max)) != 0;
    }
    prev = d;
  }
  const std::size_t restart = character_start_before(data, p);
  return restart + utf8_valid_prefix_scalar(data + restart, size - restart);
}

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
