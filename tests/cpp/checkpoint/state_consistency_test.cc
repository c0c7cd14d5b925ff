// Cross-file consistency of a checkpoint (issue 13): a wiped .meta beside files that prove a
// commit, companions registered in `<meta>.participants` that must join every commit, headers
// more than one epoch ahead, non-regular files, and batch ids that go back.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "luminamoon/data/checkpoint/epoch_log.h"
#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;

class StateConsistency : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lm_consistency_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    meta_ = (dir_ / "run.meta").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  void commits(int n) {
    StateTracker tracker(meta_, {.read_only = false, .durable = false});
    StreamDeduplicator dedup(&tracker);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < 10; ++j) dedup.is_unique("doc " + std::to_string(i * 10 + j));
      tracker.commit();
    }
  }
  std::string open_error(bool read_only) {
    try {
      StateTracker t(meta_, {.read_only = read_only, .durable = false});
    } catch (const CorruptCheckpointError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
  std::string meta_;
};

// A participant with a companion EpochLog, like MinHashDeduplicator but minimal.
class FakeCompanion final : public CommitParticipant {
 public:
  FakeCompanion(StateTracker& tracker, const std::string& path) : tracker_(&tracker) {
    log_ = std::make_unique<EpochLog>(path, tracker.committed().epoch, false, false,
                                      tracker.companion_history("fake"));
    records_ = log_->take_committed_records().size();
    tracker.attach_participant(this);
  }
  ~FakeCompanion() override {
    if (tracker_ != nullptr) tracker_->detach_participant(this);
  }
  bool has_staged() const override { return staged_; }
  void prepare_commit(std::uint64_t epoch, bool) override {
    std::vector<std::vector<std::uint8_t>> payloads;
    if (staged_) payloads.push_back({1, 2, 3});
    log_->prepare_commit(epoch, payloads);
  }
  void finish_commit() noexcept override {
    log_->finish_commit();
    records_ += staged_ ? 1 : 0;
    staged_ = false;
  }
  void drop_staged() noexcept override { staged_ = false; }
  void tracker_closed() noexcept override { tracker_ = nullptr; }
  std::string_view companion_kind() const noexcept override { return "fake"; }

  bool staged_ = false;
  std::size_t records_ = 0;

 private:
  StateTracker* tracker_;
  std::unique_ptr<EpochLog> log_;
};

TEST_F(StateConsistency, WipedMetaIsCorruptAndNothingIsTruncated) {
  commits(3);
  const std::string wal = read(meta_ + ".dedup");
  ASSERT_EQ(wal.size(), 240u);
  for (const std::string& wiped : {std::string(), std::string(128, '\0')}) {
    write(meta_, wiped);
    for (const bool read_only : {true, false}) {
      const std::string message = open_error(read_only);
      EXPECT_NE(message.find("it holds no committed slot"), std::string::npos) << message;
      EXPECT_NE(message.find(meta_ + ".participants records epoch 2"), std::string::npos);
      EXPECT_NE(message.find(meta_ + ".dedup holds 240 bytes (30 hashes)"), std::string::npos);
      EXPECT_EQ(read(meta_ + ".dedup"), wal);
      EXPECT_EQ(read(meta_), wiped);
    }
  }
}

TEST_F(StateConsistency, TornFirstCommitStillOpensFresh) {
  commits(1);
  EXPECT_FALSE(fs::exists(meta_ + ".participants"));  // commit 1 proves nothing yet
  write(meta_, std::string(128, '\0'));
  StateTracker t(meta_, {.read_only = false, .durable = false});
  EXPECT_EQ(t.committed().epoch, 0u);
  EXPECT_EQ(fs::file_size(meta_ + ".dedup"), 0u);  // the uncommitted hashes are cut
}

TEST_F(StateConsistency, RegisteredCompanionJoinsEveryCommit) {
  const std::string companion = meta_ + ".fake";
  {
    StateTracker tracker(meta_, {.read_only = false, .durable = false});
    tracker.commit();  // epoch 1 without the companion: it is not registered yet
    {
      FakeCompanion fake(tracker, companion);
      fake.staged_ = true;
      tracker.commit();  // epoch 2: registers "fake"
      tracker.commit();  // epoch 3
    }
    EXPECT_EQ(tracker.companion_history("fake"), CompanionHistory::kJoinedEveryCommit);
    EXPECT_THROW(tracker.commit(), Error);  // the companion would fall behind
    FakeCompanion again(tracker, companion);
    EXPECT_EQ(again.records_, 1u);
    EXPECT_EQ(tracker.commit(), 4u);
  }
  const std::string good = read(companion);
  // A stale companion (its epoch-4 header gone) and a missing one are corruption.
  // Headers: epoch 2 -> slot 0, 3 -> slot 1, 4 -> slot 0. One flipped bit in the newest leaves
  // epoch 3 governing while the checkpoint is at 4.
  std::string stale = good;
  stale[9] = static_cast<char>(stale[9] ^ 1);
  for (const std::string& damaged : {std::string(), stale, std::string("x")}) {
    write(companion, damaged);
    StateTracker tracker(meta_, {.read_only = false, .durable = false});
    EXPECT_THROW(FakeCompanion(tracker, companion), CorruptCheckpointError);
  }
  fs::remove(companion);
  StateTracker tracker(meta_, {.read_only = false, .durable = false});
  try {
    FakeCompanion fake(tracker, companion);
    ADD_FAILURE() << "a missing registered companion opened";
  } catch (const CorruptCheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("it is missing"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(companion));  // not recreated
}

TEST_F(StateConsistency, HeaderMoreThanOneEpochAheadIsCorrupt) {
  std::vector<std::uint8_t> file(kEpochLogHeaderSize, 0);
  const auto slot = encode_epoch_log_slot({5, kEpochLogHeaderSize});
  std::copy(slot.begin(), slot.end(), file.begin());
  EXPECT_EQ(decode_epoch_log(file, 4, "x").header_slot, -1);  // an aborted commit of epoch 5
  EXPECT_EQ(decode_epoch_log(file, 5, "x").header_slot, 0);
  EXPECT_THROW(decode_epoch_log(file, 3, "x"), CorruptCheckpointError);
  EXPECT_EQ(newest_epoch_log_header(file), 5u);
}

TEST_F(StateConsistency, NonRegularFilesAreNamed) {
  commits(1);
  fs::remove(meta_ + ".dedup");
  ASSERT_EQ(::mkfifo((meta_ + ".dedup").c_str(), 0600), 0);
  for (const bool read_only : {true, false}) {
    EXPECT_NE(open_error(read_only).find("WAL (.dedup) is a FIFO, not a regular file"),
              std::string::npos);
  }
  const std::string dev = (dir_ / "dev.meta").string();
  fs::create_symlink("/dev/zero", dev);
  EXPECT_THROW(StateTracker(dev, {.read_only = true, .durable = false}), CorruptCheckpointError);
}

TEST_F(StateConsistency, BatchIdsNeverGoBack) {
  StateTracker t(meta_, {.read_only = false, .durable = false});
  t.update(7, StreamCoordinate{});
  t.commit();
  t.update(7, StreamCoordinate{});
  EXPECT_THROW(t.update(6, StreamCoordinate{}), InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
