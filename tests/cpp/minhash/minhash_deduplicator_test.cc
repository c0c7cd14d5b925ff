#include "luminamoon/data/minhash/minhash_deduplicator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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
