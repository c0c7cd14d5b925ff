#include "luminamoon/data/checkpoint/state_tracker.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/xxh3.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;

class StateTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lm_tracker_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    meta_ = (dir_ / "run.meta").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }

  fs::path dir_;
  std::string meta_;
};

StreamCoordinate coord(std::uint64_t row) {
  StreamCoordinate c;
  c.shard_id = 1;
  c.byte_offset = row * 100;
  c.global_row_idx = row;
  return c;
}

TEST_F(StateTrackerTest, CreatesA128ByteZeroFileAndStartsFresh) {
  StateTracker t(meta_);
  EXPECT_EQ(t.committed(), CheckpointState{});
  EXPECT_EQ(t.active_slot(), -1);
  EXPECT_EQ(read_file(meta_), std::string(128, '\0'));
  EXPECT_TRUE(fs::exists(meta_ + ".dedup"));
}

TEST_F(StateTrackerTest, CommitsAlternateSlotsAndReopenRecovers) {
  {
    StateTracker t(meta_);
    t.update(10, coord(10));
    EXPECT_EQ(t.commit(), 1u);
    EXPECT_EQ(t.active_slot(), 0);
    t.update(11, coord(11));
    EXPECT_EQ(t.commit(), 2u);
    EXPECT_EQ(t.active_slot(), 1);
    const std::string bytes = read_file(meta_);
    EXPECT_EQ(bytes.substr(0, 64),
              std::string(reinterpret_cast<const char*>(
                              encode_slot(CheckpointState{1, 10, coord(10), 0}).data()),
                          64));
  }
  StateTracker again(meta_);
  EXPECT_EQ(again.committed().epoch, 2u);
  EXPECT_EQ(again.committed().committed_batch_id, 11u);
  EXPECT_EQ(again.committed().coordinate, coord(11));
}

TEST_F(StateTrackerTest, SecondWriterIsRefusedButReadersAreNot) {
  StateTracker writer(meta_);
  EXPECT_THROW(StateTracker second(meta_), CheckpointLockedError);
  StateTracker reader(meta_, {.read_only = true, .durable = true});
  EXPECT_EQ(reader.committed().epoch, 0u);
  EXPECT_THROW(reader.update(1, coord(1)), Error);
  EXPECT_THROW(reader.commit(), Error);
}

TEST_F(StateTrackerTest, RollbackDropsStagedPosition) {
  StateTracker t(meta_);
  t.update(5, coord(5));
  EXPECT_TRUE(t.has_pending());
  t.rollback();
  EXPECT_FALSE(t.has_pending());
  t.commit();
  EXPECT_EQ(t.committed().committed_batch_id, 0u);
  EXPECT_EQ(t.committed().coordinate, StreamCoordinate{});
}

TEST_F(StateTrackerTest, DedupCommitWritesWalInStagingOrder) {
  {
    StateTracker t(meta_);
    StreamDeduplicator d(&t);
    const std::vector<std::string_view> docs = {"b", "a", "b", "c"};
    std::vector<std::uint8_t> keep(docs.size());
    d.filter_batch(docs, keep);
    EXPECT_EQ(keep, (std::vector<std::uint8_t>{1, 1, 0, 1}));
    t.update(1, coord(4));
    t.commit();
    EXPECT_EQ(t.committed().dedup_count, 3u);
    EXPECT_EQ(d.committed_count(), 3u);
    EXPECT_EQ(d.staged_count(), 0u);
    const std::string wal = read_file(meta_ + ".dedup");
    ASSERT_EQ(wal.size(), 24u);
    std::uint64_t first;
    std::memcpy(&first, wal.data(), 8);
    EXPECT_EQ(first, xxh3_64(std::string_view("b")));
  }
  StateTracker t(meta_);
  StreamDeduplicator d(&t);
  EXPECT_EQ(d.committed_count(), 3u);
  EXPECT_FALSE(d.is_unique("a"));
  EXPECT_TRUE(d.is_unique("z"));
}

TEST_F(StateTrackerTest, UncommittedWalTailIsCutOnOpen) {
  {
    StateTracker t(meta_);
    StreamDeduplicator d(&t);
    d.is_unique("x");
    t.commit();
  }
  write_file(meta_ + ".dedup", read_file(meta_ + ".dedup") + std::string(13, '\x7f'));
  {
    StateTracker t(meta_);
    EXPECT_EQ(fs::file_size(meta_ + ".dedup"), 8u);
  }
}

TEST_F(StateTrackerTest, ShortWalIsCorrupt) {
  {
    StateTracker t(meta_);
    StreamDeduplicator d(&t);
    d.is_unique("x");
    d.is_unique("y");
    t.commit();
  }
  write_file(meta_ + ".dedup", read_file(meta_ + ".dedup").substr(0, 12));
  EXPECT_THROW(StateTracker t(meta_), CorruptCheckpointError);
  fs::remove(meta_ + ".dedup");
  EXPECT_THROW(StateTracker t(meta_), CorruptCheckpointError);
}

TEST_F(StateTrackerTest, OneTrackerOneDeduplicator) {
  StateTracker t(meta_);
  StreamDeduplicator d(&t);
  EXPECT_THROW(StreamDeduplicator second(&t), Error);
}

TEST_F(StateTrackerTest, ClosedTrackerOrphansItsDeduplicator) {
  StateTracker t(meta_);
  StreamDeduplicator d(&t);
  t.close();
  EXPECT_THROW(d.commit(), Error);
  EXPECT_THROW(t.committed(), Error);
}

TEST_F(StateTrackerTest, OversizedFileIsCorrupt) {
  write_file(meta_, std::string(129, '\0'));
  EXPECT_THROW(StateTracker t(meta_), CorruptCheckpointError);
}

TEST_F(StateTrackerTest, ShortZeroFileIsReinitialised) {
  write_file(meta_, std::string(17, '\0'));
  { StateTracker t(meta_); }
  EXPECT_EQ(read_file(meta_), std::string(128, '\0'));
}

}  // namespace
}  // namespace luminamoon::data
