// The reference UTF-8 validator (contract in internal/utf8.h). Written for obviousness, not
// speed: every SIMD validator is tested for equality against it, and calls it for the last bytes
// of a buffer and to locate an error inside a block.
#include "common/internal/utf8.h"

namespace luminamoon::data::utf8_internal {

std::size_t utf8_valid_prefix_scalar(const std::uint8_t* data, std::size_t size) {
  std::size_t i = 0;
  while (i < size) {
    const std::uint8_t b0 = data[i];
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629 table 3-7: the second byte's range depends on the lead (this is what excludes
    // overlongs, surrogates and code points above U+10FFFF); later bytes are 80..BF.
    std::size_t length = 0;
    std::uint8_t lo = 0x80;
    std::uint8_t hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      length = 2;
    } else if (b0 == 0xE0) {
      length = 3;
      lo = 0xA0;
    } else if (b0 == 0xED) {
      length = 3;
      hi = 0x9F;
    } else if (b0 >= 0xE1 && b0 <= 0xEF) {
      length = 3;
    } else if (b0 == 0xF0) {
      length = 4;
      lo = 0x90;
    } else if (b0 >= 0xF1 && b0 <= 0xF3) {
      length = 4;
    } else if (b0 == 0xF4) {
      length = 4;
      hi = 0x8F;
    } else {
      return i;  // continuation byte, C0, C1 or F5..FF
    }
    if (size - i < length) return i;  // truncated by the end of the buffer
    if (data[i + 1] < lo || data[i + 1] > hi) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if (!is_continuation(data[i + k])) return i;
    }
    i += length;
  }
  return size;
}

}  // namespace luminamoon::data::utf8_internal
