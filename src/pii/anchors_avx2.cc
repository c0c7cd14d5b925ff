// AVX2 anchor kernel (rule and tables in internal/anchors.h; anchors_scalar.cc is the reference).
// Every function carries LUMINAMOON_AVX2 (common/internal/isa_dispatch.h): this file is compiled
// with the default flags and only reached through the dispatcher after CPUID and XGETBV said the
// CPU and OS support AVX2.
//
// Per 32 bytes: six overlapping loads (at +0..+5) give each position its next five bytes; each
// is classified by two vpshufb nibble lookups, and the six classes are ANDed.
#include <immintrin.h>

#include "common/internal/isa_dispatch.h"
#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {
namespace {

struct Tables {
  __m256i lo[kAnchorWindow];
  __m256i hi[kAnchorWindow];
};

// The nibble tables repeated over a whole register, built at compile time (one load each).
struct WideTables {
  alignas(32) std::uint8_t lo[kAnchorWindow][32];
  alignas(32) std::uint8_t hi[kAnchorWindow][32];
};

constexpr WideTables make_wide_tables() {
  WideTables w{};
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    for (std::size_t i = 0; i < 32; ++i) {
      w.lo[k][i] = kAnchorTables.lo[k][i % 16];
      w.hi[k][i] = kAnchorTables.hi[k][i % 16];
    }
  }
  return w;
}

constexpr WideTables kWide = make_wide_tables();

LUMINAMOON_AVX2 inline __m256i classify(const std::uint8_t* p, __m256i lo, __m256i hi,
                                        __m256i nibble) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i l = _mm256_shuffle_epi8(lo, _mm256_and_si256(v, nibble));
  const __m256i h = _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
  return _mm256_and_si256(l, h);
}

LUMINAMOON_AVX2 inline std::uint32_t half(const std::uint8_t* p, const Tables& t, __m256i nibble) {
  __m256i acc = classify(p, t.lo[0], t.hi[0], nibble);
  for (std::size_t k = 1; k < kAnchorWindow; ++k) {
    acc = _mm256_and_si256(acc, classify(p + k, t.lo[k], t.hi[k], nibble));
  }
  const __m256i zero = _mm256_cmpeq_epi8(acc, _mm256_setzero_si256());
  return ~static_cast<std::uint32_t>(_mm256_movemask_epi8(zero));
}

}  // namespace

LUMINAMOON_AVX2 void anchor_masks_avx2(const std::uint8_t* data, std::size_t blocks,
                                       std::uint64_t* masks) {
  Tables t;
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    t.lo[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kWide.lo[k]));
    t.hi[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kWide.hi[k]));
  }
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::uint8_t* p = data + k * 64;
    masks[k] = std::uint64_t{half(p, t, nibble)} | (std::uint64_t{half(p + 32, t, nibble)} << 32);
  }
}

}  // namespace luminamoon::data::pii_internal
