// The reference byte kernels of the TextCleaner (contract in internal/kernels.h). Written for
// obviousness, not speed: every SIMD kernel is tested for equality against these, and the SIMD
// kernels call them for the last bytes of a buffer and to locate an error inside a block.
#include "cleaner/internal/kernel_support.h"
#include "cleaner/internal/kernels.h"

namespace luminamoon::data::cleaner_internal {
namespace {

bool is_plain(const std::uint8_t* data, std::size_t size, std::size_t i) {
  const std::uint8_t b = data[i];
  if (b >= 0x21 && b <= 0x7E) return true;
  if (b >= 0x80) return !starts_special(data, size, i);
  if (b == 0x20 || b == 0x0A) return i + 1 < size && starts_word(data, size, i + 1);
  return false;
}

}  // namespace

std::size_t clean_prefix_scalar(const std::uint8_t* data, std::size_t size) {
  std::size_t i = 0;
  while (i < size && is_plain(data, size, i)) ++i;
  return i;
}

}  // namespace luminamoon::data::cleaner_internal
