// Thin wrapper over the xxHash library (Debian's libxxhash-dev), compiled inline so the hash is a
// direct call with no PLT hop.
#include "luminamoon/data/common/xxh3.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luminamoon::data {

std::uint64_t xxh3_64(const void* data, std::size_t size) noexcept {
  return XXH3_64bits(data, size);
}

std::uint64_t xxh3_64(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  return XXH3_64bits_withSeed(data, size, seed);
}

}  // namespace luminamoon::data
