// The 128-byte ping-pong checkpoint (SPEC 3.2): Slot A at bytes 0..64, Slot B at 64..128.
//   0..4 magic "LMDL" | 4..8 version u32 = 1 | 8..16 epoch u64 | 16..24 committed_batch_id u64
//   24..56 StreamCoordinate | 56..60 dedup_count u32 | 60..64 CRC-32 (zlib) over bytes 0..60
// Pure functions over bytes, so the recovery rules are testable and fuzzable without files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "luminamoon/data/checkpoint/stream_coordinate.h"

namespace luminamoon::data {

inline constexpr std::size_t kSlotSize = 64;
inline constexpr std::size_t kMetaFileSize = 2 * kSlotSize;
inline constexpr std::uint32_t kSlotVersion = 1;
inline constexpr std::array<std::uint8_t, 4> kSlotMagic = {'L', 'M', 'D', 'L'};

// What one committed slot says.
struct CheckpointState {
  std::uint64_t epoch = 0;
  std::uint64_t committed_batch_id = 0;
  StreamCoordinate coordinate;
  std::uint32_t dedup_count = 0;

  friend bool operator==(const CheckpointState&, const CheckpointState&) = default;
};

enum class SlotStatus { kValid, kNeverWritten, kInvalid };

struct DecodedSlot {
  SlotStatus status = SlotStatus::kNeverWritten;
  CheckpointState state;  // meaningful when status == kValid
  std::string problem;    // why the slot is invalid ("bad magic", "CRC mismatch ...")
};

// Which slot a commit of `epoch` writes: odd -> A (0), even -> B (1).
inline constexpr int slot_for_epoch(std::uint64_t epoch) noexcept { return epoch % 2 == 1 ? 0 : 1; }

std::array<std::uint8_t, kSlotSize> encode_slot(const CheckpointState& state) noexcept;
DecodedSlot decode_slot(std::span<const std::uint8_t, kSlotSize> slot);

// The outcome of opening a .meta file's bytes.
struct RecoveredCheckpoint {
  CheckpointState state;              // the fresh state (all zero) when active_slot < 0
  int active_slot = -1;               // 0 = A, 1 = B, -1 = fresh (no commit ever completed)
  bool needs_initialisation = false;  // short all-zero file: a writer rewrites 128 zero bytes
};

// Applies SPEC 3.2 to the whole file content. `path` only names the file in errors.
// Throws CorruptCheckpointError when the file is the wrong size (and not an interrupted
// creation, i.e. all zeros) or when both slots are non-zero and invalid.
RecoveredCheckpoint recover_checkpoint(std::span<const std::uint8_t> file_bytes,
                                       std::string_view path);

}  // namespace luminamoon::data
