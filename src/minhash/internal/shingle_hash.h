// The hash of one shingle: XXH3-64 with seed 0 and the default secret (SPEC.md, MinHash), the
// same function luminamoon::data::xxh3_64 calls (common/xxh3.cc), inlined where shingles are
// hashed: the shingler (shingles.cc) and the kernels that hash word shingles themselves
// (kernels.h, MinHashUpdateWordsFn).
#pragma once

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luminamoon::data::minhash_internal {

// XXH3_64bits' 17-128-byte branch (a word 5-gram is nearly always that long) is written out here,
// so a shingle loop runs without a call and its length tests per shingle. Its 16-byte mix is
// XXH3_mix16B with seed 0, the 64x64->128-bit product folded from one unsigned __int128: GCC
// keeps that in registers, where the header's XXH128_hash_t round trip went through the stack
// (the same value: low half xor high half). tests/cpp/minhash/shingles_test.cc checks it against
// XXH3_64bits at every length from 1 to 300.
#if defined(__SIZEOF_INT128__)
__extension__ using ShingleHashUint128 = unsigned __int128;

[[gnu::always_inline]] inline std::uint64_t shingle_mix16(const xxh_u8* in, const xxh_u8* secret) {
  const ShingleHashUint128 product =
      static_cast<ShingleHashUint128>(XXH_readLE64(in) ^ XXH_readLE64(secret)) *
      (XXH_readLE64(in + 8) ^ XXH_readLE64(secret + 8));
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}
#else
[[gnu::always_inline]] inline std::uint64_t shingle_mix16(const xxh_u8* in, const xxh_u8* secret) {
  return XXH3_mix16B(in, secret, 0);
}
#endif

// XXH3_64bits of 17-32 and of 33-64 bytes (len in that range): its 17-128-byte branch with the
// length tests settled by the caller (the AVX-512 kernel sorts a part's shingles into these two
// classes first: kernels_avx512.cc). The mixes are summed mod 2^64, so their order is free;
// ShingleHashIsXxh3AtEveryLength checks both against XXH3_64bits.
[[gnu::always_inline]] inline std::uint64_t shingle_hash_17to32(const char* p, std::size_t len) {
  const auto* in = reinterpret_cast<const xxh_u8*>(p);
  const xxh_u8* secret = XXH3_kSecret;
  std::uint64_t acc = len * XXH_PRIME64_1;
  acc += shingle_mix16(in, secret);
  acc += shingle_mix16(in + len - 16, secret + 16);
  return XXH3_avalanche(acc);
}

[[gnu::always_inline]] inline std::uint64_t shingle_hash_33to64(const char* p, std::size_t len) {
  const auto* in = reinterpret_cast<const xxh_u8*>(p);
  const xxh_u8* secret = XXH3_kSecret;
  std::uint64_t acc = len * XXH_PRIME64_1;
  acc += shingle_mix16(in + 16, secret + 32);
  acc += shingle_mix16(in + len - 32, secret + 48);
  acc += shingle_mix16(in, secret);
  acc += shingle_mix16(in + len - 16, secret + 16);
  return XXH3_avalanche(acc);
}

[[gnu::always_inline]] inline std::uint64_t shingle_hash(const char* p, std::size_t len) {
  const auto* in = reinterpret_cast<const xxh_u8*>(p);
  if (len - 17 < 112) [[likely]] {  // 17 <= len <= 128
    const xxh_u8* secret = XXH3_kSecret;
    std::uint64_t acc = len * XXH_PRIME64_1;
    if (len > 32) {
      if (len > 64) {
        if (len > 96) {
          acc += shingle_mix16(in + 48, secret + 96);
          acc += shingle_mix16(in + len - 64, secret + 112);
        }
        acc += shingle_mix16(in + 32, secret + 64);
        acc += shingle_mix16(in + len - 48, secret + 80);
      }
      acc += shingle_mix16(in + 16, secret + 32);
      acc += shingle_mix16(in + len - 32, secret + 48);
    }
    acc += shingle_mix16(in, secret);
    acc += shingle_mix16(in + len - 16, secret + 16);
    return XXH3_avalanche(acc);
  }
  return XXH3_64bits(p, len);
}

}  // namespace luminamoon::data::minhash_internal
