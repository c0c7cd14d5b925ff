#include "luminamoon/data/dedup/stream_deduplicator.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

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
