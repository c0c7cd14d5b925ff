// Every MinHash kernel this CPU can run gives exactly the scalar reference's values, also where it
// hashes word shingles itself (update_words).
#include "minhash/internal/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "luminamoon/data/common/xxh3.h"

namespace luminamoon::data::minhash_internal {
namespace {

class MinHashKernelIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(MinHashKernelIsa, MatchesScalarOnRandomInputs) {
  const MinHashKernel& kernel = minhash_kernel_for(GetParam());
  std::mt19937_64 rng(11);
  for (const std::size_t perms : std::vector<std::size_t>{
           1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 72, 128, 130, 200, 512}) {
    for (const std::size_t count : std::vector<std::size_t>{0, 1, 2, 3, 17, 512, 777}) {
      std::vector<std::uint64_t> hashes(count);
      std::vector<std::uint64_t> a(perms);
      std::vector<std::uint64_t> b(perms);
      std::vector<std::uint32_t> start(perms);
      for (auto& x : hashes) x = rng();
      for (auto& x : a) x = rng() | 1U;
      for (auto& x : b) x = rng();
      for (std::size_t i = 0; i < perms; ++i) {
        // Fresh minima, and carried-in ones (a second chunk of the same document).
        start[i] = (i % 3 == 0) ? 0xFFFFFFFFU : static_cast<std::uint32_t>(rng());
      }
      // Edge values the wrap-around arithmetic must get right.
      if (count > 2) {
        hashes[0] = 0;
        hashes[1] = ~std::uint64_t{0};
      }
      std::vector<std::uint32_t> expected = start;
      std::vector<std::uint32_t> got = start;
      minhash_update_scalar(hashes.data(), count, a.data(), b.data(), expected.data(), perms);
      kernel.update(hashes.data(), count, a.data(), b.data(), got.data(), perms);
      ASSERT_EQ(got, expected) << isa_name(GetParam()) << " perms=" << perms << " count=" << count;
    }
  }
}

// update_words (shingles hashed inside the kernel) equals hashing each shingle with XXH3_64bits
// and the scalar update: every permutation count (the fused AVX-512 loops at 8/16/32/64, the
// chunked path elsewhere), shingle counts around the chunk size, lengths from 1 to ~200 bytes (each
// XXH3 length class) and carried-in minima.
TEST_P(MinHashKernelIsa, UpdateWordsMatchesHashThenScalar) {
  const MinHashKernel& kernel = minhash_kernel_for(GetParam());
  std::mt19937_64 rng(12);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += static_cast<char>('a' + rng() % 26);
  for (const std::size_t perms : std::vector<std::size_t>{1, 7, 8, 16, 24, 32, 63, 64, 65, 128}) {
    for (const std::size_t count : std::vector<std::size_t>{0, 1, 2, 63, 64, 65, 130, 600}) {
      for (const std::size_t ngram : std::vector<std::size_t>{1, 5}) {
        // Token starts with gaps of 1..40 bytes: shingles of 1 to ~200 bytes.
        std::vector<std::size_t> starts(count + ngram);
        std::size_t at = rng() % 16;
        for (auto& s : starts) {
          s = at;
          at += 2 + rng() % 40;
        }
        ASSERT_LT(at, text.size());
        std::vector<std::uint64_t> hashes(count);
        for (std::size_t k = 0; k < count; ++k) {
          hashes[k] = xxh3_64(text.data() + starts[k], starts[k + ngram] - 1 - starts[k]);
        }
        std::vector<std::uint64_t> a(perms);
        std::vector<std::uint64_t> b(perms);
        std::vector<std::uint32_t> start(perms);
        for (auto& x : a) x = rng() | 1U;
        for (auto& x : b) x = rng();
        for (std::size_t i = 0; i < perms; ++i) {
          start[i] = (i % 3 == 0) ? 0xFFFFFFFFU : static_cast<std::uint32_t>(rng());
        }
        std::vector<std::uint32_t> expected = start;
        std::vector<std::uint32_t> got = start;
        minhash_update_scalar(hashes.data(), count, a.data(), b.data(), expected.data(), perms);
        kernel.update_words(text.data(), starts.data(), count, ngram, a.data(), b.data(),
                            got.data(), perms);
        ASSERT_EQ(got, expected) << isa_name(GetParam()) << " perms=" << perms << " count=" << count
                                 << " ngram=" << ngram;
      }
    }
  }
}

// The AVX-512 kernel sorts shingles into XXH3's length classes (17-32, 33-64, the rest) before
// hashing them: every length from 0 to 160 bytes, in shuffled orders, in parts of up to 256
// shingles and across parts, gives the scalar reference's values.
TEST_P(MinHashKernelIsa, UpdateWordsEveryLengthInAnyOrder) {
  const MinHashKernel& kernel = minhash_kernel_for(GetParam());
  std::mt19937_64 rng(13);
  for (const std::size_t perms : std::vector<std::size_t>{8, 16, 32, 64}) {
    for (int round = 0; round < 4; ++round) {
      std::vector<std::size_t> lengths;
      for (std::size_t len = 0; len <= 160; ++len) lengths.push_back(len);
      for (std::size_t extra = 0; extra < 300; ++extra) lengths.push_back(rng() % 80);
      std::shuffle(lengths.begin(), lengths.end(), rng);
      const std::size_t count = round == 0 ? 255 : round == 1 ? 256 : lengths.size();
      lengths.resize(count);
      // ngram 1: shingle k is text[starts[k], starts[k + 1] - 1), one separator byte apart.
      std::string text;
      std::vector<std::size_t> starts;
      for (const std::size_t len : lengths) {
        starts.push_back(text.size());
        for (std::size_t i = 0; i < len; ++i) text += static_cast<char>('a' + rng() % 26);
        text += ' ';
      }
      starts.push_back(text.size());
      std::vector<std::uint64_t> hashes(count);
      for (std::size_t k = 0; k < count; ++k) {
        hashes[k] = xxh3_64(text.data() + starts[k], starts[k + 1] - 1 - starts[k]);
      }
      std::vector<std::uint64_t> a(perms);
      std::vector<std::uint64_t> b(perms);
      for (auto& x : a) x = rng() | 1U;
      for (auto& x : b) x = rng();
      std::vector<std::uint32_t> expected(perms, 0xFFFFFFFFU);
      std::vector<std::uint32_t> got = expected;
      minhash_update_scalar(hashes.data(), count, a.data(), b.data(), expected.data(), perms);
      kernel.update_words(text.data(), starts.data(), count, 1, a.data(), b.data(), got.data(),
                          perms);
      ASSERT_EQ(got, expected) << isa_name(GetParam()) << " perms=" << perms << " count=" << count;
    }
  }
}

TEST(MinHashKernel, ScalarIsTheDefinition) {
  const std::uint64_t h = 0x0123456789ABCDEFULL;
  const std::uint64_t a = 0xFEDCBA9876543211ULL;
  const std::uint64_t b = 0x1111111111111111ULL;
  std::uint32_t m = 0xFFFFFFFFU;
  minhash_update_scalar(&h, 1, &a, &b, &m, 1);
  EXPECT_EQ(m, static_cast<std::uint32_t>((a * h + b) >> 32));
}

TEST(MinHashKernel, ActiveKernelIsSupported) {
  EXPECT_TRUE(isa_supported(active_minhash_kernel().isa));
}

INSTANTIATE_TEST_SUITE_P(SupportedIsas, MinHashKernelIsa, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& param) {
                           return std::string(isa_name(param.param));
                         });

}  // namespace
}  // namespace luminamoon::data::minhash_internal
