// XXH3-64 with xxHash's avx2 accumulator loop (contract in internal/xxh3_kernels.h). The library
// is a header of static functions, so the ISA cannot be put on each of its functions with
// LUMINAMOON_AVX2: it is enabled for this whole translation unit with the same target string
// (common/internal/isa_dispatch.h), and only the dispatcher in xxh3.cc calls in here, after the
// CPU probe said the CPU and OS support it.
#pragma GCC target("avx2")

#include <immintrin.h>  // xxhash.h includes it only under -mavx2 / -mavx512f

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

#include "common/internal/xxh3_kernels.h"

namespace luminamoon::data::internal {

std::uint64_t xxh3_64_avx2(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  return XXH3_64bits_withSeed(data, size, seed);
}

}  // namespace luminamoon::data::internal
