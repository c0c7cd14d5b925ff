// AVX-512BW anchor kernel (rule and tables in internal/anchors.h; anchors_scalar.cc is the
// reference). The AVX2 algorithm over 64 bytes at a time, ending in one vptestmb. Every function
// carries LUMINAMOON_AVX512 (common/internal/isa_dispatch.h); reached only through the dispatcher
// after the CPU/OS probe. With AVX512_VBMI as well, anchor_masks_avx512_vbmi classifies each byte
// with one 128-entry table lookup (vpermi2b) instead of two nibble lookups.
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

// ---- AVX512_VBMI ---------------------------------------------------------------------------
// The two nibble lookups per byte and window position were the kernel's cost: vpshufb on 512-bit
// registers runs on one port of Intel cores (Sapphire Rapids), two per position, twelve per 64
// bytes. vpermi2b looks a byte up in a 128-entry table held in two registers, so each position
// takes one lookup of the table of kAnchorTables' classes of the ASCII bytes. vpermi2b reads only
// the low 7 bits of each index: bytes >= 0x80 are first lowered to 0x80 (vpminub), whose entry is
// that of byte 0, and bytes 0x00 and >= 0x80 have the same class at every position (only the
// "any byte" rules; checked below), so the masks are exactly those of the nibble tables.

namespace {

struct AsciiTables {
  alignas(64) std::uint8_t cls[kAnchorWindow][128];
};

constexpr std::uint8_t nibble_class(std::size_t k, std::size_t b) {
  return static_cast<std::uint8_t>(kAnchorTables.lo[k][b & 15] & kAnchorTables.hi[k][b >> 4]);
}

constexpr AsciiTables make_ascii_tables() {
  AsciiTables a{};
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    for (std::size_t b = 0; b < 128; ++b) a.cls[k][b] = nibble_class(k, b);
  }
  return a;
}

constexpr AsciiTables kAscii = make_ascii_tables();

// The lowering of bytes >= 0x80 to the entry of byte 0 is exact.
static_assert([] {
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    for (std::size_t b = 128; b < 256; ++b) {
      if (nibble_class(k, b) != nibble_class(k, 0)) return false;
    }
  }
  return true;
}());

LUMINAMOON_AVX512_VBMI inline __m512i classify_vbmi(const std::uint8_t* p, __m512i low,
                                                    __m512i high, __m512i top) {
  const __m512i v = _mm512_min_epu8(_mm512_loadu_si512(p), top);
  return _mm512_permutex2var_epi8(low, v, high);
}

}  // namespace

LUMINAMOON_AVX512_VBMI void anchor_masks_avx512_vbmi(const std::uint8_t* data, std::size_t blocks,
                                                     std::uint64_t* masks) {
  __m512i low[kAnchorWindow], high[kAnchorWindow];
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    low[k] = _mm512_load_si512(kAscii.cls[k]);
    high[k] = _mm512_load_si512(kAscii.cls[k] + 64);
  }
  const __m512i top = _mm512_set1_epi8(static_cast<char>(0x80));
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::uint8_t* p = data + k * 64;
    __m512i acc = classify_vbmi(p, low[0], high[0], top);
    for (std::size_t j = 1; j < kAnchorWindow; ++j) {
      acc = _mm512_and_si512(acc, classify_vbmi(p + j, low[j], high[j], top));
    }
    masks[k] = _mm512_test_epi8_mask(acc, acc);
  }
}

}  // namespace luminamoon::data::pii_internal
