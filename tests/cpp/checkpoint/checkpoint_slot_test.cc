#include "luminamoon/data/checkpoint/checkpoint_slot.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

CheckpointState sample(std::uint64_t epoch) {
  CheckpointState s;
  s.epoch = epoch;
  s.committed_batch_id = 40 + epoch;
  s.coordinate.shard_id = 2;
  s.coordinate.byte_offset = 1234;
  s.coordinate.global_row_idx = 99;
  s.dedup_count = static_cast<std::uint32_t>(10 * epoch);
  return s;
}

std::vector<std::uint8_t> file_with(const CheckpointState* a, const CheckpointState* b) {
  std::vector<std::uint8_t> file(kMetaFileSize, 0);
  if (a) {
    const auto slot = encode_slot(*a);
    std::memcpy(file.data(), slot.data(), kSlotSize);
  }
  if (b) {
    const auto slot = encode_slot(*b);
    std::memcpy(file.data() + kSlotSize, slot.data(), kSlotSize);
  }
  return file;
}

TEST(CheckpointSlot, LayoutAndCrcMatchZlib) {
  const auto slot = encode_slot(sample(3));
  EXPECT_EQ(std::memcmp(slot.data(), "LMDL", 4), 0);
  EXPECT_EQ(slot[4], 1);  // version 1, little-endian
  EXPECT_EQ(slot[8], 3);  // epoch
  EXPECT_EQ(slot[16], 43);
  EXPECT_EQ(slot[56], 30);  // dedup_count
  const auto crc = static_cast<std::uint32_t>(::crc32(0, slot.data(), 60));
  std::uint32_t stored;
  std::memcpy(&stored, slot.data() + 60, 4);
  EXPECT_EQ(stored, crc);
  const DecodedSlot decoded = decode_slot(slot);
  ASSERT_EQ(decoded.status, SlotStatus::kValid);
  EXPECT_EQ(decoded.state, sample(3));
}

TEST(CheckpointSlot, EpochParityPicksTheSlot) {
  EXPECT_EQ(slot_for_epoch(1), 0);
  EXPECT_EQ(slot_for_epoch(2), 1);
  EXPECT_EQ(slot_for_epoch(3), 0);
}

TEST(CheckpointSlot, EveryFlippedBitInvalidatesTheSlot) {
  const auto good = encode_slot(sample(5));
  for (std::size_t bit = 0; bit < kSlotSize * 8; ++bit) {
    auto slot = good;
    slot[bit / 8] = static_cast<std::uint8_t>(slot[bit / 8] ^ (1u << (bit % 8)));
    EXPECT_EQ(decode_slot(slot).status, SlotStatus::kInvalid) << bit;
  }
}

TEST(CheckpointSlot, ReasonsNameTheProblem) {
  auto slot = encode_slot(sample(1));
  slot[0] = 'X';
  EXPECT_EQ(decode_slot(slot).problem, "bad magic");
  slot = encode_slot(sample(1));
  slot[4] = 2;
  EXPECT_EQ(decode_slot(slot).problem, "unsupported version 2");
  slot = encode_slot(sample(1));
  slot[20] ^= 1;
  EXPECT_NE(decode_slot(slot).problem.find("CRC mismatch"), std::string::npos);
}

TEST(RecoverCheckpoint, PicksTheLargerValidEpoch) {
  const auto s1 = sample(1);
  const auto s2 = sample(2);
  const auto both = recover_checkpoint(file_with(&s1, &s2), "m");
  EXPECT_EQ(both.active_slot, 1);
  EXPECT_EQ(both.state, s2);
  const auto s3 = sample(3);
  const auto newer_a = recover_checkpoint(file_with(&s3, &s2), "m");
  EXPECT_EQ(newer_a.active_slot, 0);
  EXPECT_EQ(newer_a.state, s3);
}

TEST(RecoverCheckpoint, TornSlotFallsBackToThePartner) {
  const auto s1 = sample(1);
  const auto s2 = sample(2);
  auto file = file_with(&s1, &s2);
  file[kSlotSize + 30] ^= 0xFF;  // tear slot B (epoch 2)
  const auto r = recover_checkpoint(file, "m");
  EXPECT_EQ(r.active_slot, 0);
  EXPECT_EQ(r.state, s1);
}

TEST(RecoverCheckpoint, FreshStates) {
  const auto zeros = recover_checkpoint(std::vector<std::uint8_t>(kMetaFileSize, 0), "m");
  EXPECT_EQ(zeros.active_slot, -1);
  EXPECT_EQ(zeros.state, CheckpointState{});
  // First commit torn: slot A garbage, slot B never written -> fresh.
  auto file = std::vector<std::uint8_t>(kMetaFileSize, 0);
  file[3] = 7;
  EXPECT_EQ(recover_checkpoint(file, "m").active_slot, -1);
  for (std::size_t n = 0; n < kMetaFileSize; ++n) {
    const auto r = recover_checkpoint(std::vector<std::uint8_t>(n, 0), "m");
    EXPECT_TRUE(r.needs_initialisation) << n;
  }
}

TEST(RecoverCheckpoint, BothInvalidIsCorruptAndNamesTheFile) {
  auto file = std::vector<std::uint8_t>(kMetaFileSize, 0xAB);
  try {
    recover_checkpoint(file, "/runs/a.meta");
    FAIL() << "expected CorruptCheckpointError";
  } catch (const CorruptCheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/runs/a.meta"), std::string::npos);
    EXPECT_NE(what.find("slot A: bad magic"), std::string::npos);
    EXPECT_NE(what.find("slot B: bad magic"), std::string::npos);
  }
}

TEST(RecoverCheckpoint, WrongSizeWithDataIsCorrupt) {
  for (std::size_t n : {1u, 64u, 127u, 129u, 256u}) {
    std::vector<std::uint8_t> file(n, 0);
    file[0] = 1;
    EXPECT_THROW(recover_checkpoint(file, "m"), CorruptCheckpointError) << n;
  }
}

}  // namespace
}  // namespace luminamoon::data
