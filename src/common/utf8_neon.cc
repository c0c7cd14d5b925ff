// NEON (AArch64 Advanced SIMD) UTF-8 validator (contract in internal/utf8.h; utf8_scalar.cc is
// the reference this must match for every input). Same algorithm as utf8_avx2.cc on 16-byte
// registers. Advanced SIMD is part of the AArch64 baseline, so no target attribute is needed;
// this file is compiled only for AArch64 (src/CMakeLists.txt).
#include <arm_neon.h>

#include "common/internal/utf8.h"

namespace luminamoon::data::utf8_internal {
namespace {

// ---- UTF-8 validation: Keiser & Lemire lookup algorithm (see utf8_avx2.cc for the tables).

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

}  // namespace luminamoon::data::utf8_internal
