// AVX-512BW anchor kernel (rule and tables in internal/anchors.h; anchors_scalar.cc is the
// reference). The AVX2 algorithm over 64 bytes at a time, ending in one vptestmb. Every function
// carries LUMINAMOON_AVX512 (common/internal/isa_dispatch.h); reached only through the dispatcher
// after the CPU/OS probe.
#include <immintrin.h>

#include "common/internal/isa_dispatch.h"
#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {
namespace {

// The nibble tables repeated over a whole register, built at compile time: loading them is one
// instruction per table, which matters when documents are short (one kernel call each).
struct WideTables {
  alignas(64) std::uint8_t lo[kAnchorWindow][64];
  alignas(64) std::uint8_t hi[kAnchorWindow][64];
};

constexpr WideTables make_wide_tables() {
  WideTables w{};
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    for (std::size_t i = 0; i < 64; ++i) {
      w.lo[k][i] = kAnchorTables.lo[k][i % 16];
      w.hi[k][i] = kAnchorTables.hi[k][i % 16];
    }
  }
  return w;
}

constexpr WideTables kWide = make_wide_tables();

LUMINAMOON_AVX512 inline __m512i classify(const std::uint8_t* p, __m512i lo, __m512i hi,
                                          __m512i nibble) {
  const __m512i v = _mm512_loadu_si512(p);
  const __m512i l = _mm512_shuffle_epi8(lo, _mm512_and_si512(v, nibble));
  const __m512i h = _mm512_shuffle_epi8(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble));
  return _mm512_and_si512(l, h);
}

}  // namespace

LUMINAMOON_AVX512 void anchor_masks_avx512(const std::uint8_t* data, std::size_t blocks,
                                           std::uint64_t* masks) {
  __m512i lo[kAnchorWindow], hi[kAnchorWindow];
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    lo[k] = _mm512_load_si512(kWide.lo[k]);
    hi[k] = _mm512_load_si512(kWide.hi[k]);
  }
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::uint8_t* p = data + k * 64;
    __m512i acc = classify(p, lo[0], hi[0], nibble);
    for (std::size_t j = 1; j < kAnchorWindow; ++j) {
      acc = _mm512_and_si512(acc, classify(p + j, lo[j], hi[j], nibble));
    }
    masks[k] = _mm512_test_epi8_mask(acc, acc);
  }
}

}  // namespace luminamoon::data::pii_internal
