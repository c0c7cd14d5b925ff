// StreamCoordinate: the 32-byte position of a stream (SPEC 3.1). Little-endian, no padding:
//   0..4 shard_id u32 | 4..12 byte_offset u64 | 12..16 row_group_idx u32 | 16..20 page_idx u32
//   20..24 row_offset_in_page u32 | 24..32 global_row_idx u64
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace luminamoon::data {

struct StreamCoordinate {
  static constexpr std::size_t kEncodedSize = 32;

  std::uint32_t shard_id = 0;
  std::uint64_t byte_offset = 0;
  std::uint32_t row_group_idx = 0;
  std::uint32_t page_idx = 0;
  std::uint32_t row_offset_in_page = 0;
  std::uint64_t global_row_idx = 0;

  std::array<std::uint8_t, kEncodedSize> to_bytes() const noexcept;

  // Throws InvalidArgument ("expected 32 bytes, got N") for any other length.
  static StreamCoordinate from_bytes(std::span<const std::uint8_t> bytes);

  // "StreamCoordinate(shard_id=0, byte_offset=0, ...)", identical to the Python repr.
  std::string repr() const;

  friend bool operator==(const StreamCoordinate&, const StreamCoordinate&) = default;
};

}  // namespace luminamoon::data
