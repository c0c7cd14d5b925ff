// Codec of the 32-byte StreamCoordinate (SPEC 3.1).
#include "luminamoon/data/checkpoint/stream_coordinate.h"

#include "../common/internal/little_endian.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {

using internal::load_le;
using internal::store_le;

std::array<std::uint8_t, StreamCoordinate::kEncodedSize> StreamCoordinate::to_bytes()
    const noexcept {
  std::array<std::uint8_t, kEncodedSize> out{};
  store_le<std::uint32_t>(out.data() + 0, shard_id);
  store_le<std::uint64_t>(out.data() + 4, byte_offset);
  store_le<std::uint32_t>(out.data() + 12, row_group_idx);
  store_le<std::uint32_t>(out.data() + 16, page_idx);
  store_le<std::uint32_t>(out.data() + 20, row_offset_in_page);
  store_le<std::uint64_t>(out.data() + 24, global_row_idx);
  return out;
}

StreamCoordinate StreamCoordinate::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kEncodedSize) {
    throw InvalidArgument("StreamCoordinate.from_bytes: expected 32 bytes, got " +
                          std::to_string(bytes.size()));
  }
  const std::uint8_t* p = bytes.data();
  StreamCoordinate c;
  c.shard_id = load_le<std::uint32_t>(p + 0);
  c.byte_offset = load_le<std::uint64_t>(p + 4);
  c.row_group_idx = load_le<std::uint32_t>(p + 12);
  c.page_idx = load_le<std::uint32_t>(p + 16);
  c.row_offset_in_page = load_le<std::uint32_t>(p + 20);
  c.global_row_idx = load_le<std::uint64_t>(p + 24);
  return c;
}

std::string StreamCoordinate::repr() const {
  return "StreamCoordinate(shard_id=" + std::to_string(shard_id) +
         ", byte_offset=" + std::to_string(byte_offset) +
         ", row_group_idx=" + std::to_string(row_group_idx) +
         ", page_idx=" + std::to_string(page_idx) +
         ", row_offset_in_page=" + std::to_string(row_offset_in_page) +
         ", global_row_idx=" + std::to_string(global_row_idx) + ")";
}

}  // namespace luminamoon::data
