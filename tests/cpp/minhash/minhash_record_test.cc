#include "luminamoon/data/minhash/minhash_record.h"

#include <gtest/gtest.h>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

MinHashRecordHeader header(std::uint32_t num_perm, std::uint32_t bits, std::uint32_t count) {
  MinHashRecordHeader h;
  h.config = MinHashConfig{num_perm, ShingleKind::kChar, 7, 0x0102030405060708ULL};
  h.value_bits = bits;
  h.first_doc = 3;
  h.count = count;
  return h;
}

TEST(MinHashRecord, GoldenBytes) {
  const std::vector<std::uint8_t> rows = {0x21, 0x03, 0x54, 0x06};  // 2 rows of 3 nibbles
  const auto bytes = encode_minhash_record(header(3, 4, 2), rows);
  const std::vector<std::uint8_t> expected = {'L',  'M',  'M',  'H', 1, 0, 1, 4,
                                              3,    0,    7,    0,   0, 0, 0, 0,  // magic..reserved
                                              8,    7,    6,    5,   4, 3, 2, 1,  // seed
                                              3,    0,    0,    0,   0, 0, 0, 0,  // first_doc
                                              2,    0,    0,    0,   0, 0, 0, 0,  // count, reserved
                                              0x21, 0x03, 0x54, 0x06};
  EXPECT_EQ(bytes, expected);
  const auto decoded = decode_minhash_record(bytes, "x");
  EXPECT_EQ(decoded.header.config, header(3, 4, 2).config);
  EXPECT_EQ(decoded.header.first_doc, 3U);
  EXPECT_EQ(decoded.header.count, 2U);
  EXPECT_EQ(std::vector<std::uint8_t>(decoded.rows.begin(), decoded.rows.end()), rows);
}

TEST(MinHashRecord, RejectsMalformedRecords) {
  const std::vector<std::uint8_t> rows = {0x21, 0x03, 0x54, 0x06};
  const auto good = encode_minhash_record(header(3, 4, 2), rows);
  auto expect_corrupt = [](std::vector<std::uint8_t> bytes) {
    EXPECT_THROW(decode_minhash_record(bytes, "x"), CorruptCheckpointError);
  };
  expect_corrupt({});
  expect_corrupt(std::vector<std::uint8_t>(good.begin(), good.begin() + 39));
  expect_corrupt(std::vector<std::uint8_t>(good.begin(), good.end() - 1));
  for (const std::size_t offset : {0U, 4U, 6U, 7U, 8U, 9U, 11U, 12U, 36U}) {
    auto bad = good;
    bad[offset] = 0xEE;
    expect_corrupt(bad);
  }
  auto padding = good;
  padding[41] = 0x13;  // high nibble of the first row's last byte is padding (num_perm 3)
  expect_corrupt(padding);
  auto zero_perm = good;
  zero_perm[8] = 0;
  expect_corrupt(zero_perm);
}

}  // namespace
}  // namespace luminamoon::data
