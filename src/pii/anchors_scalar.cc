// Scalar anchor kernel: the reference the SIMD kernels are tested against (rule in anchors.h).
// A position whose own byte fits no rule is skipped after one lookup, so the other three are only
// computed for the minority of bytes that can start a window.
#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {

void anchor_masks_scalar(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks) {
  const std::size_t size = blocks * 64 + kAnchorLookahead;
  for (std::size_t k = 0; k < blocks; ++k) {
    std::uint64_t mask = 0;
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint8_t b = data[k * 64 + i];
      if ((kAnchorTables.lo[0][b & 15] & kAnchorTables.hi[0][b >> 4]) == 0) continue;
      if (is_anchor(data, size, k * 64 + i)) mask |= std::uint64_t{1} << i;
    }
    masks[k] = mask;
  }
}

}  // namespace luminamoon::data::pii_internal
