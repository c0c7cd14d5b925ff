// The LSH index of the MinHash stage: per document one row of `bits`-bit signature values (the
// low bits of each value), and per band a hash table from the band's values to document ids.
// Two tiers, like the exact deduplicator's sets: committed and staged, so that rollback() drops
// exactly the staged documents.
//
// A document d is a *candidate* for a query q when, for some band, the low `bits` of the band's
// values of d and q are equal (exact comparison of stored values: hash tables only narrow the
// search, so answers do not depend on table sizes or insertion history). A candidate is a
// *duplicate* when at least `min_matches` of all num_perm values agree (lsh_shape.h).
//
// Not thread-safe: the owner serialises access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "luminamoon/data/minhash/lsh_shape.h"

namespace luminamoon::data::minhash_internal {

std::size_t row_bytes(std::uint32_t num_perm, std::uint32_t bits) noexcept;
// Stores the low `bits` of each of the num_perm values of `signature` into `row`:
// 4 bits: value i in byte i/2, the low nibble for even i, the high nibble for odd i (an odd
// num_perm leaves the last high nibble 0); 8: byte i; 16: u16 LE at 2i; 32: u32 LE at 4i.
void pack_row(const std::uint32_t* signature, std::uint32_t num_perm, std::uint32_t bits,
              std::uint8_t* row) noexcept;
std::uint32_t row_value(const std::uint8_t* row, std::uint32_t i, std::uint32_t bits) noexcept;
// How many of the num_perm values of two rows are equal.
std::uint32_t count_equal(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t num_perm,
                          std::uint32_t bits) noexcept;

// Rows in pages of kPageRows (no copy of the whole store when it grows, no 2x slack).
class RowStore {
 public:
  static constexpr std::size_t kPageRows = std::size_t{1} << 16;

  explicit RowStore(std::size_t row_bytes) : row_bytes_(row_bytes) {}
  std::size_t row_bytes() const noexcept { return row_bytes_; }
  std::uint64_t size() const noexcept { return size_; }
  const std::uint8_t* row(std::uint64_t id) const noexcept {
    return pages_[id / kPageRows].data() + (id % kPageRows) * row_bytes_;
  }
  void append(const std::uint8_t* row);
  // Room for `size` rows in all without moving any: the first page (the only one that grows row
  // by row) reserved up to its share of them, so a new index's batch does not copy it over
  // log2(batch) times.
  void reserve(std::uint64_t size);
  void truncate(std::uint64_t size);
  std::size_t memory_bytes() const noexcept;

 private:
  std::size_t row_bytes_;
  std::uint64_t size_ = 0;
  std::vector<std::vector<std::uint8_t>> pages_;
};

// Open addressing with linear probing: one tag byte (0 = empty) and one u32 id per slot.
// Several entries may share a key; lookups visit every entry whose tag matches, in probe order.
// Probing reads the tags kGroup at a time (one SSE2 compare each for the tag and for empty): at
// the 7/8 load the tables reach before they grow, a probe runs ~30 slots. The tag array carries
// a copy of its first kGroup - 1 bytes past its end, so a group that crosses the end needs no
// second load.
class BandTable {
 public:
  static constexpr std::size_t kGroup = 16;
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t size() const noexcept { return size_; }
  // Empties the table and sets its capacity (>= 1).
  void reset(std::size_t capacity);
  // Requires size() < capacity().
  void insert(std::uint64_t hash, std::uint32_t id) noexcept;
  // Calls f(id) for every entry whose tag matches `hash` until f returns true; returns whether
  // it did.
  template <typename F>
  bool find_if(std::uint64_t hash, F&& f) const {
    if (capacity_ == 0) return false;
    const std::uint8_t tag = tag_of(hash);
    for (std::size_t pos = home(hash);;) {
      const Masks m = group_at(pos, tag);
      // Entries after the first empty slot are not on this key's probe path.
      std::uint32_t match = m.empty != 0 ? m.match & (m.empty ^ (m.empty - 1)) : m.match;
      for (; match != 0; match &= match - 1) {
        if (f(ids_[wrap(pos + static_cast<std::size_t>(__builtin_ctz(match)))])) return true;
      }
      if (m.empty != 0) return false;
      pos = wrap(pos + kGroup);
    }
  }
  std::size_t memory_bytes() const noexcept {
    return capacity_ == 0 ? 0 : capacity_ * (1 + sizeof(std::uint32_t)) + kGroup - 1;
  }

 private:
  struct Masks {
    std::uint32_t match;  // bit j: slot pos + j holds the tag
    std::uint32_t empty;  // bit j: slot pos + j is empty
  };
  static std::uint8_t tag_of(std::uint64_t hash) noexcept {
    const auto t = static_cast<std::uint8_t>(hash);
    return t == 0 ? 1 : t;
  }
  std::size_t home(std::uint64_t hash) const noexcept;
  // Slot `pos` taken modulo the capacity, for pos < capacity + kGroup.
  std::size_t wrap(std::size_t pos) const noexcept {
    while (pos >= capacity_) pos -= capacity_;
    return pos;
  }
  Masks group_at(std::size_t pos, std::uint8_t tag) const noexcept;
  std::unique_ptr<std::uint8_t[]> tags_;  // capacity_ + kGroup - 1 bytes
  std::unique_ptr<std::uint32_t[]> ids_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

// The capacity a table needs for n entries: the first of 16, 24, 36, ... (x1.5, rounded up)
// with n <= 7/8 of it. Growth by 1.5 keeps the load between 7/12 and 7/8.
std::size_t table_capacity_for(std::size_t n) noexcept;

class LshIndex {
 public:
  // Ids are u32 in the tables: at most this many documents per index.
  static constexpr std::uint64_t kMaxDocuments = 0xFFFFFFFFULL;

  LshIndex(std::uint32_t num_perm, LshShape shape, std::uint32_t bits, std::uint32_t min_matches);

  std::uint32_t num_perm() const noexcept { return num_perm_; }
  std::uint32_t bits() const noexcept { return bits_; }
  std::size_t row_bytes() const noexcept { return rows_.row_bytes(); }
  std::uint64_t committed() const noexcept { return committed_; }
  std::uint64_t staged() const noexcept { return rows_.size() - committed_; }
  std::uint64_t size() const noexcept { return rows_.size(); }
  const std::uint8_t* row(std::uint64_t id) const noexcept { return rows_.row(id); }

  // Ids of the indexed documents that are candidates for `row` (verified ones only, when
  // `verify`), ascending.
  std::vector<std::uint64_t> candidates(const std::uint8_t* row, bool verify) const;
  // Whether some indexed document is a verified candidate for `row`.
  bool has_duplicate(const std::uint8_t* row) const;

  // Indexes `row` as a staged document; returns its id. Throws when the index is full.
  std::uint64_t add_staged(const std::uint8_t* row);
  // has_duplicate(row) ? false : (add_staged(row), true), hashing each band once.
  bool add_if_unique(const std::uint8_t* row);
  // Sizes the staged tables for `count` more documents now, so that staging them rebuilds
  // nothing (a batch of n grown one document at a time rebuilds ~log1.5(n) times, rehashing every
  // staged row each time), and the rows room for them. Answers do not change: only table sizes and
  // the rows' capacity do.
  void reserve_staged(std::uint64_t count);
  // The first `count` staged documents become committed.
  void promote(std::uint64_t count);
  void drop_staged();
  // Keeps the first `count` staged documents (all of them when there are no more), drops the
  // rest.
  void truncate_staged(std::uint64_t count);
  // Appends committed rows without indexing them; call rebuild_committed() after the last one.
  void load_committed(const std::uint8_t* rows, std::size_t count);
  void rebuild_committed();

  std::size_t memory_bytes() const noexcept;

 private:
  struct Tier {
    std::vector<BandTable> tables;  // one per band
    std::size_t capacity = 0;
  };
  std::uint64_t band_hash(const std::uint8_t* row, std::uint32_t band) const noexcept;
  bool band_equal(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t band) const noexcept;
  void index_range(Tier& tier, std::uint64_t begin, std::uint64_t end);
  // Re-indexes rows [begin, end) into tables sized for `entries` (>= end - begin) documents.
  void rebuild(Tier& tier, std::uint64_t begin, std::uint64_t end, std::uint64_t entries);
  void rebuild(Tier& tier, std::uint64_t begin, std::uint64_t end) {
    rebuild(tier, begin, end, end - begin);
  }
  // Calls f(id) for every candidate (an id once per band it shares) until f returns true.
  // `hashes` holds the row's band hashes, or is null (computed here).
  template <typename F>
  bool find_candidate(const std::uint8_t* row, const std::uint64_t* hashes, F&& f) const;
  std::uint64_t append_row(const std::uint8_t* row);
  // Rebuilds the staged tier (indexing every staged row) when the new row would overfill it.
  bool grow_staged_tier();

  std::uint32_t num_perm_;
  LshShape shape_;
  std::uint32_t bits_;
  std::uint32_t min_matches_;
  RowStore rows_;
  std::uint64_t committed_ = 0;
  Tier committed_tier_;
  Tier staged_tier_;
  std::vector<std::uint64_t> hashes_;  // scratch of add_if_unique
};

}  // namespace luminamoon::data::minhash_internal
