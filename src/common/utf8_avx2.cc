// AVX2 UTF-8 validator (contract in internal/utf8.h; utf8_scalar.cc is the reference this must
// match for every input). Every function carries LUMINAMOON_AVX2 (internal/isa_dispatch.h): this
// file is compiled with the default flags and only reached through the dispatcher after CPUID
// and XGETBV said the CPU and OS support AVX2.
#include <immintrin.h>

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8.h"

namespace luminamoon::data::utf8_internal {
namespace {

// ---- UTF-8 validation: Keiser & Lemire, "Validating UTF-8 In Less Than One Instruction Per
// Byte" (2021), the lookup algorithm as in simdjson. Three 16-entry tables indexed by the high
// nibble of the previous byte, its low nibble, and the high nibble of the current byte; their
// AND is non-zero exactly for a two-byte pattern that cannot occur in valid UTF-8. A separate
// check on the bytes two and three back catches missing or surplus continuation bytes.

constexpr std::uint8_t kTooShort = 1 << 0;      // 11______ 0_______ / 11______ 11______
constexpr std::uint8_t kTooLong = 1 << 1;       // 0_______ 10______
constexpr std::uint8_t kOverlong3 = 1 << 2;     // 11100000 100_____
constexpr std::uint8_t kTooLarge = 1 << 3;      // 11110100 1001____, 11110100 101_____, F5..FF
constexpr std::uint8_t kSurrogate = 1 << 4;     // 11101101 101_____
constexpr std::uint8_t kOverlong2 = 1 << 5;     // 1100000_ 10______
constexpr std::uint8_t kTooLarge1000 = 1 << 6;  // 11110101.. 1000____ (F5..FF)
constexpr std::uint8_t kOverlong4 = 1 << 6;     // 11110000 1000____
constexpr std::uint8_t kTwoConts = 1 << 7;      // 10______ 10______
constexpr std::uint8_t kCarry = kTooShort | kTooLong | kTwoConts;

LUMINAMOON_AVX2 inline __m256i table16(std::uint8_t t0, std::uint8_t t1, std::uint8_t t2,
                                       std::uint8_t t3, std::uint8_t t4, std::uint8_t t5,
                                       std::uint8_t t6, std::uint8_t t7, std::uint8_t t8,
                                       std::uint8_t t9, std::uint8_t t10, std::uint8_t t11,
                                       std::uint8_t t12, std::uint8_t t13, std::uint8_t t14,
                                       std::uint8_t t15) {
  const __m128i lane = _mm_setr_epi8(
      static_cast<char>(t0), static_cast<char>(t1), static_cast<char>(t2), static_cast<char>(t3),
      static_cast<char>(t4), static_cast<char>(t5), static_cast<char>(t6), static_cast<char>(t7),
      static_cast<char>(t8), static_cast<char>(t9), static_cast<char>(t10), static_cast<char>(t11),
      static_cast<char>(t12), static_cast<char>(t13), static_cast<char>(t14),
      static_cast<char>(t15));
  return _mm256_broadcastsi128_si256(lane);
}

LUMINAMOON_AVX2 inline __m256i splat(std::uint8_t b) {
  return _mm256_set1_epi8(static_cast<char>(b));
}

LUMINAMOON_AVX2 inline __m256i high_nibbles(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), splat(0x0F));
}

// The bytes of `input` shifted right by N positions with the last N bytes of `prev` shifted in:
// out[i] = (prev:input)[32 + i - N].
template <int N>
LUMINAMOON_AVX2 inline __m256i shifted_in(__m256i input, __m256i prev) {
  return _mm256_alignr_epi8(input, _mm256_permute2x128_si256(prev, input, 0x21), 16 - N);
}

struct Utf8Tables {
  __m256i byte1_high, byte1_low, byte2_high;
};

LUMINAMOON_AVX2 inline Utf8Tables utf8_tables() {
  return {
      table16(kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,
              kTwoConts, kTwoConts, kTwoConts, kTwoConts, kTooShort | kOverlong2, kTooShort,
              kTooShort | kOverlong3 | kSurrogate,
              kTooShort | kTooLarge | kTooLarge1000 | kOverlong4),
      table16(kCarry | kOverlong3 | kOverlong2 | kOverlong4, kCarry | kOverlong2, kCarry, kCarry,
              kCarry | kTooLarge, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000 | kSurrogate,
              kCarry | kTooLarge | kTooLarge1000, kCarry | kTooLarge | kTooLarge1000),
      table16(kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
              kTooShort,
              kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4,
              kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge,
              kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge,
              kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge, kTooShort, kTooShort,
              kTooShort, kTooShort),
  };
}

// Non-zero in a byte iff that byte of `input` (with `prev` the 32 bytes before it) ends or
// interrupts a sequence that is not valid UTF-8.
LUMINAMOON_AVX2 inline __m256i utf8_errors(const Utf8Tables& t, __m256i input, __m256i prev) {
  const __m256i prev1 = shifted_in<1>(input, prev);
  const __m256i special = _mm256_and_si256(
      _mm256_and_si256(_mm256_shuffle_epi8(t.byte1_high, high_nibbles(prev1)),
                       _mm256_shuffle_epi8(t.byte1_low, _mm256_and_si256(prev1, splat(0x0F)))),
      _mm256_shuffle_epi8(t.byte2_high, high_nibbles(input)));
  // Only 111_____ two back or 1111____ three back leave bit 7 set: this byte must continue.
  const __m256i third = _mm256_subs_epu8(shifted_in<2>(input, prev), splat(0xE0 - 0x80));
  const __m256i fourth = _mm256_subs_epu8(shifted_in<3>(input, prev), splat(0xF0 - 0x80));
  const __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth), splat(0x80));
  return _mm256_xor_si256(must_continue, special);
}

// Non-zero iff the last three bytes of `input` start a sequence that needs bytes after them.
LUMINAMOON_AVX2 inline __m256i utf8_incomplete(__m256i input) {
  const __m256i max_value =
      _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, static_cast<char>(0xF0 - 1),
                       static_cast<char>(0xE0 - 1), static_cast<char>(0xC0 - 1));
  return _mm256_subs_epu8(input, max_value);
}

}  // namespace

LUMINAMOON_AVX2 std::size_t utf8_valid_prefix_avx2(const std::uint8_t* data, std::size_t size) {
  const Utf8Tables tables = utf8_tables();
  __m256i prev = _mm256_setzero_si256();
  __m256i prev_incomplete = _mm256_setzero_si256();
  std::size_t p = 0;
  // 64 bytes per step; on the first step with an error, the scalar routine finds its exact
  // position, resuming at a character start no later than p (nothing before p was flagged).
  for (; p + 64 <= size; p += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p + 32));
    if (_mm256_movemask_epi8(_mm256_or_si256(a, b)) == 0) {
      // All ASCII: valid unless the previous block ended inside a character.
      if (!_mm256_testz_si256(prev_incomplete, prev_incomplete)) break;
    } else {
      const __m256i errors =
          _mm256_or_si256(utf8_errors(tables, a, prev), utf8_errors(tables, b, a));
      if (!_mm256_testz_si256(errors, errors)) break;
      prev_incomplete = utf8_incomplete(b);
    }
    prev = b;
  }
  const std::size_t restart = character_start_before(data, p);
  return restart + utf8_valid_prefix_scalar(data + restart, size - restart);
}

}  // namespace luminamoon::data::utf8_internal
