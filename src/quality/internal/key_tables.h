// The probe table of gopher_repetition's top 2-4-gram passes (IntKeyTable), the hashes of those
// passes and of its word interning (KeyHasher), and the interning key (interning_high; the
// interning itself is ProbeTable::find_or_insert_first_probe). IntKeyTable decides at the first
// probe, without a branch, whether the key is new or seen (a branch on data that real text
// answers either way); only a slot taken by another key (at most half the slots are used) walks
// on. Its slots hold the key itself, so a hit is confirmed from the slot alone.
//
// As ProbeTable: a slot is live when its stamp equals the table's (starting over costs nothing),
// the hashes come from the callers, seeded per process, and every answer is confirmed by
// comparing keys (answers never depend on the seed).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "quality/internal/probe_table.h"

namespace luminamoon::data::quality_internal {

// Hashes for these tables, seeded by `seed` (hash_seed()). word(): a 64 x 64 -> 128-bit product,
// its halves folded (every bit mixed: ProbeTable takes the slot from the low bits and an
// 8-bit tag from the top ones). integer(): multiply-shift (IntKeyTable takes the top bits).
struct KeyHasher {
  explicit KeyHasher(std::uint64_t seed)
      : a(seed), b((seed << 32 | seed >> 32) ^ 0x9e3779b97f4a7c15ULL), m(seed | 1) {}
  // A word of up to 16 bytes: its two halves (zero past its end) and its length.
  std::uint64_t word(std::uint64_t low, std::uint64_t high, std::uint64_t length) const {
    return fold(low ^ a, high ^ b ^ (length << 56));
  }
  std::uint64_t integer(std::uint64_t key) const { return (key ^ a) * m; }  // (multiply-shift)

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

// The second integer of a word's interning key, from `high` (its bytes 8..16, zero past its
// end) and its byte length n. Below 16 bytes byte 15 of `high` is zero and holds n instead, so
// (low, interning_high) is the word itself; from 16 bytes on byte 15 becomes 0xFF, a value no
// shorter word's key has there, so a short word's key never equals a long one's (whose byte 15
// could otherwise be the short word's length) and long words are told apart by comparing their
// bytes. The interning's `differs` (ProbeTable::find_or_insert_first_probe) relies on this: equal
// keys of a word below 16 bytes are equal words, whatever the hashes did.
constexpr std::uint64_t interning_high(std::uint64_t high, std::size_t n) {
  return n < 16 ? high | (std::uint64_t{n} << 56) : high | (std::uint64_t{0xFF} << 56);
}

// 64-bit integer keys (a pair of 32-bit classes), held in 16-byte slots with their stamp and
// first position; the slot is taken from the hash's top bits.
class IntKeyTable {
 public:
  // Forgets every key and makes room for `items` of them. The slots are reallocated when too few,
  // or when a huge document left many more than needed.
  void reset(std::size_t items) {
    constexpr std::size_t kKept = std::size_t{1} << 18;  // slots kept after a huge document
    const std::size_t wanted = probe_slots_for(items);
    if (wanted > slots_.size() || (slots_.size() > kKept && wanted <= kKept)) {
      slots_.assign(wanted, Slot{});
      stamp_ = 0;
    }
    if (++stamp_ == 0) {  // stamps exhausted: clear for real
      std::fill(slots_.begin(), slots_.end(), Slot{});
      stamp_ = 1;
    }
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(wanted));
    mask_ = wanted - 1;  // a short document after a long one probes a small table
  }

  // The position stored under `key`, or `position` itself after storing it.
  std::uint32_t find_or_insert(std::uint64_t hash, std::uint64_t key, std::uint32_t position) {
    const std::uint32_t stamp = stamp_;
    Slot* slots = slots_.data();
    for (std::size_t i = static_cast<std::size_t>(hash >> shift_);; i = (i + 1) & mask_) {
      const Slot seen = slots[i];
      // All ones when the slot is free: it then reads as holding this key at `position`, so one
      // comparison, rarely false, covers both "new" and "seen" (masks, not `?:`, which the
      // compiler turns back into the branch this avoids).
      const std::uint64_t free = std::uint64_t{0} - static_cast<std::uint64_t>(seen.stamp != stamp);
      const std::uint64_t held = (key & free) | (seen.key & ~free);
      if (held == key) {
        const auto first = static_cast<std::uint32_t>((position & free) | (seen.position & ~free));
        slots[i] = Slot{key, stamp, first};
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
