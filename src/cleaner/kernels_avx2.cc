// AVX2 byte kernels of the TextCleaner (contract in internal/kernels.h; kernels_scalar.cc is
// the reference these must match byte for byte). Every function carries target("avx2"): this
// file is compiled with the default flags and only reached through the dispatcher after CPUID
// and XGETBV said the CPU and OS support AVX2.
#include <immintrin.h>

#include "cleaner/internal/kernel_support.h"
#include "cleaner/internal/kernels.h"

#define LUMINAMOON_AVX2 __attribute__((target("avx2")))

namespace luminamoon::data::cleaner_internal {
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

// ---- clean_prefix: classify 32 positions at once into bit masks (bit k = position p + k). A
// special sequence is up to three bytes long, so its check loads at offsets 0..2; a space or
// newline looks at the next position, which is the word mask shifted by one.

// 0xFF where lo <= v <= hi (unsigned).
LUMINAMOON_AVX2 inline __m256i in_range(__m256i v, std::uint8_t lo, std::uint8_t hi) {
  const __m256i shifted = _mm256_sub_epi8(v, splat(lo));
  return _mm256_cmpeq_epi8(_mm256_min_epu8(shifted, splat(static_cast<std::uint8_t>(hi - lo))),
                           shifted);
}

LUMINAMOON_AVX2 inline __m256i eq(__m256i v, std::uint8_t b) {
  return _mm256_cmpeq_epi8(v, splat(b));
}

// 0xFF where 0x21 <= v <= 0x7E.
LUMINAMOON_AVX2 inline __m256i printable(__m256i v) {
  return _mm256_andnot_si256(eq(v, 0x7F), _mm256_cmpgt_epi8(v, splat(0x20)));
}

// 0xFF where a special sequence starts at a (b, c: the next two bytes of each position).
LUMINAMOON_AVX2 inline __m256i special_start(__m256i a, __m256i b, __m256i c) {
  const __m256i b80 = eq(b, 0x80);
  const __m256i c80 = eq(c, 0x80);
  const __m256i c2 = _mm256_and_si256(eq(a, 0xC2), in_range(b, 0x80, 0xA0));
  const __m256i e1 = _mm256_and_si256(eq(a, 0xE1), _mm256_and_si256(eq(b, 0x9A), c80));
  const __m256i e2_80 =
      _mm256_and_si256(b80, _mm256_or_si256(in_range(c, 0x80, 0x8A), eq(c, 0xAF)));
  const __m256i e2_81 = _mm256_and_si256(eq(b, 0x81), eq(c, 0x9F));
  const __m256i e2 = _mm256_and_si256(eq(a, 0xE2), _mm256_or_si256(e2_80, e2_81));
  const __m256i e3 = _mm256_and_si256(eq(a, 0xE3), _mm256_and_si256(b80, c80));
  return _mm256_or_si256(_mm256_or_si256(c2, e1), _mm256_or_si256(e2, e3));
}

// 0xFF where v is C2, E1, E2 or E3: the only bytes a special sequence starts with.
LUMINAMOON_AVX2 inline __m256i special_lead(__m256i v) {
  return _mm256_or_si256(eq(v, 0xC2), in_range(v, 0xE1, 0xE3));
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

LUMINAMOON_AVX2 std::size_t clean_prefix_avx2(const std::uint8_t* data, std::size_t size) {
  std::size_t p = 0;
  // The special-sequence check of position p + 31 loads up to p + 33; the word check of p + 32
  // (for a space at p + 31) reads p + 32..p + 34 within size. The last bytes go to the scalar code.
  for (; p + 32 + 2 <= size; p += 32) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p));
    const auto high = static_cast<std::uint32_t>(_mm256_movemask_epi8(v0));
    // Bit k: position p + k starts a word.
    auto word = static_cast<std::uint32_t>(_mm256_movemask_epi8(printable(v0))) | high;
    if (high != 0 && _mm256_movemask_epi8(special_lead(v0)) != 0) {
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p + 1));
      const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + p + 2));
      word &= ~static_cast<std::uint32_t>(_mm256_movemask_epi8(special_start(v0, v1, v2)));
    }
    const auto separator = static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_or_si256(eq(v0, 0x20), eq(v0, 0x0A))));
    // Bit k: position p + k + 1 starts a word; the position after the block by the scalar rule.
    std::uint32_t next_word = word >> 1;
    if ((separator >> 31) != 0 && starts_word(data, size, p + 32)) next_word |= 1u << 31;
    const std::uint32_t not_plain = ~(word | (separator & next_word));
    if (not_plain != 0) return p + static_cast<std::size_t>(__builtin_ctz(not_plain));
  }
  return p + clean_prefix_scalar(data + p, size - p);
}

}  // namespace luminamoon::data::cleaner_internal
