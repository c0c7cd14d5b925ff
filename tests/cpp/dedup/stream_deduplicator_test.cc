#include "luminamoon/data/dedup/stream_deduplicator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/utf8_encode.h"
#include "luminamoon/data/common/xxh3.h"

namespace luminamoon::data {
namespace {

TEST(StreamDeduplicator, FirstOccurrenceWinsWithinAndAcrossBatches) {
  StreamDeduplicator d;
  std::vector<std::string_view> batch = {"a", "b", "a", "", ""};
  std::vector<std::uint8_t> keep(batch.size());
  d.filter_batch(batch, keep);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 1, 0, 1, 0}));
  EXPECT_EQ(d.staged_count(), 3u);
  d.commit();
  EXPECT_EQ(d.committed_count(), 3u);
  EXPECT_FALSE(d.is_unique("b"));
  EXPECT_TRUE(d.is_unique("c"));
  EXPECT_TRUE(d.contains("c"));
  d.rollback();
  EXPECT_FALSE(d.contains("c"));
  EXPECT_EQ(d.size(), 3u);
}

TEST(StreamDeduplicator, AnswersDoNotDependOnThreadCount) {
  std::mt19937_64 rng(7);
  std::vector<std::string> storage;
  for (int i = 0; i < 200000; ++i) storage.push_back(std::to_string(rng() % 50000));
  std::vector<std::string_view> docs(storage.begin(), storage.end());
  std::vector<std::uint8_t> reference(docs.size());
  StreamDeduplicator one(nullptr, {.threads = 1});
  one.filter_batch(docs, reference);
  for (unsigned threads : {2u, 3u, 8u}) {
    StreamDeduplicator many(nullptr, {.threads = threads});
    std::vector<std::uint8_t> keep(docs.size());
    many.filter_batch(docs, keep);
    EXPECT_EQ(keep, reference) << threads;
  }
}

TEST(HashDocuments, MatchesSequentialHashing) {
  std::vector<std::string> storage;
  for (int i = 0; i < 70000; ++i) storage.push_back("doc " + std::to_string(i));
  std::vector<std::string_view> docs(storage.begin(), storage.end());
  std::vector<std::uint64_t> hashes(docs.size());
  hash_documents(docs, hashes, 4);
  for (std::size_t i = 0; i < docs.size(); ++i) ASSERT_EQ(hashes[i], xxh3_64(docs[i]));
}

TEST(HashDocuments, LongDocumentsMatchSequentialHashingOnEveryThreadCount) {
  // ~8 KB documents: the job is sized by bytes, so 600 of them are spread over the workers.
  std::vector<std::string> storage;
  for (std::size_t i = 0; i < 600; ++i)
    storage.push_back(std::string(7000 + i, 'a') + std::to_string(i));
  std::vector<std::string_view> docs(storage.begin(), storage.end());
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    std::vector<std::uint64_t> hashes(docs.size());
    hash_documents(docs, hashes, threads);
    for (std::size_t i = 0; i < docs.size(); ++i) ASSERT_EQ(hashes[i], xxh3_64(docs[i])) << threads;
  }
}

// Code units of `points` in `width` bytes each (host order), as a CPython str keeps them.
std::vector<unsigned char> units_of(const std::u32string& points, unsigned width) {
  std::vector<unsigned char> units(points.size() * width);
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::uint32_t c = points[k];
    if (width == 1) units[k] = static_cast<unsigned char>(c);
    if (width == 2) {
      const auto u = static_cast<std::uint16_t>(c);
      std::memcpy(units.data() + 2 * k, &u, 2);
    }
    if (width == 4) std::memcpy(units.data() + 4 * k, &c, 4);
  }
  return units;
}

TEST(HashCodeUnits, EqualsTheHashOfTheEncodedTextOnEveryThreadCount) {
  std::mt19937_64 rng(17);
  const std::u32string alphabet[] = {U"abc d\u00e9\u00ff", U"ab \u20ac\u0416\u4e2d",
                                     U"a \U0001F600\u00e9"};
  std::vector<std::vector<unsigned char>> storage;
  std::vector<CodeUnits> docs;
  std::vector<std::uint64_t> expected;
  for (int i = 0; i < 900; ++i) {
    const unsigned form = static_cast<unsigned>(i % 3);
    const unsigned width = form == 0 ? 1 : form == 1 ? 2 : 4;
    std::u32string points;
    const std::size_t length = i % 50 == 0 ? 0 : 1 + rng() % 9000;
    for (std::size_t k = 0; k < length; ++k) {
      points.push_back(alphabet[form][rng() % alphabet[form].size()]);
    }
    storage.push_back(units_of(points, width));
    docs.push_back({storage.back().data(), points.size(), width});
    std::vector<char> utf8(utf8_encode_capacity(points.size(), width));
    const Utf8Encoded e = encode_utf8(storage.back().data(), points.size(), width, utf8.data());
    expected.push_back(xxh3_64(std::string_view(utf8.data(), e.size)));
  }
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    std::vector<std::uint64_t> hashes(docs.size());
    EXPECT_EQ(hash_code_units(docs, hashes, threads), Utf8Encoded::npos);
    EXPECT_EQ(hashes, expected) << threads;
  }
}

TEST(HashCodeUnits, ReportsTheFirstDocumentWithALoneSurrogateWhateverTheThreads) {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<CodeUnits> docs;
  for (std::size_t i = 0; i < 2000; ++i) {
    std::u32string points(4000, U'x');
    if (i == 1500 || i == 1900 || i == 1999) points[i % 4000] = 0xDC80;
    storage.push_back(units_of(points, 2));
    docs.push_back({storage.back().data(), points.size(), 2});
  }
  for (unsigned threads : {1u, 2u, 4u}) {
    std::vector<std::uint64_t> hashes(docs.size());
    EXPECT_EQ(hash_code_units(docs, hashes, threads), 1500u) << threads;
    // Hashed all the same, in the form encode_utf8 writes (surrogatepass: ED B2 80).
    std::string expected(4000, 'x');
    expected.replace(1500, 1, "\xED\xB2\x80");
    EXPECT_EQ(hashes[1500], xxh3_64(expected));
  }
}

TEST(HashCodeUnits, RejectsBadArguments) {
  const unsigned char units[4] = {'a', 'b', 'c', 'd'};
  std::vector<CodeUnits> docs = {{units, 4, 1}};
  std::vector<std::uint64_t> none;
  EXPECT_THROW(hash_code_units(docs, none, 1), InvalidArgument);
  std::vector<std::uint64_t> one(1);
  docs[0].width = 3;
  EXPECT_THROW(hash_code_units(docs, one, 1), InvalidArgument);
  docs[0].width = 1;
  EXPECT_EQ(hash_code_units(docs, one, 1), Utf8Encoded::npos);
  EXPECT_EQ(one[0], xxh3_64(std::string_view("abcd")));
}

TEST(StreamDeduplicator, MemoryIsReported) {
  StreamDeduplicator d;
  for (int i = 0; i < 1000; ++i)
    d.is_unique_hash(static_cast<std::uint64_t>(i) * std::uint64_t{0x9E3779B97F4A7C15});
  EXPECT_GE(d.memory_bytes(), 1000u * 9u);
}

TEST(StreamDeduplicator, LimitNextCommitCommitsAPrefixOfTheStagedHashes) {
  StreamDeduplicator d;
  for (const char* doc : {"a", "b", "c", "d"}) EXPECT_TRUE(d.is_unique(doc));
  d.limit_next_commit(3);
  d.commit();
  EXPECT_EQ(d.committed_count(), 3u);
  EXPECT_EQ(d.staged_count(), 1u);
  d.rollback();  // drops "d" only
  EXPECT_FALSE(d.contains("d"));
  EXPECT_FALSE(d.is_unique("c"));
  EXPECT_TRUE(d.is_unique("d"));
  d.limit_next_commit(0);
  d.rollback();  // clears the limit
  EXPECT_TRUE(d.is_unique("e"));
  d.commit();
  EXPECT_EQ(d.committed_count(), 4u);
}

}  // namespace
}  // namespace luminamoon::data
