// MinHash signature kernels, one implementation per ISA (kernels_scalar.cc is the reference;
// kernels_avx2.cc and kernels_avx512.cc must produce exactly the same values for every input).
// ISA code is enabled per function with target attributes in its own translation unit, never by
// global -mavx2/-march flags.
#pragma once

#include <cstddef>
#include <cstdint>

#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::minhash_internal {

// For every permutation i < num_perm:
//   mins[i] = min(mins[i], min over j < count of (u32)(((a[i] * hashes[j] + b[i]) mod 2^64) >> 32))
// count may be 0; the arrays do not overlap.
using MinHashUpdateFn = void (*)(const std::uint64_t* hashes, std::size_t count,
                                 const std::uint64_t* a, const std::uint64_t* b,
                                 std::uint32_t* mins, std::size_t num_perm);

// The same update for word shingles given as ranges of the normalised text, hashed in the kernel
// (shingle_hash.h) as it goes: shingle k < count is text[starts[k], starts[k + ngram] - 1) (word
// shingles are one space apart, see Shingler). Hashing is scalar integer work and the update
// vector multiplies, so in one loop the CPU overlaps the two, where a chunk of hashes first and
// then the update ran them one after the other.
using MinHashUpdateWordsFn = void (*)(const char* text, const std::size_t* starts,
                                      std::size_t count, std::size_t ngram, const std::uint64_t* a,
                                      const std::uint64_t* b, std::uint32_t* mins,
                                      std::size_t num_perm);

struct MinHashKernel {
  Isa isa;  // the ISA whose code runs (kNeon runs the scalar kernel, see kernels_dispatch.cc)
  MinHashUpdateFn update;
  MinHashUpdateWordsFn update_words;
};

// The kernel for `isa` (which must be supported: see isa_supported), and the live one.
const MinHashKernel& minhash_kernel_for(Isa isa);
const MinHashKernel& active_minhash_kernel();

void minhash_update_scalar(const std::uint64_t* hashes, std::size_t count, const std::uint64_t* a,
                           const std::uint64_t* b, std::uint32_t* mins, std::size_t num_perm);
void minhash_update_avx2(const std::uint64_t* hashes, std::size_t count, const std::uint64_t* a,
                         const std::uint64_t* b, std::uint32_t* mins, std::size_t num_perm);
void minhash_update_avx512(const std::uint64_t* hashes, std::size_t count, const std::uint64_t* a,
                           const std::uint64_t* b, std::uint32_t* mins, std::size_t num_perm);

// update_words by hashing into chunks and calling `update` (scalar and AVX2, and AVX-512 for
// num_perm values its fused loops do not cover).
void minhash_update_words_chunked(MinHashUpdateFn update, const char* text,
                                  const std::size_t* starts, std::size_t count, std::size_t ngram,
                                  const std::uint64_t* a, const std::uint64_t* b,
                                  std::uint32_t* mins, std::size_t num_perm);
void minhash_update_words_scalar(const char* text, const std::size_t* starts, std::size_t count,
                                 std::size_t ngram, const std::uint64_t* a, const std::uint64_t* b,
                                 std::uint32_t* mins, std::size_t num_perm);
void minhash_update_words_avx2(const char* text, const std::size_t* starts, std::size_t count,
                               std::size_t ngram, const std::uint64_t* a, const std::uint64_t* b,
                               std::uint32_t* mins, std::size_t num_perm);
void minhash_update_words_avx512(const char* text, const std::size_t* starts, std::size_t count,
                                 std::size_t ngram, const std::uint64_t* a, const std::uint64_t* b,
                                 std::uint32_t* mins, std::size_t num_perm);

}  // namespace luminamoon::data::minhash_internal
