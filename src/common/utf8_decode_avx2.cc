// The AVX2-level kernel of decode_utf8 for the Latin-1 width (contract in
// internal/utf8_decode_kernels.h; the portable kernel in utf8_decode.cc is the reference). Every
// function carries LUMINAMOON_AVX2: this file is compiled with the default flags and reached only
// through the dispatcher.
//
// Text whose characters are all below U+0100 holds ASCII bytes and 2-byte characters whose lead
// is C2 or C3. The portable kernel copies a block of ASCII with one store and decodes the
// characters after its ASCII run one by one, then starts its next block after them: on text with
// an accent every few dozen bytes (French, German, Spanish) most blocks hold one, and each paid a
// restart (CPython's decoder was 4% faster there, docs/benchmarks.md session 27). Here a block of
// 16 bytes with 2-byte characters is decoded as a whole: a continuation byte after C3 gains 0x40
// (C2 xx is U+00xx for xx in 80..BF, C3 xx is U+00xx + 0x40), and one PSHUFB per 8 bytes packs
// the bytes that are not leads; a character may straddle two blocks (its continuation byte looks
// at the block before). Every block advances 16 bytes, so no load waits on the block before.
#include <emmintrin.h>
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "common/internal/isa_dispatch.h"
#include "common/internal/shuffle_table.h"
#include "common/internal/utf8_decode_kernels.h"

namespace luminamoon::data::internal {
namespace {

// For each mask m of 8 bytes to keep (bit k: byte k), the PSHUFB indices that put them first.
constexpr ShuffleTable make_keep_table() {
  ShuffleTable t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned n = 0;
    for (unsigned k = 0; k < 8; ++k) {
      if (((m >> k) & 1) != 0) t.shuffle[m][n++] = static_cast<std::uint8_t>(k);
    }
    t.length[m] = static_cast<std::uint8_t>(n);
    for (; n < 16; ++n) t.shuffle[m][n] = 0x80;
  }
  return t;
}

constexpr ShuffleTable kKeep = make_keep_table();

// The first `length` bytes of `v` whose bit is set in `keep` (8 bits), stored at `out` (8 bytes
// written); returns how many.
LUMINAMOON_AVX2 inline std::size_t store_kept(__m128i v, unsigned keep, std::uint8_t* out) {
  const __m128i shuffle =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kKeep.shuffle[keep].data()));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(v, shuffle));
  return kKeep.length[keep];
}

// The 16 bytes `v` (`last`: the 16 before them) as Latin-1 units at `out`: leads (the bytes from
// 0xC0 up) write nothing, and a continuation byte after C3, which may be the last byte of
// `last`, gains 0x40. Writes 16 bytes, returns how many are meant.
LUMINAMOON_AVX2 inline std::size_t decode_block(__m128i v, __m128i last, std::uint8_t* out) {
  const __m128i leads = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(-0x40)), v);  // 0xC0
  const auto keep = ~static_cast<unsigned>(_mm_movemask_epi8(leads)) & 0xFFFFu;
  const __m128i before = _mm_alignr_epi8(v, last, 15);  // byte j: the byte before byte j
  const __m128i after_c3 = _mm_cmpeq_epi8(before, _mm_set1_epi8(-0x3D));  // 0xC3
  const __m128i units = _mm_add_epi8(v, _mm_and_si128(after_c3, _mm_set1_epi8(0x40)));
  const std::size_t low = store_kept(units, keep & 0xFF, out);
  return low + store_kept(_mm_srli_si128(units, 8), keep >> 8, out + low);
}

}  // namespace

LUMINAMOON_AVX2 void decode_latin1_avx2(const std::uint8_t* p, std::size_t n, std::uint8_t* out,
                                        std::size_t capacity) {
  std::size_t i = 0;
  std::size_t k = 0;
  __m128i last = _mm_setzero_si128();  // the block before (its last byte may be a lead)
  // Valid text of this width has one continuation byte per character that is not ASCII: its
  // bytes less its code points. With one in every 128 bytes or more, whether a block is all
  // ASCII is a coin toss that a branch mispredicts, and the portable kernel's restart after each
  // such character costs more: every block takes the vector path, with no branch on its bytes
  // (French-like text, an accent every ~25 bytes: 5.4-5.6 against 2.4 GB/s). Sparser text
  // (most Latin-1 documents of the real corpus: an accent in a name) is the portable kernel's
  // case: blocks of ASCII with a predicted branch, a rare restart.
  if (!(capacity < n && (n - capacity) * 128 > n)) {
    decode_latin1_portable(p, n, out, capacity);
    return;
  }
  // (k + 16 <= capacity: a block writes at most 16 units, its two 8-byte stores included. Every
  // block advances 16 bytes: no load waits on the masks of the block before.)
  for (; i + 16 <= n && k + 16 <= capacity; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    k += decode_block(v, last, out + k);
    last = v;
  }
  // A lead that ended the last block wrote nothing: its character is decoded from it below.
  if (i != 0 && p[i - 1] >= 0xC0) --i;
  utf8_decode::units_one_by_one(p, n, i, out, k, capacity);
}

}  // namespace luminamoon::data::internal
