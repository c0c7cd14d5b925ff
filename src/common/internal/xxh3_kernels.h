// XXH3-64 builds per ISA (scalar, AVX2, AVX-512) for long inputs (> 240 bytes, where XXH3 runs its
// striped accumulator loop; shorter inputs take the same scalar code on every ISA). xxHash's own
// vector paths (XXH_VECTOR) give exactly the same values as its scalar one, so the choice changes
// speed only. Debian's libxxhash-dev is a header compiled with our default flags, i.e. the SSE2
// loop: the AVX2 one hashes an 8 KB document about twice as fast, the AVX-512 one ~1.3x the AVX2.
#pragma once

#include <cstddef>
#include <cstdint>

#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::internal {

using Xxh3Fn = std::uint64_t (*)(const void* data, std::size_t size, std::uint64_t seed);

struct Xxh3Kernel {
  Isa isa;
  Xxh3Fn hash;
};

// The kernel for `isa` (which must be supported) and the live one. xxh3_64 itself runs the AVX2
// loop at the avx512 level (xxh3.cc says why); these give the AVX-512 one there.
const Xxh3Kernel& xxh3_kernel_for(Isa isa);
const Xxh3Kernel& active_xxh3_kernel() noexcept;

// xxh3_64(data, size) for loops that hash long inputs back to back (exact dedup's batches):
// the live kernel, AVX-512 included. The same values.
std::uint64_t xxh3_64_bulk(const void* data, std::size_t size) noexcept;

std::uint64_t xxh3_64_scalar(const void* data, std::size_t size, std::uint64_t seed) noexcept;
std::uint64_t xxh3_64_avx2(const void* data, std::size_t size, std::uint64_t seed) noexcept;
std::uint64_t xxh3_64_avx512(const void* data, std::size_t size, std::uint64_t seed) noexcept;

}  // namespace luminamoon::data::internal
