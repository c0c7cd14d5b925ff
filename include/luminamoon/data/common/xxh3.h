// XXH3-64 (xxHash 0.8, seed 0 unless given): the document hash of the whole engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace luminamoon::data {

std::uint64_t xxh3_64(const void* data, std::size_t size) noexcept;
std::uint64_t xxh3_64(const void* data, std::size_t size, std::uint64_t seed) noexcept;

inline std::uint64_t xxh3_64(std::string_view bytes) noexcept {
  return xxh3_64(bytes.data(), bytes.size());
}

}  // namespace luminamoon::data
