// The hash table behind every "seen before?" question of the QualityFilter (duplicate lines and
// paragraphs, n-grams, word interning): open addressing with linear probing over positions in
// the caller's own arrays, so a slot is 8 bytes and nothing is copied.
//
// A slot is live when its stamp equals the table's, so starting over for the next pass or the
// next document costs nothing. Hashes come from the callers; every one of them is seeded per
// process (hash_seed()), so documents cannot be crafted to collide, and a hash match is always
// confirmed by comparing the keys: answers never depend on the seed.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/xxh3.h"

namespace luminamoon::data::quality_internal {

// A random seed drawn when the library is loaded (once per process).
extern const std::uint64_t kHashSeed;
inline std::uint64_t hash_seed() { return kHashSeed; }

inline std::uint64_t hash_bytes(std::string_view s) {
  return xxh3_64(s.data(), s.size(), hash_seed());
}

// murmur3's 64-bit finaliser, seeded.
inline std::uint64_t mix64(std::uint64_t key) {
  key ^= hash_seed();
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ULL;
  key ^= key >> 33;
  return key;
}

// The slots of a table for `items` keys (positions are 32-bit): a power of two, at most half of
// them used. ProbeTable's and key_tables.h's IntKeyTable's.
inline std::size_t probe_slots_for(std::size_t items) {
  if (items > 0xFFFFFFFFu) {
    throw InvalidArgument("QualityFilter: a document has more than 2^32 words or lines");
  }
  return std::bit_ceil(std::max<std::size_t>(16, items * 2));
}

class ProbeTable {
 public:
  // Forgets every key and makes room for `items` of them.
  void reset(std::size_t items) {
    const std::size_t wanted = probe_slots_for(items);
    if (wanted > slots_.size()) {
      slots_.assign(wanted, Slot{0, 0});
      stamp_ = 0;
    }
    // Only the first `wanted` slots are used: a short document after a long one probes a small
    // table (in L1) rather than every slot the long one needed.
    mask_ = wanted - 1;
    if (++stamp_ == (std::uint32_t{1} << 24)) {  // stamps exhausted: clear for real
      for (Slot& slot : slots_) slot = Slot{0, 0};
      stamp_ = 1;
    }
  }

  // Frees the slots when a huge document left many (called between documents).
  void trim() {
    if (slots_.size() > (std::size_t{1} << 20)) {
      slots_ = std::vector<Slot>();
      mask_ = 0;
      stamp_ = 0;
    }
  }

  // The position stored under a key equal to the one at `position` (`same(stored)` decides,
  // called only when the hashes' top bits agree), or `position` itself after storing it.
  template <typename Same>
  std::uint32_t find_or_insert(std::uint64_t hash, std::uint32_t position, Same&& same) {
    const std::uint32_t tag = (stamp_ << 8) | static_cast<std::uint32_t>(hash >> 56);
    for (std::size_t i = static_cast<std::size_t>(hash) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if ((slot.tag >> 8) != stamp_) {
        slot = Slot{position, tag};
        return position;
      }
      if (slot.tag == tag && same(slot.position)) return slot.position;
    }
  }

  // find_or_insert whose first probe takes no branch on whether the key is new (a branch on
  // data that real text answers either way, as for the words of gopher_repetition's interning):
  // `differs(stored)` decides there, branch-free. It is zero only when the key at `stored` is
  // the one at `position`; it is also called with `stored == position` (a free slot reads as
  // holding this key), and it may answer nonzero for keys it cannot settle. A slot taken by
  // another key, and those keys, go on to find_or_insert, with `same` as the full comparison.
  template <typename Differs, typename Same>
  std::uint32_t find_or_insert_first_probe(std::uint64_t hash, std::uint32_t position,
                                           Differs&& differs, Same&& same) {
    const std::uint32_t tag = (stamp_ << 8) | static_cast<std::uint32_t>(hash >> 56);
    Slot& first = slots_[static_cast<std::size_t>(hash) & mask_];
    const Slot seen = first;
    // All ones when the slot is free: it then reads as holding this key at `position`.
    const std::uint32_t free = 0u - static_cast<std::uint32_t>((seen.tag >> 8) != stamp_);
    const std::uint32_t stored = (position & free) | (seen.position & ~free);
    if ((differs(stored) | ((seen.tag ^ tag) & ~free)) == 0) {
      first = Slot{stored, tag};  // (when seen, what is there)
      return stored;
    }
    return find_or_insert(hash, position, same);
  }

 private:
  struct Slot {
    std::uint32_t position;
    std::uint32_t tag;  // stamp << 8 | top 8 bits of the hash
  };
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::uint32_t stamp_ = 0;
};

}  // namespace luminamoon::data::quality_internal
