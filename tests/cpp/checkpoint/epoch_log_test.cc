#include "luminamoon/data/checkpoint/epoch_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;

using Records = std::vector<std::vector<std::uint8_t>>;

Records recs(std::initializer_list<std::string> texts) {
  Records out;
  for (const auto& t : texts) out.emplace_back(t.begin(), t.end());
  return out;
}

class EpochLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lm_epoch_log_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "index.log").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string bytes() {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write(const std::string& b) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << b;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(EpochLogTest, CommittedRecordsSurviveReopen) {
  {
    EpochLog log(path_, 0, false, true);
    const auto a = recs({"alpha", "", "beta"});
    log.prepare_commit(1, a);
    log.finish_commit();
    const auto b = recs({"gamma"});
    log.prepare_commit(3, b);
    log.finish_commit();
  }
  EpochLog again(path_, 3, false, true);
  EXPECT_EQ(again.take_committed_records(), recs({"alpha", "", "beta", "gamma"}));
}

TEST_F(EpochLogTest, RecordsOfAnEpochAboveTheActiveOneAreCut) {
  std::uint64_t committed_length = 0;
  {
    EpochLog log(path_, 0, false, true);
    const auto a = recs({"kept"});
    log.prepare_commit(1, a);
    log.finish_commit();
    committed_length = log.committed_length();
    const auto b = recs({"uncommitted"});
    log.prepare_commit(2, b);  // the tracker's slot for epoch 2 never landed
  }
  {
    EpochLog reader(path_, 1, true, true);
    EXPECT_EQ(reader.take_committed_records(), recs({"kept"}));
  }
  EpochLog log(path_, 1, false, true);
  EXPECT_EQ(log.take_committed_records(), recs({"kept"}));
  EXPECT_EQ(fs::file_size(path_), committed_length);
  // The header of the uncommitted epoch 2 was zeroed, so it can never count later.
  EXPECT_EQ(bytes().substr(32, 32), std::string(32, '\0'));
  const auto c = recs({"retry"});
  log.prepare_commit(2, c);
  log.finish_commit();
  EpochLog after(path_, 2, true, true);
  EXPECT_EQ(after.take_committed_records(), recs({"kept", "retry"}));
}

TEST_F(EpochLogTest, TornHeaderOnlyDestroysTheOlderSlot) {
  {
    EpochLog log(path_, 0, false, true);
    for (std::uint64_t e = 1; e <= 3; ++e) {
      // Appended, not `"r" + std::to_string(e)`: GCC 12 at -O3 reports a bogus -Wrestrict on
      // operator+(const char*, std::string&&) (GCC bug 105329).
      std::string text = "r";
      text += std::to_string(e);
      const auto r = recs({text});
      log.prepare_commit(e, r);
      log.finish_commit();
    }
  }
  // Epoch 3 went to slot 0 (1 -> slot 0, 2 -> slot 1, 3 -> slot 0). Tear slot 1 (epoch 2).
  std::string b = bytes();
  b[32 + 10] = static_cast<char>(b[32 + 10] ^ 0x55);
  write(b);
  EpochLog log(path_, 3, true, true);
  EXPECT_EQ(log.take_committed_records(), recs({"r1", "r2", "r3"}));
}

TEST_F(EpochLogTest, DamageInsideTheCommittedRegionIsCorrupt) {
  {
    EpochLog log(path_, 0, false, true);
    const auto r = recs({"payload-one", "payload-two"});
    log.prepare_commit(1, r);
    log.finish_commit();
  }
  std::string b = bytes();
  b[kEpochLogHeaderSize + 10] = static_cast<char>(b[kEpochLogHeaderSize + 10] ^ 1);
  write(b);
  EXPECT_THROW(EpochLog(path_, 1, true, true), CorruptCheckpointError);
  write(bytes().substr(0, 70));
  EXPECT_THROW(EpochLog(path_, 1, true, true), CorruptCheckpointError);
}

// The same bytes tests/test_epoch_log.py expects from the Python EpochLog.
TEST_F(EpochLogTest, GoldenBytes) {
  {
    EpochLog log(path_, 0, false, false);
    const auto a = recs({"alpha", "", "beta"});
    log.prepare_commit(1, a);
    log.finish_commit();
    const auto b = recs({"gamma"});
    log.prepare_commit(3, b);
    log.finish_commit();
  }
  const std::string data = bytes();
  std::string hex;
  for (const char ch : data) {
    const auto c = static_cast<unsigned char>(ch);
    static constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  EXPECT_EQ(hex,
            "4c4d454c010000000100000000000000610000000000000000000000774ae6bb"
            "4c4d454c0100000003000000000000006e00000000000000000000008aa3bc03"
            "050000006a39e0d0616c7068610000000000000000040000006304918f626574"
            "610500000071d043c467616d6d61");
}

TEST_F(EpochLogTest, EpochsMustIncrease) {
  EpochLog log(path_, 0, false, false);
  const auto r = recs({"x"});
  log.prepare_commit(2, r);
  log.finish_commit();
  EXPECT_THROW(log.prepare_commit(2, r), InvalidArgument);
}

// A participant whose companion file is an EpochLog, driven by a real StateTracker.
class LogParticipant : public CommitParticipant {
 public:
  LogParticipant(StateTracker& tracker, const std::string& path)
      : tracker_(tracker), log_(path, tracker.committed().epoch, false, true) {
    committed_ = log_.take_committed_records();
    tracker_.attach_participant(this);
  }
  ~LogParticipant() override { tracker_.detach_participant(this); }
  void stage(const std::string& s) { staged_.emplace_back(s.begin(), s.end()); }
  bool has_staged() const override { return !staged_.empty(); }
  void prepare_commit(std::uint64_t epoch, bool) override { log_.prepare_commit(epoch, staged_); }
  void finish_commit() noexcept override {
    log_.finish_commit();
    committed_.insert(committed_.end(), staged_.begin(), staged_.end());
    staged_.clear();
  }
  void drop_staged() noexcept override { staged_.clear(); }
  void tracker_closed() noexcept override { closed_ = true; }
  Records committed_;
  bool closed_ = false;

 private:
  StateTracker& tracker_;
  EpochLog log_;
  Records staged_;
};

TEST_F(EpochLogTest, ParticipantCommitsWithTheTracker) {
  const std::string meta = (dir_ / "run.meta").string();
  {
    StateTracker tracker(meta);
    LogParticipant p(tracker, path_);
    p.stage("a");
    EXPECT_TRUE(tracker.has_pending());
    tracker.commit();
    p.stage("b");
    tracker.rollback();
    EXPECT_FALSE(tracker.has_pending());
    p.stage("c");
    tracker.commit();
    EXPECT_EQ(p.committed_, recs({"a", "c"}));
  }
  StateTracker tracker(meta);
  LogParticipant p(tracker, path_);
  EXPECT_EQ(p.committed_, recs({"a", "c"}));
  tracker.close();
  EXPECT_TRUE(p.closed_);
}

}  // namespace
}  // namespace luminamoon::data
