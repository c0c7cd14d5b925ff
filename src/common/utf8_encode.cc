// UTF-8 from Latin-1, UCS-2 and UTF-32 code units (contract in common/utf8_encode.h).
//
// Text kept in the wider forms is still mostly ASCII (the real corpus's non-ASCII documents are
// 96.5-99.9% ASCII characters: a name with an accent, a pair of guillemets, one emoji), so the
// loop takes 16 units at a time: they are narrowed to 16 bytes with one store, and a mask tells
// how many of them were ASCII; the run of wider units after those is encoded unit by unit, and
// the next block starts after it. With SSE2 (every x86-64 CPU) a block is a few vector
// instructions; elsewhere it is a loop over a local copy (written for a vectorizer, but GCC kept
// it scalar on x86-64, hence the intrinsics there). This kernel writes 4.3-7.5 GB/s on mostly
// ASCII text, CPython's encoder 0.8-0.9 (BM_EncodeUtf8 in
// bench/cpp/stream_deduplicator_benchmark.cc).
#include "luminamoon/data/common/utf8_encode.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8_encode_kernels.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

constexpr std::size_t kBlock = 16;

// Writes the kBlock units at `in` to `out` as 16 bytes, narrowed (a unit above 0x7F becomes some
// byte: only the bytes before the first such unit are meant), and returns a mask of the units
// above 0x7F (bit k: unit k).
template <typename Unit>
unsigned narrow_block(const unsigned char* in, char* out) noexcept {
#if defined(__SSE2__)
  const auto load = [in](std::size_t k) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * k));
  };
  const __m128i zero = _mm_setzero_si128();
  __m128i narrowed;
  unsigned ascii = 0;  // bit k: unit k is ASCII
  if constexpr (sizeof(Unit) == 1) {
    narrowed = load(0);
    ascii = ~static_cast<unsigned>(_mm_movemask_epi8(narrowed));
  } else if constexpr (sizeof(Unit) == 2) {
    const __m128i a = load(0);
    const __m128i b = load(1);
    const __m128i high = _mm_set1_epi16(-0x80);  // 0xFF80
    const __m128i ascii_a = _mm_cmpeq_epi16(_mm_and_si128(a, high), zero);
    const __m128i ascii_b = _mm_cmpeq_epi16(_mm_and_si128(b, high), zero);
    ascii = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(ascii_a, ascii_b)));
    narrowed = _mm_packus_epi16(a, b);
  } else {
    const __m128i a = load(0);
    const __m128i b = load(1);
    const __m128i c = load(2);
    const __m128i d = load(3);
    const __m128i high = _mm_set1_epi32(-0x80);  // 0xFFFFFF80
    const auto is_ascii = [&](__m128i v) { return _mm_cmpeq_epi32(_mm_and_si128(v, high), zero); };
    ascii = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(
        _mm_packs_epi32(is_ascii(a), is_ascii(b)), _mm_packs_epi32(is_ascii(c), is_ascii(d)))));
    // (the saturating packs keep every unit below 0x80 as it is)
    narrowed = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), narrowed);
  return ~ascii & 0xFFFFu;
#else
  // Units are copied out with memcpy: the caller's pointer need not be aligned for Unit.
  Unit block[kBlock];
  std::memcpy(block, in, sizeof block);
  unsigned wide = 0;
  for (std::size_t k = 0; k < kBlock; ++k) {
    out[k] = static_cast<char>(block[k]);
    wide |= static_cast<unsigned>(block[k] >= 0x80) << k;
  }
  return wide;
#endif
}

template <typename Unit>
Utf8Encoded encode(const unsigned char* in, std::size_t count, char* out) noexcept {
  using internal::utf8_encode::unit_at;
  using internal::utf8_encode::units_one_by_one;
  Utf8Encoded result;
  char* o = out;
  // Blocks of 16 units from i: the ASCII ones before the first wider unit are kept from the
  // block's store, then the run of wider units is encoded one by one, and the next block starts
  // right after it. (The store writes 16 bytes at o, and the output has room for at least two
  // bytes per unit left: the bytes past the ASCII ones are overwritten or past the end.)
  // The test for an all-ASCII block is a branch on purpose: predicted, it lets the core run
  // ahead to the next blocks' loads; without it (i advanced by the mask's count alone, branch
  // free) every block waited for the previous one's load, 2.7x as slow on the real documents.
  std::size_t i = 0;
  while (i + kBlock <= count) {
    __builtin_prefetch(in + i * sizeof(Unit) + 1024);
    const unsigned wide = narrow_block<Unit>(in + i * sizeof(Unit), o);
    if (wide == 0) {
      o += kBlock;
      i += kBlock;
      continue;
    }
    const auto ascii = static_cast<std::size_t>(std::countr_zero(wide));
    o += ascii;
    const std::size_t block_end = i + kBlock;
    i += ascii;
    // The rest of the block unit by unit when it holds another wide unit (dense text: words of
    // Cyrillic or CJK between ASCII spaces), else only the run of wide units.
    if ((wide >> ascii) > 1) {
      o = units_one_by_one<Unit>(in, i, block_end, o, result);
      i = block_end;
    } else {
      do {
        o = units_one_by_one<Unit>(in, i, i + 1, o, result);
        ++i;
      } while (i < count && unit_at<Unit>(in, i) >= 0x80);
    }
  }
  o = units_one_by_one<Unit>(in, i, count, o, result);
  result.size = static_cast<std::size_t>(o - out);
  return result;
}

constexpr internal::Utf8EncodeKernel kPortable{Isa::kScalar, internal::encode_latin1_portable,
                                               internal::encode_ucs2_portable,
                                               internal::encode_utf32_portable};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr internal::Utf8EncodeKernel kAvx2{Isa::kAvx2, internal::encode_latin1_avx2,
                                           internal::encode_ucs2_avx2, internal::encode_utf32_avx2};
#endif

constexpr internal::IsaKernels<internal::Utf8EncodeKernel> kTables {
  .scalar = &kPortable,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx2,
#endif
  .neon = &kPortable,
};

}  // namespace

namespace internal {

Utf8Encoded encode_latin1_portable(const unsigned char* units, std::size_t count, char* out) {
  return encode<std::uint8_t>(units, count, out);
}
Utf8Encoded encode_ucs2_portable(const unsigned char* units, std::size_t count, char* out) {
  return encode<std::uint16_t>(units, count, out);
}
Utf8Encoded encode_utf32_portable(const unsigned char* units, std::size_t count, char* out) {
  return encode<std::uint32_t>(units, count, out);
}

const Utf8EncodeKernel& utf8_encode_kernel_for(Isa isa) {
  return select_kernel(kTables, isa, "UTF-8 encoder");
}

const Utf8EncodeKernel& active_utf8_encode_kernel() {
  static const Utf8EncodeKernel& active = utf8_encode_kernel_for(active_isa());
  return active;
}

}  // namespace internal

Utf8Encoded encode_utf8(const void* units, std::size_t count, unsigned width, char* out) {
  const auto* in = static_cast<const unsigned char*>(units);
  switch (width) {
    case 1:
      return internal::active_utf8_encode_kernel().latin1(in, count, out);
    case 2:
      return internal::active_utf8_encode_kernel().ucs2(in, count, out);
    case 4:
      return internal::active_utf8_encode_kernel().utf32(in, count, out);
    default:
      throw InvalidArgument("encode_utf8: code units are 1, 2 or 4 bytes wide, got " +
                            std::to_string(width));
  }
}

std::string_view Utf8Scratch::encode(const CodeUnits& units, std::size_t& first_invalid) {
  const std::size_t capacity = utf8_encode_capacity(units.count, units.width);
  if (capacity > capacity_) {
    // At least 64 KiB, so a batch of short documents allocates once.
    capacity_ = std::max<std::size_t>(capacity, 64 * 1024);
    buffer_ = std::make_unique_for_overwrite<char[]>(capacity_);
  }
  const Utf8Encoded encoded = encode_utf8(units.data, units.count, units.width, buffer_.get());
  first_invalid = encoded.first_invalid;
  return {buffer_.get(), encoded.size};
}

void check_pending(std::span<const PendingUtf8> pending, std::size_t documents, const char* where) {
  for (std::size_t k = 0; k < pending.size(); ++k) {
    if (pending[k].index >= documents || (k > 0 && pending[k].index <= pending[k - 1].index)) {
      throw InvalidArgument(std::string(where) + ": pending[" + std::to_string(k) +
                            "] names document " + std::to_string(pending[k].index) +
                            "; indices must ascend and be below " + std::to_string(documents));
    }
  }
}

std::size_t first_pending_at(std::span<const PendingUtf8> pending, std::size_t begin) noexcept {
  const auto it = std::partition_point(pending.begin(), pending.end(),
                                       [begin](const PendingUtf8& p) { return p.index < begin; });
  return static_cast<std::size_t>(it - pending.begin());
}

}  // namespace luminamoon::data
