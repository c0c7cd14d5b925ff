// NEON anchor kernel (rule and tables in internal/anchors.h; anchors_scalar.cc is the reference).
// Advanced SIMD is mandatory on AArch64, so no target attribute is needed: the x86 algorithm over
// 16-byte vectors (tbl nibble lookups), four per block, packed into a 64-bit mask at the end.
#include <arm_neon.h>

#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {
namespace {

struct Tables {
  uint8x16_t lo[kAnchorWindow];
  uint8x16_t hi[kAnchorWindow];
};

inline uint8x16_t classify(const std::uint8_t* p, uint8x16_t lo, uint8x16_t hi) {
  const uint8x16_t v = vld1q_u8(p);
  return vandq_u8(vqtbl1q_u8(lo, vandq_u8(v, vdupq_n_u8(0x0F))), vqtbl1q_u8(hi, vshrq_n_u8(v, 4)));
}

// 0xFF where position p (of 16) is an anchor, else 0.
inline uint8x16_t quarter(const std::uint8_t* p, const Tables& t) {
  uint8x16_t acc = classify(p, t.lo[0], t.hi[0]);
  for (std::size_t k = 1; k < kAnchorWindow; ++k) {
    acc = vandq_u8(acc, classify(p + k, t.lo[k], t.hi[k]));
  }
  return vtstq_u8(acc, acc);
}

// 64 compare results (0x00/0xFF bytes) to one bit each, lane i -> bit i.
inline std::uint64_t to_bits(uint8x16_t a, uint8x16_t b, uint8x16_t c, uint8x16_t d) {
  static const std::uint8_t kWeights[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                            1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t w = vld1q_u8(kWeights);
  uint8x16_t s0 = vpaddq_u8(vandq_u8(a, w), vandq_u8(b, w));
  const uint8x16_t s1 = vpaddq_u8(vandq_u8(c, w), vandq_u8(d, w));
  s0 = vpaddq_u8(s0, s1);
  s0 = vpaddq_u8(s0, s0);
  return vgetq_lane_u64(vreinterpretq_u64_u8(s0), 0);
}

}  // namespace

void anchor_masks_neon(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks) {
  Tables t;
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    t.lo[k] = vld1q_u8(kAnchorTables.lo[k]);
    t.hi[k] = vld1q_u8(kAnchorTables.hi[k]);
  }
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::uint8_t* p = data + k * 64;
    masks[k] = to_bits(quarter(p, t), quarter(p + 16, t), quarter(p + 32, t), quarter(p + 48, t));
  }
}

}  // namespace luminamoon::data::pii_internal
