// Scalar helpers shared by the per-ISA kernel files (no ISA-specific code here: this header is
// compiled with the default target flags in every translation unit that includes it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace luminamoon::data::cleaner_internal {

// The rules of clean_prefix (kernels.h) for one position; the scalar kernel is built from these,
// and the SIMD kernels use them for the one position just past a block.

// Whether a special sequence (see kernels.h) starts at j, all of its bytes inside [0, size).
inline bool starts_special(const std::uint8_t* data, std::size_t size, std::size_t j) {
  const std::size_t left = size - j;
  const std::uint8_t b0 = data[j];
  if (b0 == 0xC2) return left >= 2 && data[j + 1] >= 0x80 && data[j + 1] <= 0xA0;
  if (b0 < 0xE1 || b0 > 0xE3 || left < 3) return false;
  const std::uint8_t b1 = data[j + 1];
  const std::uint8_t b2 = data[j + 2];
  switch (b0) {
    case 0xE1:
      return b1 == 0x9A && b2 == 0x80;
    case 0xE2:
      return (b1 == 0x80 && ((b2 >= 0x80 && b2 <= 0x8A) || b2 == 0xAF)) ||
             (b1 == 0x81 && b2 == 0x9F);
    default:  // 0xE3
      return b1 == 0x80 && b2 == 0x80;
  }
}

// Whether byte j (< size) starts a "word" (see kernels.h).
inline bool starts_word(const std::uint8_t* data, std::size_t size, std::size_t j) {
  const std::uint8_t b = data[j];
  return (b >= 0x21 && b <= 0x7E) || (b >= 0x80 && !starts_special(data, size, j));
}

}  // namespace luminamoon::data::cleaner_internal
