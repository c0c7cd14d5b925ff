// Little-endian loads and stores for the on-disk formats. memcpy + byte swap on big-endian hosts;
// compilers turn these into single moves on x86-64 and AArch64.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace luminamoon::data::internal {

// std::byteswap is C++23; the builtins are what it lowers to.
inline std::uint32_t byte_swap(std::uint32_t v) noexcept { return __builtin_bswap32(v); }
inline std::uint64_t byte_swap(std::uint64_t v) noexcept { return __builtin_bswap64(v); }

template <typename T>
inline T load_le(const std::uint8_t* p) noexcept {
  T value;
  std::memcpy(&value, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) value = byte_swap(value);
  return value;
}

// The first min(8, available) bytes at p as a little-endian number, zero-extended: one load when
// 8 bytes can be read, else byte by byte.
inline std::uint64_t load_le_prefix(const std::uint8_t* p, std::size_t available) noexcept {
  if (available >= 8) return load_le<std::uint64_t>(p);
  std::uint64_t value = 0;
  for (std::size_t k = 0; k < available; ++k) value |= std::uint64_t{p[k]} << (8 * k);
  return value;
}

template <typename T>
inline void store_le(std::uint8_t* p, T value) noexcept {
  if constexpr (std::endian::native == std::endian::big) value = byte_swap(value);
  std::memcpy(p, &value, sizeof(T));
}

}  // namespace luminamoon::data::internal
