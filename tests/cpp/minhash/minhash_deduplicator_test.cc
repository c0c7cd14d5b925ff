#include "luminamoon/data/minhash/minhash_deduplicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;

// The strings are appended piece by piece, not `"w" + std::to_string(i)`: GCC 12 at -O3 reports
// a bogus -Wrestrict on operator+(const char*, std::string&&) (GCC bug 105329).
std::string words(int first, int count) {
  std::string out;
  for (int i = first; i < first + count; ++i) {
    out += 'w';
    out += std::to_string(i);
    out += ' ';
  }
  return out;
}

// A near-duplicate: 200 words with one substituted (5-shingle Jaccard ~0.95).
std::string base(int id) { return words(id * 1000, 200); }
std::string near(int id) {
  std::string out = words(id * 1000, 100);
  out += "changed ";
  out += words(id * 1000 + 101, 99);
  return out;
}

class MinHashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lm_minhash_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    meta_ = (dir_ / "run.meta").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string companion() {
    std::ifstream in(minhash_companion_path(meta_), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  fs::path dir_;
  std::string meta_;
};

TEST_F(MinHashTest, DefaultsAndValidation) {
  MinHashDeduplicator d;
  EXPECT_EQ(d.shape(), (LshShape{7, 9}));
  EXPECT_EQ(d.value_bits(), 4U);
  EXPECT_EQ(d.min_matches(), 52U);
  MinHashOptions bad;
  bad.threshold = 0.0;
  EXPECT_THROW(MinHashDeduplicator(nullptr, bad), InvalidArgument);
  bad.threshold = 0.8;
  bad.bands = 10;
  bad.rows = 10;
  EXPECT_THROW(MinHashDeduplicator(nullptr, bad), InvalidArgument);
  MinHashOptions one;
  one.bands = 8;  // rows derived: 64 / 8
  EXPECT_EQ(MinHashDeduplicator(nullptr, one).shape(), (LshShape{8, 8}));
}

TEST_F(MinHashTest, StreamingFirstOccurrenceWins) {
  MinHashDeduplicator d;
  EXPECT_TRUE(d.is_unique(base(1)));
  EXPECT_FALSE(d.is_unique(near(1)));
  EXPECT_FALSE(d.is_unique(base(1)));
  EXPECT_TRUE(d.is_unique(base(2)));
  EXPECT_EQ(d.staged_count(), 2U);
  const std::vector<std::string> texts = {base(3), near(3), base(2), base(4), near(4), ""};
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::uint8_t> keep(views.size());
  d.filter_batch(views, keep);
  EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 0, 0, 1, 0, 1}));
  EXPECT_EQ(d.query(near(3)), (std::vector<std::uint64_t>{2}));
  d.rollback();
  EXPECT_EQ(d.size(), 0U);
  EXPECT_TRUE(d.is_unique(near(1)));
  d.commit();
  EXPECT_EQ(d.committed_count(), 1U);
  EXPECT_FALSE(d.is_unique(base(1)));
}

TEST_F(MinHashTest, ClusterGivesFirstIndexOfEachComponent) {
  MinHashDeduplicator d;
  const std::vector<std::string> texts = {base(1), base(2), near(1), near(2), base(3), base(1)};
  std::vector<std::string_view> views(texts.begin(), texts.end());
  EXPECT_EQ(d.cluster(views), (std::vector<std::uint64_t>{0, 1, 0, 1, 4, 0}));
  EXPECT_EQ(d.size(), 0U);  // touches no state
}

// Documents given as code units (as a Python str that is not ASCII reaches the stage): kept
// and dropped as their UTF-8 is; one with a lone surrogate leaves the index as it was, over
// several chunks (512 permutations: 2,048 documents a chunk) and earlier staged documents.
TEST_F(MinHashTest, PendingDocumentsAndALoneSurrogateThatStagesNothing) {
  MinHashOptions options;
  options.config.num_perm = 512;
  const auto prepared = [&] {
    auto d = std::make_unique<MinHashDeduplicator>(nullptr, options);
    for (int i = 1; i <= 3; ++i) EXPECT_TRUE(d->is_unique(base(i)));
    d->commit();
    EXPECT_TRUE(d->is_unique(base(4)));
    EXPECT_TRUE(d->is_unique(base(5)));
    return d;
  };
  // 5,000 documents, every fifth a repeat; the even ones as Latin-1 units ("caf\xe9 " first).
  std::vector<std::string> utf8;
  std::vector<std::vector<std::uint8_t>> latin1;
  for (int i = 0; i < 5000; ++i) {
    const std::string ascii = words((i % 5 == 4 ? i - 1 : i) * 40, 30);
    utf8.push_back("caf\xC3\xA9 " + ascii);
    std::vector<std::uint8_t> units{'c', 'a', 'f', 0xE9, ' '};
    units.insert(units.end(), ascii.begin(), ascii.end());
    latin1.push_back(std::move(units));
  }
  const std::vector<std::string_view> views(utf8.begin(), utf8.end());
  std::vector<std::string_view> given(views.begin(), views.end());
  std::vector<PendingUtf8> pending;
  for (std::size_t i = 0; i < views.size(); i += 2) {
    pending.push_back({i, {latin1[i].data(), latin1[i].size(), 1}});
    given[i] = {};
  }
  auto d = prepared();
  std::vector<std::uint8_t> expected(views.size());
  d->filter_batch(views, expected);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), 1), 4000);
  d = prepared();
  std::vector<std::uint8_t> keep(views.size());
  EXPECT_EQ(d->filter_batch(given, pending, keep), Utf8Encoded::npos);
  EXPECT_EQ(keep, expected);
  EXPECT_EQ(d->staged_count(), 4002U);

  // texts[4500] (pending[2250]) with a lone surrogate, in the third chunk.
  std::vector<std::uint16_t> lone(latin1[4500].begin(), latin1[4500].end());
  lone[1] = 0xD800;
  pending[2250].units = {lone.data(), lone.size(), 2};
  d = prepared();
  EXPECT_EQ(d->filter_batch(given, pending, keep), 2250U);
  EXPECT_EQ(d->committed_count(), 3U);
  EXPECT_EQ(d->staged_count(), 2U);
  EXPECT_FALSE(d->is_unique(base(4)));
  EXPECT_EQ(d->staged_count(), 2U);
  d->filter_batch(views, keep);
  EXPECT_EQ(keep, expected);
  std::size_t first_invalid = 0;
  EXPECT_TRUE(d->cluster(given, pending, first_invalid).empty());
  EXPECT_EQ(first_invalid, 2250U);
  pending[2250].units = {latin1[4500].data(), latin1[4500].size(), 1};
  EXPECT_EQ(d->cluster(given, pending, first_invalid), d->cluster(views));
  EXPECT_EQ(first_invalid, Utf8Encoded::npos);
}

TEST_F(MinHashTest, PersistsThroughTheTrackerAndCutsUncommittedEpochs) {
  {
    StateTracker tracker(meta_, {false, false});
    MinHashDeduplicator d(&tracker);
    EXPECT_TRUE(d.is_unique(base(1)));
    EXPECT_TRUE(d.is_unique(base(2)));
    d.commit();
    EXPECT_EQ(tracker.committed().epoch, 1U);
    EXPECT_TRUE(d.is_unique(base(3)));
    tracker.rollback();
    EXPECT_EQ(d.staged_count(), 0U);
    EXPECT_TRUE(d.is_unique(base(4)));
    EXPECT_TRUE(tracker.has_pending());
    tracker.commit();
    EXPECT_EQ(d.committed_count(), 3U);
  }
  const std::string after_two = companion();
  {
    StateTracker tracker(meta_, {false, false});
    MinHashDeduplicator d(&tracker);
    EXPECT_EQ(d.committed_count(), 3U);
    EXPECT_FALSE(d.is_unique(near(1)));
    EXPECT_FALSE(d.is_unique(near(4)));
    EXPECT_TRUE(d.is_unique(base(3)));
    // A crash after the companion append but before the slot: simulate by preparing by hand.
    d.prepare_commit(tracker.committed().epoch + 1, false);
  }
  EXPECT_GT(companion().size(), after_two.size());
  {
    StateTracker tracker(meta_, {false, false});
    MinHashDeduplicator d(&tracker);
    EXPECT_EQ(d.committed_count(), 3U);  // base(3) was never committed
    EXPECT_TRUE(d.is_unique(base(3)));
  }
  // The writer cut the uncommitted records (a header slot tagged with the lost epoch may stay:
  // it is above the active epoch, and the next commit overwrites that slot).
  const std::string now = companion();
  EXPECT_EQ(now.size(), after_two.size());
  EXPECT_EQ(now.substr(64), after_two.substr(64));
}

TEST_F(MinHashTest, ConfigMismatchAndSecondAttachment) {
  {
    StateTracker tracker(meta_, {false, false});
    MinHashDeduplicator d(&tracker);
    d.is_unique(base(1));
    d.commit();
    EXPECT_THROW(MinHashDeduplicator second(&tracker), Error);
  }
  StateTracker tracker(meta_, {false, false});
  MinHashOptions other;
  other.config.num_perm = 32;
  EXPECT_THROW(MinHashDeduplicator(&tracker, other), ConfigError);
  MinHashOptions full;
  full.store_signatures = true;
  EXPECT_THROW(MinHashDeduplicator(&tracker, full), ConfigError);
  MinHashDeduplicator same(&tracker);  // the failed attempts did not stay registered
  EXPECT_EQ(same.committed_count(), 1U);
}

TEST_F(MinHashTest, ClosedTrackerOrphansTheDeduplicator) {
  StateTracker tracker(meta_, {false, false});
  MinHashDeduplicator d(&tracker);
  d.is_unique(base(1));
  tracker.close();
  EXPECT_EQ(d.tracker(), nullptr);
  EXPECT_THROW(d.commit(), Error);
  EXPECT_THROW(d.rollback(), Error);
  EXPECT_FALSE(d.is_unique(near(1)));  // RAM still answers
}

TEST_F(MinHashTest, ReadOnlyTrackerIsRejected) {
  { StateTracker writer(meta_, {false, false}); }
  StateTracker reader(meta_, {true, false});
  EXPECT_THROW(MinHashDeduplicator d(&reader), Error);
}

TEST_F(MinHashTest, StoredSignaturesVerifyExactly) {
  MinHashOptions o;
  o.store_signatures = true;
  MinHashDeduplicator d(nullptr, o);
  EXPECT_EQ(d.value_bits(), 32U);
  EXPECT_TRUE(d.is_unique(base(1)));
  EXPECT_FALSE(d.is_unique(near(1)));
  EXPECT_GT(d.memory_bytes(), 64U * 4U);
}

TEST_F(MinHashTest, LimitNextCommitCommitsAPrefixOfTheStagedRows) {
  {
    StateTracker tracker(meta_, {false, false});
    MinHashDeduplicator d(&tracker);
    EXPECT_TRUE(d.is_unique(base(1)));
    EXPECT_TRUE(d.is_unique(base(2)));
    EXPECT_TRUE(d.is_unique(base(3)));
    d.limit_next_commit(2);  // base(3) belongs to a batch nobody committed yet
    d.commit();
    EXPECT_EQ(d.committed_count(), 2U);
    EXPECT_EQ(d.staged_count(), 1U);
    d.commit();  // the limit applies to one commit only
    EXPECT_EQ(d.committed_count(), 3U);
    EXPECT_TRUE(d.is_unique(base(4)));
    d.limit_next_commit(0);
    tracker.rollback();  // a rollback clears the limit too
    EXPECT_TRUE(d.is_unique(base(5)));
    d.commit();
    EXPECT_EQ(d.committed_count(), 4U);
  }
  StateTracker tracker(meta_, {false, false});
  MinHashDeduplicator d(&tracker);
  EXPECT_EQ(d.committed_count(), 4U);
  EXPECT_FALSE(d.is_unique(near(3)));
  EXPECT_TRUE(d.is_unique(base(4)));
}

}  // namespace
}  // namespace luminamoon::data
