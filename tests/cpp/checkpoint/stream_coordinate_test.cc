#include "luminamoon/data/checkpoint/stream_coordinate.h"

#include <gtest/gtest.h>

#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

TEST(StreamCoordinate, EncodesLittleEndianWithoutPadding) {
  StreamCoordinate c;
  c.shard_id = 0x01020304;
  c.byte_offset = 0x1112131415161718ULL;
  c.row_group_idx = 0x21222324;
  c.page_idx = 0x31323334;
  c.row_offset_in_page = 0x41424344;
  c.global_row_idx = 0x5152535455565758ULL;
  const std::array<std::uint8_t, 32> expected = {0x04, 0x03, 0x02, 0x01, 0x18, 0x17, 0x16, 0x15,
                                                 0x14, 0x13, 0x12, 0x11, 0x24, 0x23, 0x22, 0x21,
                                                 0x34, 0x33, 0x32, 0x31, 0x44, 0x43, 0x42, 0x41,
                                                 0x58, 0x57, 0x56, 0x55, 0x54, 0x53, 0x52, 0x51};
  EXPECT_EQ(c.to_bytes(), expected);
  EXPECT_EQ(StreamCoordinate::from_bytes(expected), c);
}

TEST(StreamCoordinate, RejectsEveryOtherLength) {
  for (std::size_t n = 0; n <= 64; ++n) {
    if (n == 32) continue;
    const std::vector<std::uint8_t> bytes(n);
    EXPECT_THROW(StreamCoordinate::from_bytes(bytes), InvalidArgument) << n;
  }
}

TEST(StreamCoordinate, ReprMatchesPython) {
  StreamCoordinate c;
  c.shard_id = 3;
  c.global_row_idx = 9;
  EXPECT_EQ(c.repr(),
            "StreamCoordinate(shard_id=3, byte_offset=0, row_group_idx=0, page_idx=0, "
            "row_offset_in_page=0, global_row_idx=9)");
}

}  // namespace
}  // namespace luminamoon::data
