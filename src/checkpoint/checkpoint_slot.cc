// Slot codec and the SPEC 3.2 recovery rules (which slot is active, when to raise).
#include "luminamoon/data/checkpoint/checkpoint_slot.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>

#include "../common/internal/little_endian.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {

using internal::load_le;
using internal::store_le;

namespace {

std::uint32_t crc32_ieee(const std::uint8_t* data, std::size_t size) noexcept {
  return static_cast<std::uint32_t>(::crc32(::crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string describe(const DecodedSlot& slot) {
  switch (slot.status) {
    case SlotStatus::kValid:
      return "valid (epoch " + std::to_string(slot.state.epoch) + ")";
    case SlotStatus::kNeverWritten:
      return "never written (all zero)";
    case SlotStatus::kInvalid:
      return slot.problem;
  }
  return "unknown";
}

}  // namespace

std::array<std::uint8_t, kSlotSize> encode_slot(const CheckpointState& state) noexcept {
  std::array<std::uint8_t, kSlotSize> out{};
  std::copy(kSlotMagic.begin(), kSlotMagic.end(), out.begin());
  store_le<std::uint32_t>(out.data() + 4, kSlotVersion);
  store_le<std::uint64_t>(out.data() + 8, state.epoch);
  store_le<std::uint64_t>(out.data() + 16, state.committed_batch_id);
  const auto coord = state.coordinate.to_bytes();
  std::copy(coord.begin(), coord.end(), out.begin() + 24);
  store_le<std::uint32_t>(out.data() + 56, state.dedup_count);
  store_le<std::uint32_t>(out.data() + 60, crc32_ieee(out.data(), 60));
  return out;
}

DecodedSlot decode_slot(std::span<const std::uint8_t, kSlotSize> slot) {
  DecodedSlot out;
  if (std::all_of(slot.begin(), slot.end(), [](std::uint8_t b) { return b == 0; })) {
    out.status = SlotStatus::kNeverWritten;
    return out;
  }
  out.status = SlotStatus::kInvalid;
  if (!std::equal(kSlotMagic.begin(), kSlotMagic.end(), slot.begin())) {
    out.problem = "bad magic";
    return out;
  }
  const auto version = load_le<std::uint32_t>(slot.data() + 4);
  if (version != kSlotVersion) {
    out.problem = "unsupported version " + std::to_string(version);
    return out;
  }
  const auto stored = load_le<std::uint32_t>(slot.data() + 60);
  const auto computed = crc32_ieee(slot.data(), 60);
  if (stored != computed) {
    out.problem = "CRC mismatch (stored " + hex32(stored) + ", computed " + hex32(computed) + ")";
    return out;
  }
  out.status = SlotStatus::kValid;
  out.state.epoch = load_le<std::uint64_t>(slot.data() + 8);
  out.state.committed_batch_id = load_le<std::uint64_t>(slot.data() + 16);
  out.state.coordinate = StreamCoordinate::from_bytes(slot.subspan(24, 32));
  out.state.dedup_count = load_le<std::uint32_t>(slot.data() + 56);
  return out;
}

RecoveredCheckpoint recover_checkpoint(std::span<const std::uint8_t> file_bytes,
                                       std::string_view path) {
  RecoveredCheckpoint out;
  if (file_bytes.size() != kMetaFileSize) {
    const bool all_zero =
        std::all_of(file_bytes.begin(), file_bytes.end(), [](std::uint8_t b) { return b == 0; });
    if (file_bytes.size() < kMetaFileSize && all_zero) {
      // Creation (128 zero bytes) was interrupted before any commit: nothing was committed.
      out.needs_initialisation = true;
      return out;
    }
    throw CorruptCheckpointError("corrupt checkpoint " + std::string(path) + ": expected " +
                                 std::to_string(kMetaFileSize) + " bytes, found " +
                                 std::to_string(file_bytes.size()) +
                                 "; restore it from a backup or delete it to restart from zero");
  }
  const DecodedSlot a = decode_slot(file_bytes.subspan<0, kSlotSize>());
  const DecodedSlot b = decode_slot(file_bytes.subspan<kSlotSize, kSlotSize>());
  const bool a_valid = a.status == SlotStatus::kValid;
  const bool b_valid = b.status == SlotStatus::kValid;
  if (a_valid && (!b_valid || a.state.epoch >= b.state.epoch)) {
    out.state = a.state;
    out.active_slot = 0;
  } else if (b_valid) {
    out.state = b.state;
    out.active_slot = 1;
  } else if (a.status == SlotStatus::kInvalid && b.status == SlotStatus::kInvalid) {
    throw CorruptCheckpointError("corrupt checkpoint " + std::string(path) +
                                 ": both slots are invalid (slot A: " + describe(a) +
                                 "; slot B: " + describe(b) +
                                 "); restore it from a backup or delete it to restart from zero");
  }
  // Otherwise at most one slot was torn and the other never written: the first commit never
  // completed, so the fresh state is the truth.
  return out;
}

}  // namespace luminamoon::data
