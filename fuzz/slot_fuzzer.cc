// Fuzz target: the .meta slot decoder and SPEC 3.2 recovery over arbitrary file contents.
// Valid slots must re-encode to the same bytes; recovery may only return or throw
// CorruptCheckpointError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "luminamoon/data/checkpoint/checkpoint_slot.h"
#include "luminamoon/data/common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  if (size >= kSlotSize) {
    const std::span<const std::uint8_t, kSlotSize> slot(data, kSlotSize);
    const DecodedSlot decoded = decode_slot(slot);
    if (decoded.status == SlotStatus::kValid) {
      const auto again = encode_slot(decoded.state);
      if (std::memcmp(again.data(), data, kSlotSize) != 0) std::abort();
    }
  }
  try {
    const RecoveredCheckpoint r = recover_checkpoint({data, size}, "fuzz.meta");
    if (r.active_slot > 1 || r.active_slot < -1) std::abort();
  } catch (const CorruptCheckpointError&) {
  }
  return 0;
}
