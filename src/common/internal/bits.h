// Bit counting for code built for baseline x86-64. Without POPCNT among the target's features
// (the library's default flags), std::popcount compiles to a call to libgcc's __popcountdi2; in
// a loop over 16- or 64-bit masks that call was a visible share of the profile (1.2% of a PII
// pass before that code moved to bit tricks). popcount64 is one POPCNT where the translation unit
// or function has it, and otherwise the branch-free SWAR sum (a multiply, no call).
#pragma once

#include <bit>
#include <cstdint>

namespace luminamoon::data::internal {

constexpr int popcount64(std::uint64_t x) noexcept {
#if defined(__POPCNT__)
  return std::popcount(x);
#else
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
#endif
}

}  // namespace luminamoon::data::internal
