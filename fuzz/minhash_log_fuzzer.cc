// Fuzz target: the MinHash index's companion file (`<meta>.minhash`), decoded the way
// MinHashDeduplicator opens it. Input: bytes 0..8 = active epoch (little-endian), the rest = the
// EpochLog file. Invariants: decoding returns or throws CorruptCheckpointError, nothing else; a
// record that decodes re-encodes to the same bytes (the format is canonical); its rows load into
// an LSH index in which every row finds itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "luminamoon/data/checkpoint/epoch_log.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/minhash/minhash_record.h"
#include "minhash/internal/lsh_index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  if (size < 8) return 0;
  std::uint64_t epoch;
  std::memcpy(&epoch, data, 8);
  try {
    const DecodedEpochLog log = decode_epoch_log({data + 8, size - 8}, epoch, "fuzz.minhash");
    for (const auto& payload : log.records) {
      const DecodedMinHashRecord record = decode_minhash_record(payload, "fuzz.minhash");
      const MinHashRecordHeader& h = record.header;
      if (encode_minhash_record(h, record.rows) != payload) std::abort();
      const std::uint32_t rows = h.config.num_perm < 4 ? h.config.num_perm : 4;
      minhash_internal::LshIndex index(h.config.num_perm, LshShape{1, rows}, h.value_bits,
                                       h.config.num_perm);
      index.load_committed(record.rows.data(), h.count);
      index.rebuild_committed();
      const std::size_t row = minhash_row_bytes(h.config.num_perm, h.value_bits);
      for (std::uint32_t i = 0; i < h.count && i < 64; ++i) {
        const auto found = index.candidates(record.rows.data() + std::size_t{i} * row, true);
        bool self = false;
        for (const std::uint64_t id : found) self = self || id == i;
        if (!self) std::abort();
      }
    }
  } catch (const CorruptCheckpointError&) {
  }
  return 0;
}
