// Records of the MinHash index's companion file `<meta path>.minhash`: an EpochLog
// (checkpoint/epoch_log.h) whose records each carry a run of committed index rows. Byte layout
// (little-endian, no padding; docs/minhash.md "Companion file"):
//
//   0..4    magic "LMMH"
//   4..6    version u16 = 1
//   6       shingle u8 (0 = word, 1 = char)
//   7       value_bits u8 (4, 8, 16 or 32)
//   8..10   num_perm u16 (1..512)
//   10..12  ngram u16 (1..256)
//   12..16  reserved u32 = 0
//   16..24  seed u64
//   24..32  first_doc u64: documents committed before this record
//   32..36  count u32: rows in this record
//   36..40  reserved u32 = 0
//   40..    count rows of ceil(num_perm * value_bits / 8) bytes (lsh_index.h pack_row layout)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "luminamoon/data/minhash/minhash_signature.h"

namespace luminamoon::data {

inline constexpr std::size_t kMinHashRecordHeaderSize = 40;
// Rows per record: a commit of more documents writes several records.
inline constexpr std::uint32_t kMinHashRecordMaxRows = 1U << 20;

struct MinHashRecordHeader {
  MinHashConfig config;
  std::uint32_t value_bits = 4;
  std::uint64_t first_doc = 0;
  std::uint32_t count = 0;
};

std::size_t minhash_row_bytes(std::uint32_t num_perm, std::uint32_t value_bits);

// `rows` must hold header.count rows.
std::vector<std::uint8_t> encode_minhash_record(const MinHashRecordHeader& header,
                                                std::span<const std::uint8_t> rows);

struct DecodedMinHashRecord {
  MinHashRecordHeader header;
  std::span<const std::uint8_t> rows;  // into the decoded payload
};

// Throws CorruptCheckpointError naming `path` unless `payload` is a well-formed record (every
// field in range, reserved fields and padding bits zero, length exactly header + rows).
DecodedMinHashRecord decode_minhash_record(std::span<const std::uint8_t> payload,
                                           const std::string& path);

}  // namespace luminamoon::data
