// XXH3-64 with xxHash's avx512 accumulator loop (contract in internal/xxh3_kernels.h), built like
// xxh3_avx2.cc: the library is a header of static functions, so the ISA is enabled for this whole
// translation unit with the avx512 level's target string (common/internal/isa_dispatch.h), and
// only the dispatcher in xxh3.cc calls in here, after the CPU probe said the CPU and OS support it.
// On an AVX-512 server core (Sapphire Rapids) it hashes a 7.8 KB document ~1.3x as fast as the
// AVX2 loop: 64-byte loads, half the loop trips (bench/cpp/minhash_hashing_benchmark xxh3_long).
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's _mm512_undefined_epi32 (in its own avx512fintrin.h, reached through
// _mm512_shuffle_epi32 in xxHash's loop) initialises a variable from itself on purpose, and GCC
// then warns that it is used uninitialized (GCC bug 105593, fixed in GCC 13). The value is
// undefined by design and fully overwritten (all-ones mask), so the false positive is silenced
// for this file only; the pragmas must precede the headers to reach the inlined intrinsics.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl")

#include <immintrin.h>  // xxhash.h includes it only under -mavx2 / -mavx512f

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX512
#include <xxhash.h>

#include "common/internal/xxh3_kernels.h"

namespace luminamoon::data::internal {

std::uint64_t xxh3_64_avx512(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  return XXH3_64bits_withSeed(data, size, seed);
}

}  // namespace luminamoon::data::internal
