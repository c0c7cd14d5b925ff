// A table of PSHUFB rows, one per 8-bit mask: the byte indices each mask keeps, in order (0x80,
// which writes a zero byte, after them), and how many that is. The UTF-8 encoder's packs
// (utf8_encode_avx2.cc) and the Latin-1 decoder's (utf8_decode_avx2.cc) are built as constants
// of this shape, each from its own rule.
#pragma once

#include <array>
#include <cstdint>

namespace luminamoon::data::internal {

struct ShuffleTable {
  std::array<std::array<std::uint8_t, 16>, 256> shuffle;
  std::array<std::uint8_t, 256> length;
};

}  // namespace luminamoon::data::internal
