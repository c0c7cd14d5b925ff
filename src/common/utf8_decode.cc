// utf8_shape and decode_utf8 (luminamoon/data/common/utf8_decode.h). Both go 16 bytes a step
// where SSE2 is there (every x86-64 CPU): the shape from the bytes' maximum and a count of
// continuation bytes; the decoding copies a block of ASCII (widened to the output's width) with
// one store, and otherwise stores the block's ASCII run before its first other byte, decodes the
// characters that follow one by one while they are not ASCII, and goes on from there.
#include "luminamoon/data/common/utf8_decode.h"

#include <bit>
#include <cstdint>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8.h"
#include "common/internal/utf8_decode_kernels.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

using internal::utf8_decode::next_unit;
using internal::utf8_decode::units_one_by_one;

#if defined(__SSE2__)
// The 16 bytes of `v` as 16 units at out.
template <typename Unit>
inline void store_widened(__m128i v, Unit* out) noexcept {
  auto* o = reinterpret_cast<__m128i*>(out);
  if constexpr (sizeof(Unit) == 1) {
    _mm_storeu_si128(o, v);
  } else {
    const __m128i zero = _mm_setzero_si128();
    const __m128i low = _mm_unpacklo_epi8(v, zero);
    const __m128i high = _mm_unpackhi_epi8(v, zero);
    if constexpr (sizeof(Unit) == 2) {
      _mm_storeu_si128(o, low);
      _mm_storeu_si128(o + 1, high);
    } else {
      _mm_storeu_si128(o, _mm_unpacklo_epi16(low, zero));
      _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(low, zero));
      _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(high, zero));
      _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(high, zero));
    }
  }
}
#endif

template <typename Unit>
void decode_into(const std::uint8_t* p, std::size_t n, Unit* out, std::size_t capacity) noexcept {
  std::size_t i = 0;
  std::size_t k = 0;
#if defined(__SSE2__)
  // (k + 16 <= capacity: a block's store of 16 units stays inside the output)
  while (i + 16 <= n && k + 16 <= capacity) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(v));
    store_widened(v, out + k);
    if (mask == 0) {
      i += 16;
      k += 16;
      continue;
    }
    const auto run = static_cast<std::size_t>(std::countr_zero(mask));
    i += run;
    k += run;
    do {  // (k < capacity here: run < 16)
      out[k++] = next_unit<Unit>(p, n, i);
    } while (i < n && p[i] >= 0x80 && k < capacity);
  }
#endif
  units_one_by_one(p, n, i, out, k, capacity);
}

constexpr internal::Utf8DecodeKernel kPortable{Isa::kScalar, internal::decode_latin1_portable,
                                               internal::decode_ucs2_portable};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr internal::Utf8DecodeKernel kAvx2{Isa::kAvx2, internal::decode_latin1_avx2,
                                           internal::decode_ucs2_avx2};
constexpr internal::Utf8DecodeKernel kAvx512{Isa::kAvx512, internal::decode_latin1_avx2,
                                             internal::decode_ucs2_avx2};
constexpr internal::Utf8DecodeKernel kAvx512Vbmi2{Isa::kAvx512, internal::decode_latin1_avx2,
                                                  internal::decode_ucs2_avx512_vbmi2};
#endif

constexpr internal::IsaKernels<internal::Utf8DecodeKernel> kTables {
  .scalar = &kPortable,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx512,
#endif
  .neon = &kPortable,
};

}  // namespace

namespace internal {

void decode_latin1_portable(const std::uint8_t* utf8, std::size_t n, std::uint8_t* out,
                            std::size_t capacity) {
  decode_into(utf8, n, out, capacity);
}

void decode_ucs2_portable(const std::uint8_t* utf8, std::size_t n, std::uint16_t* out,
                          std::size_t capacity) {
  decode_into(utf8, n, out, capacity);
}

const Utf8DecodeKernel& utf8_decode_kernel_for(Isa isa) {
  const Utf8DecodeKernel& kernel = select_kernel(kTables, isa, "UTF-8 decoder");
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  // The avx512 level with AVX512_VBMI2: UCS-2 blocks of 32 bytes packed by VPCOMPRESSW.
  if (&kernel == &kAvx512 && avx512_extensions().vbmi2) return kAvx512Vbmi2;
#endif
  return kernel;
}

const Utf8DecodeKernel& active_utf8_decode_kernel() {
  static const Utf8DecodeKernel& active = utf8_decode_kernel_for(active_isa());
  return active;
}

}  // namespace internal

Utf8Shape utf8_shape(std::string_view utf8) noexcept {
  const auto* p = reinterpret_cast<const std::uint8_t*>(utf8.data());
  const std::size_t n = utf8.size();
  std::size_t continuation = 0;
  unsigned top = 0;
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  __m128i largest = zero;
  // Per byte lane, how many continuation bytes were seen there (at most 255 blocks a round).
  while (i + 16 <= n) {
    __m128i seen = zero;
    for (unsigned blocks = 0; blocks < 255 && i + 16 <= n; ++blocks, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      largest = _mm_max_epu8(largest, v);
      // 0x80..0xBF are the signed bytes below -64 (0xC0)
      seen = _mm_sub_epi8(seen, _mm_cmplt_epi8(v, _mm_set1_epi8(-0x40)));
    }
    const __m128i sums = _mm_sad_epu8(seen, zero);
    continuation += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) +
                    static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
  }
  alignas(16) std::uint8_t lanes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), largest);
  for (const std::uint8_t b : lanes) top = b > top ? b : top;
#endif
  for (; i < n; ++i) {
    top = p[i] > top ? p[i] : top;
    continuation += (p[i] & 0xC0u) == 0x80u ? 1u : 0u;
  }
  Utf8Shape shape;
  shape.code_points = n - continuation;
  shape.continuation_bytes = continuation;
  shape.ascii = top < 0x80;
  shape.width = top < 0xC4 ? 1 : top < 0xF0 ? 2 : 4;
  return shape;
}

std::size_t copy_ascii_prefix(std::string_view text, char* out) noexcept {
  const char* p = text.data();
  const std::size_t n = text.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 32 <= n; i += 32) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16));
    if (_mm_movemask_epi8(_mm_or_si128(a, b)) != 0) return i;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 16), b);
  }
#endif
  for (; i < n && static_cast<unsigned char>(p[i]) < 0x80; ++i) out[i] = p[i];
  return i;
}

void decode_utf8(std::string_view utf8, unsigned width, void* out, std::size_t capacity) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(utf8.data());
  switch (width) {
    case 1:
      return internal::active_utf8_decode_kernel().latin1(
          p, utf8.size(), static_cast<std::uint8_t*>(out), capacity);
    case 2:
      return internal::active_utf8_decode_kernel().ucs2(p, utf8.size(),
                                                        static_cast<std::uint16_t*>(out), capacity);
    case 4:
      return decode_into(p, utf8.size(), static_cast<std::uint32_t*>(out), capacity);
    default:
      throw InvalidArgument("decode_utf8: width must be 1, 2 or 4, got " + std::to_string(width));
  }
}

bool decode_utf8_dense_is_vectorized(unsigned width) noexcept {
  // (the vector kernels leave sparse text to the portable one themselves)
  return width == 2 && internal::active_utf8_decode_kernel().ucs2 != internal::decode_ucs2_portable;
}

}  // namespace luminamoon::data
