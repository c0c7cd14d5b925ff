// Encoding and strict decoding of the MinHash companion records (layout in minhash_record.h).
#include "luminamoon/data/minhash/minhash_record.h"

#include <algorithm>
#include <cstring>

#include "../common/internal/little_endian.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {

using internal::load_le;
using internal::store_le;

namespace {

constexpr std::uint8_t kMagic[4] = {'L', 'M', 'M', 'H'};
constexpr std::uint16_t kVersion = 1;

// u16 fields by bytes: little_endian.h swaps 32- and 64-bit values only.
std::uint16_t load_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | p[1] << 8);
}
void store_u16(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

bool valid_bits(std::uint32_t bits) { return bits == 4 || bits == 8 || bits == 16 || bits == 32; }

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw CorruptCheckpointError("corrupt MinHash index record in " + path + ": " + what +
                               "; committed state is damaged, restore it from a backup");
}

}  // namespace

std::size_t minhash_row_bytes(std::uint32_t num_perm, std::uint32_t value_bits) {
  return (std::size_t{num_perm} * value_bits + 7) / 8;
}

std::vector<std::uint8_t> encode_minhash_record(const MinHashRecordHeader& header,
                                                std::span<const std::uint8_t> rows) {
  const std::size_t need =
      std::size_t{header.count} * minhash_row_bytes(header.config.num_perm, header.value_bits);
  if (rows.size() != need || !valid_bits(header.value_bits)) {
    throw InvalidArgument("encode_minhash_record: " + std::to_string(rows.size()) +
                          " row bytes for " + std::to_string(header.count) + " rows");
  }
  std::vector<std::uint8_t> out(kMinHashRecordHeaderSize + rows.size(), 0);
  std::memcpy(out.data(), kMagic, 4);
  store_u16(out.data() + 4, kVersion);
  out[6] = static_cast<std::uint8_t>(header.config.shingle);
  out[7] = static_cast<std::uint8_t>(header.value_bits);
  store_u16(out.data() + 8, header.config.num_perm);
  store_u16(out.data() + 10, header.config.ngram);
  store_le<std::uint64_t>(out.data() + 16, header.config.seed);
  store_le<std::uint64_t>(out.data() + 24, header.first_doc);
  store_le<std::uint32_t>(out.data() + 32, header.count);
  if (!rows.empty()) std::memcpy(out.data() + kMinHashRecordHeaderSize, rows.data(), rows.size());
  return out;
}

DecodedMinHashRecord decode_minhash_record(std::span<const std::uint8_t> payload,
                                           const std::string& path) {
  if (payload.size() < kMinHashRecordHeaderSize) {
    corrupt(path, "record of " + std::to_string(payload.size()) + " bytes is shorter than its " +
                      std::to_string(kMinHashRecordHeaderSize) + "-byte header");
  }
  const std::uint8_t* p = payload.data();
  if (std::memcmp(p, kMagic, 4) != 0) corrupt(path, "bad magic");
  if (load_u16(p + 4) != kVersion) {
    corrupt(path, "unsupported version " + std::to_string(load_u16(p + 4)));
  }
  DecodedMinHashRecord out;
  MinHashRecordHeader& h = out.header;
  if (p[6] > 1) corrupt(path, "unknown shingle kind " + std::to_string(p[6]));
  h.config.shingle = static_cast<ShingleKind>(p[6]);
  h.value_bits = p[7];
  if (!valid_bits(h.value_bits)) corrupt(path, "value_bits " + std::to_string(h.value_bits));
  h.config.num_perm = load_u16(p + 8);
  h.config.ngram = load_u16(p + 10);
  if (h.config.num_perm < 1 || h.config.num_perm > kMaxNumPerm) {
    corrupt(path, "num_perm " + std::to_string(h.config.num_perm));
  }
  if (h.config.ngram < 1 || h.config.ngram > kMaxNgram) {
    corrupt(path, "ngram " + std::to_string(h.config.ngram));
  }
  if (load_le<std::uint32_t>(p + 12) != 0 || load_le<std::uint32_t>(p + 36) != 0) {
    corrupt(path, "reserved field not zero");
  }
  h.config.seed = load_le<std::uint64_t>(p + 16);
  h.first_doc = load_le<std::uint64_t>(p + 24);
  h.count = load_le<std::uint32_t>(p + 32);
  const std::size_t row = minhash_row_bytes(h.config.num_perm, h.value_bits);
  const std::size_t body = payload.size() - kMinHashRecordHeaderSize;
  if (body % row != 0 || body / row != h.count) {
    corrupt(path, std::to_string(body) + " row bytes for " + std::to_string(h.count) + " rows of " +
                      std::to_string(row) + " bytes");
  }
  out.rows = payload.subspan(kMinHashRecordHeaderSize);
  if (h.value_bits == 4 && (h.config.num_perm & 1U) != 0) {
    // The unused high nibble of every row's last byte is zero in a canonical record.
    for (std::size_t i = 0; i < h.count; ++i) {
      if ((out.rows[i * row + row - 1] & 0xF0) != 0) corrupt(path, "row padding bits not zero");
    }
  }
  return out;
}

}  // namespace luminamoon::data
