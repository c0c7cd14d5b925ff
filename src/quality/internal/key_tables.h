// Probe tables whose slots hold the key itself (gopher_repetition's word interning and its top
// 2-4-gram passes): a hit is confirmed from the slot alone, with no load from the caller's
// arrays, and the first probe decides without a branch whether the key is new or seen (the
// answer that mispredicts about half the time with ProbeTable). Only a slot taken by another key
// (rare: at most half the slots are used) walks on.
//
// As ProbeTable: a slot is live when its stamp equals the table's (starting over costs nothing),
// the hashes come from the callers, seeded per process, and every answer is confirmed by
// comparing keys (answers never depend on the seed). Slots are indexed by the hash's top bits.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data::quality_internal {

namespace key_tables_internal {

// Slot count for `items` keys (at most half full), and whether `slots` must be reallocated:
// when too small, or when a huge document left many more than needed.
inline std::size_t slots_for(std::size_t items) {
  if (items > 0xFFFFFFFFu) {
    throw InvalidArgument("QualityFilter: a document has more than 2^32 words or lines");
  }
  return std::bit_ceil(std::max<std::size_t>(16, items * 2));
}

template <typename Slot>
void make_room(std::vector<Slot>& slots, std::size_t wanted, std::uint32_t& stamp) {
  constexpr std::size_t kKept = std::size_t{1} << 18;  // slots kept after a huge document
  if (wanted > slots.size() || (slots.size() > kKept && wanted <= kKept)) {
    slots.assign(wanted, Slot{});
    stamp = 0;
  }
  if (++stamp == 0) {  // stamps exhausted: clear for real
    std::fill(slots.begin(), slots.end(), Slot{});
    stamp = 1;
  }
}

}  // namespace key_tables_internal

// Hashes for these tables (their top bits are used): a 64 x 64 -> 128-bit product of the key
// and seeded values, its halves folded. `seed` is hash_seed().
struct KeyHasher {
  explicit KeyHasher(std::uint64_t seed)
      : a(seed), b((seed << 32 | seed >> 32) ^ 0x9e3779b97f4a7c15ULL), m(seed | 1) {}
  // A word of up to 16 bytes: its two halves (zero past its end) and its length.
  std::uint64_t word(std::uint64_t low, std::uint64_t high, std::uint64_t length) const {
    return fold(low ^ a, high ^ b ^ (length << 56));
  }
  std::uint64_t integer(std::uint64_t key) const { return fold(key ^ a, m); }

 private:
  static std::uint64_t fold(std::uint64_t x, std::uint64_t y) {
    __extension__ using U128 = unsigned __int128;
    const U128 r = static_cast<U128>(x) * y;
    return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
  }
  std::uint64_t a;
  std::uint64_t b;
  std::uint64_t m;
};

// 64-bit integer keys (a pair of 32-bit classes).
class IntKeyTable {
 public:
  void reset(std::size_t items) {
    const std::size_t wanted = key_tables_internal::slots_for(items);
    key_tables_internal::make_room(slots_, wanted, stamp_);
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(wanted));
    mask_ = wanted - 1;  // a short document after a long one probes a small table
  }

  // The position stored under `key`, or `position` itself after storing it.
  std::uint32_t find_or_insert(std::uint64_t hash, std::uint64_t key, std::uint32_t position) {
    for (std::size_t i = static_cast<std::size_t>(hash >> shift_);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      const bool empty = slot.stamp != stamp_;
      if (empty | (slot.key == key)) {
        const std::uint32_t first = empty ? position : slot.position;
        slot.key = key;
        slot.stamp = stamp_;
        slot.position = first;
        return first;
      }
    }
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t stamp = 0;
    std::uint32_t position = 0;
  };
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::uint32_t stamp_ = 0;
};

}  // namespace luminamoon::data::quality_internal
