// Fuzz target: decoding an EpochLog companion file for an arbitrary active epoch. Input: bytes
// 0..8 = active epoch (little-endian), the rest = the file. Decoding may only return (and then
// every record lies inside the committed length) or throw CorruptCheckpointError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "luminamoon/data/checkpoint/epoch_log.h"
#include "luminamoon/data/common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  if (size < 8) return 0;
  std::uint64_t epoch;
  std::memcpy(&epoch, data, 8);
  try {
    const DecodedEpochLog log = decode_epoch_log({data + 8, size - 8}, epoch, "fuzz.log");
    std::uint64_t total = kEpochLogHeaderSize;
    for (const auto& r : log.records) total += kEpochLogRecordHeaderSize + r.size();
    if (log.header_slot >= 0 && total != log.header.committed_length) std::abort();
    if (log.header_slot >= 0 && log.header.epoch > epoch) std::abort();
  } catch (const CorruptCheckpointError&) {
  }
  return 0;
}
