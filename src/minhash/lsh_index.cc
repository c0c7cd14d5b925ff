// LshIndex: packed rows, band tables with tags, tier growth by whole rebuilds from the rows
// (the tables keep no keys, so a rebuild recomputes each band hash from the stored values).
#include "minhash/internal/lsh_index.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/bits.h"
#include "common/internal/little_endian.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data::minhash_internal {

std::size_t row_bytes(std::uint32_t num_perm, std::uint32_t bits) noexcept {
  return (std::size_t{num_perm} * bits + 7) / 8;
}

void pack_row(const std::uint32_t* signature, std::uint32_t num_perm, std::uint32_t bits,
              std::uint8_t* row) noexcept {
  switch (bits) {
    case 4: {
      // Two values a byte (a loop the compiler vectorises); an odd last value gets a 0 nibble.
      const std::uint32_t pairs = num_perm / 2;
      for (std::uint32_t k = 0; k < pairs; ++k) {
        row[k] =
            static_cast<std::uint8_t>((signature[2 * k] & 0xF) | (signature[2 * k + 1] & 0xF) << 4);
      }
      if ((num_perm & 1U) != 0)
        row[pairs] = static_cast<std::uint8_t>(signature[num_perm - 1] & 0xF);
      return;
    }
    case 8:
      for (std::uint32_t i = 0; i < num_perm; ++i) row[i] = static_cast<std::uint8_t>(signature[i]);
      return;
    case 16:
      for (std::uint32_t i = 0; i < num_perm; ++i) {
        row[2 * i] = static_cast<std::uint8_t>(signature[i]);
        row[2 * i + 1] = static_cast<std::uint8_t>(signature[i] >> 8);
      }
      return;
    default:
      for (std::uint32_t i = 0; i < num_perm; ++i) {
        for (std::uint32_t k = 0; k < 4; ++k) {
          row[4 * i + k] = static_cast<std::uint8_t>(signature[i] >> (8 * k));
        }
      }
      return;
  }
}

std::uint32_t row_value(const std::uint8_t* row, std::uint32_t i, std::uint32_t bits) noexcept {
  switch (bits) {
    case 4:
      return (std::uint32_t{row[i / 2]} >> (4 * (i & 1))) & 0xFU;
    case 8:
      return row[i];
    case 16:
      return std::uint32_t{row[2 * i]} | std::uint32_t{row[2 * i + 1]} << 8;
    default:
      return std::uint32_t{row[4 * i]} | std::uint32_t{row[4 * i + 1]} << 8 |
             std::uint32_t{row[4 * i + 2]} << 16 | std::uint32_t{row[4 * i + 3]} << 24;
  }
}

std::uint32_t count_equal(const std::uint8_t* a, const std::uint8_t* b, std::uint32_t num_perm,
                          std::uint32_t bits) noexcept {
  if (bits == 4) {
    // Eight bytes (16 values) at a time: a nibble of a ^ b is zero exactly where values agree.
    const std::size_t n = row_bytes(num_perm, 4);
    std::uint32_t equal = 0;
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) {
      std::uint64_t x;
      std::uint64_t y;
      std::memcpy(&x, a + k, 8);
      std::memcpy(&y, b + k, 8);
      std::uint64_t d = x ^ y;
      d = (d | d >> 1 | d >> 2 | d >> 3) & 0x1111111111111111ULL;
      equal += 16 - static_cast<std::uint32_t>(internal::popcount64(d));
    }
    for (; k < n; ++k) {
      const auto d = static_cast<std::uint8_t>(a[k] ^ b[k]);
      equal += ((d & 0x0F) == 0 ? 1U : 0U) + ((d & 0xF0) == 0 ? 1U : 0U);
    }
    // An odd num_perm leaves a zero padding nibble in both rows: it is not a value.
    return (num_perm & 1U) != 0 ? equal - 1 : equal;
  }
  std::uint32_t equal = 0;
  for (std::uint32_t i = 0; i < num_perm; ++i) {
    equal += row_value(a, i, bits) == row_value(b, i, bits) ? 1U : 0U;
  }
  return equal;
}

// ---- RowStore ----------------------------------------------------------------------------------

void RowStore::append(const std::uint8_t* row) {
  if (size_ % kPageRows == 0 && size_ / kPageRows == pages_.size()) {
    pages_.emplace_back();
    // Pages after the first are filled to the end: allocate them whole, once.
    if (pages_.size() > 1) pages_.back().reserve(kPageRows * row_bytes_);
  }
  std::vector<std::uint8_t>& page = pages_[size_ / kPageRows];
  page.insert(page.end(), row, row + row_bytes_);
  ++size_;
}

void RowStore::reserve(std::uint64_t size) {
  if (pages_.size() > 1) return;  // the first page is full; later ones are allocated whole
  if (pages_.empty()) pages_.emplace_back();
  pages_[0].reserve(static_cast<std::size_t>(std::min<std::uint64_t>(size, kPageRows)) *
                    row_bytes_);
}

void RowStore::truncate(std::uint64_t size) {
  if (size >= size_) return;
  const std::size_t keep_pages = (size + kPageRows - 1) / kPageRows;
  pages_.resize(std::max<std::size_t>(keep_pages, size == 0 ? 0 : 1));
  if (size % kPageRows != 0) pages_.back().resize((size % kPageRows) * row_bytes_);
  size_ = size;
}

std::size_t RowStore::memory_bytes() const noexcept {
  std::size_t bytes = pages_.capacity() * sizeof(std::vector<std::uint8_t>);
  for (const auto& page : pages_) bytes += page.capacity();
  return bytes;
}

// ---- BandTable ---------------------------------------------------------------------------------

void BandTable::reset(std::size_t capacity) {
  tags_ = capacity != 0 ? std::make_unique<std::uint8_t[]>(capacity + kGroup - 1) : nullptr;
  ids_ = capacity != 0 ? std::make_unique_for_overwrite<std::uint32_t[]>(capacity) : nullptr;
  capacity_ = capacity;
  size_ = 0;
}

std::size_t BandTable::home(std::uint64_t hash) const noexcept {
  // Lemire's multiply-shift range reduction: the high bits choose the slot, so the tag (the low
  // byte) is independent of it.
  __extension__ using U128 = unsigned __int128;
  return static_cast<std::size_t>((static_cast<U128>(hash) * capacity_) >> 64);
}

BandTable::Masks BandTable::group_at(std::size_t pos, std::uint8_t tag) const noexcept {
  const std::uint8_t* g = tags_.get() + pos;
#if defined(__SSE2__)
  const __m128i tags = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g));
  return {static_cast<std::uint32_t>(
              _mm_movemask_epi8(_mm_cmpeq_epi8(tags, _mm_set1_epi8(static_cast<char>(tag))))),
          static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(tags, _mm_setzero_si128())))};
#else
  Masks m{0, 0};
  for (std::size_t j = 0; j < kGroup; ++j) {
    m.match |= static_cast<std::uint32_t>(g[j] == tag) << j;
    m.empty |= static_cast<std::uint32_t>(g[j] == 0) << j;
  }
  return m;
#endif
}

void BandTable::insert(std::uint64_t hash, std::uint32_t id) noexcept {
  std::size_t pos = home(hash);
  std::uint32_t empty = group_at(pos, 0).empty;
  while (empty == 0) {
    pos = wrap(pos + kGroup);
    empty = group_at(pos, 0).empty;
  }
  const std::size_t slot = wrap(pos + static_cast<std::size_t>(__builtin_ctz(empty)));
  const std::uint8_t tag = tag_of(hash);
  // The slot and its copies past the end (one at most, unless the table is under kGroup slots).
  for (std::size_t at = slot; at < capacity_ + kGroup - 1; at += capacity_) tags_[at] = tag;
  ids_[slot] = id;
  ++size_;
}

std::size_t table_capacity_for(std::size_t n) noexcept {
  std::size_t capacity = 16;
  while (n * 8 > capacity * 7) capacity += (capacity + 1) / 2;
  return capacity;
}

// ---- LshIndex ----------------------------------------------------------------------------------

LshIndex::LshIndex(std::uint32_t num_perm, LshShape shape, std::uint32_t bits,
                   std::uint32_t min_matches)
    : num_perm_(num_perm),
      shape_(shape),
      bits_(bits),
      min_matches_(min_matches),
      rows_(minhash_internal::row_bytes(num_perm, bits)) {
  committed_tier_.tables.resize(shape.bands);
  staged_tier_.tables.resize(shape.bands);
}

namespace {

// A band's values are one run of bits of the row: value i sits at bits [i*bits, (i+1)*bits) of the
// row read as a little-endian bit string, at every width (pack_row). Bands are read as that bit
// string, 56 bits at a time (an 8-byte load shifted by up to 7 bits still holds 57), so a band
// of 9 four-bit values is one load, not 9 extractions.
constexpr std::uint32_t kChunkBits = 56;

std::uint64_t load_bits(const std::uint8_t* row, std::size_t row_size, std::size_t bit,
                        std::uint32_t count) noexcept {
  const std::size_t byte = bit / 8;
  const std::uint64_t v = internal::load_le_prefix(row + byte, row_size - byte);
  return (v >> (bit % 8)) & ((std::uint64_t{1} << count) - 1);
}

}  // namespace

std::uint64_t LshIndex::band_hash(const std::uint8_t* row, std::uint32_t band) const noexcept {
  const std::size_t size = rows_.row_bytes();
  const std::size_t end = std::size_t{band + 1} * shape_.rows * bits_;
  std::uint64_t h = (std::uint64_t{band} + 1) * 0x9E3779B97F4A7C15ULL;
  for (std::size_t bit = end - std::size_t{shape_.rows} * bits_; bit < end; bit += kChunkBits) {
    const auto count = static_cast<std::uint32_t>(std::min<std::size_t>(kChunkBits, end - bit));
    h = (h ^ load_bits(row, size, bit, count)) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  // The table takes its slot from the high bits and its tag from the low byte: mix both.
  h *= 0x94D049BB133111EBULL;
  return h ^ (h >> 32);
}

bool LshIndex::band_equal(const std::uint8_t* a, const std::uint8_t* b,
                          std::uint32_t band) const noexcept {
  const std::size_t size = rows_.row_bytes();
  const std::size_t end = std::size_t{band + 1} * shape_.rows * bits_;
  for (std::size_t bit = end - std::size_t{shape_.rows} * bits_; bit < end; bit += kChunkBits) {
    const auto count = static_cast<std::uint32_t>(std::min<std::size_t>(kChunkBits, end - bit));
    if (load_bits(a, size, bit, count) != load_bits(b, size, bit, count)) return false;
  }
  return true;
}

template <typename F>
bool LshIndex::find_candidate(const std::uint8_t* row, const std::uint64_t* hashes, F&& f) const {
  for (std::uint32_t band = 0; band < shape_.bands; ++band) {
    const std::uint64_t h = hashes != nullptr ? hashes[band] : band_hash(row, band);
    auto check = [&](std::uint32_t id) {
      return band_equal(rows_.row(id), row, band) && f(std::uint64_t{id});
    };
    if (committed_tier_.tables[band].find_if(h, check)) return true;
    if (staged_tier_.tables[band].find_if(h, check)) return true;
  }
  return false;
}

std::vector<std::uint64_t> LshIndex::candidates(const std::uint8_t* row, bool verify) const {
  std::vector<std::uint64_t> out;
  find_candidate(row, nullptr, [&](std::uint64_t id) {
    out.push_back(id);
    return false;
  });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (verify) {
    std::erase_if(out, [&](std::uint64_t id) {
      return count_equal(rows_.row(id), row, num_perm_, bits_) < min_matches_;
    });
  }
  return out;
}

bool LshIndex::has_duplicate(const std::uint8_t* row) const {
  return find_candidate(row, nullptr, [&](std::uint64_t id) {
    return count_equal(rows_.row(id), row, num_perm_, bits_) >= min_matches_;
  });
}

bool LshIndex::add_if_unique(const std::uint8_t* row) {
  // Band hashes once, for the lookup and the insertion.
  hashes_.resize(shape_.bands);
  for (std::uint32_t band = 0; band < shape_.bands; ++band) hashes_[band] = band_hash(row, band);
  const bool duplicate = find_candidate(row, hashes_.data(), [&](std::uint64_t id) {
    return count_equal(rows_.row(id), row, num_perm_, bits_) >= min_matches_;
  });
  if (duplicate) return false;
  const std::uint64_t id = append_row(row);
  if (!grow_staged_tier()) {
    for (std::uint32_t band = 0; band < shape_.bands; ++band) {
      staged_tier_.tables[band].insert(hashes_[band], static_cast<std::uint32_t>(id));
    }
  }
  return true;
}

std::uint64_t LshIndex::append_row(const std::uint8_t* row) {
  const std::uint64_t id = rows_.size();
  if (id >= kMaxDocuments) {
    throw Error("MinHashDeduplicator: the index holds " + std::to_string(id) +
                " documents, the most one index can hold (document ids are u32)");
  }
  rows_.append(row);
  return id;
}

bool LshIndex::grow_staged_tier() {
  const std::uint64_t staged = rows_.size() - committed_;
  if (staged * 8 <= staged_tier_.capacity * 7) return false;
  rebuild(staged_tier_, committed_, rows_.size());  // indexes the new row too
  return true;
}

void LshIndex::index_range(Tier& tier, std::uint64_t begin, std::uint64_t end) {
  for (std::uint64_t id = begin; id < end; ++id) {
    const std::uint8_t* r = rows_.row(id);
    for (std::uint32_t band = 0; band < shape_.bands; ++band) {
      tier.tables[band].insert(band_hash(r, band), static_cast<std::uint32_t>(id));
    }
  }
}

void LshIndex::rebuild(Tier& tier, std::uint64_t begin, std::uint64_t end, std::uint64_t entries) {
  const auto n = static_cast<std::size_t>(entries);
  tier.capacity = n == 0 ? 0 : table_capacity_for(n);
  for (BandTable& table : tier.tables) table.reset(tier.capacity);
  index_range(tier, begin, end);
}

void LshIndex::reserve_staged(std::uint64_t count) {
  const std::uint64_t staged = rows_.size() - committed_;
  const std::uint64_t entries = std::min(staged + count, kMaxDocuments);
  rows_.reserve(committed_ + entries);
  if (entries * 8 <= staged_tier_.capacity * 7) return;
  rebuild(staged_tier_, committed_, rows_.size(), entries);
}

std::uint64_t LshIndex::add_staged(const std::uint8_t* row) {
  const std::uint64_t id = append_row(row);
  if (!grow_staged_tier()) index_range(staged_tier_, id, id + 1);
  return id;
}

void LshIndex::promote(std::uint64_t count) {
  count = std::min(count, staged());
  if (count == 0) return;
  const std::uint64_t now = committed_ + count;
  if (now * 8 > committed_tier_.capacity * 7) {
    rebuild(committed_tier_, 0, now);
  } else {
    index_range(committed_tier_, committed_, now);
  }
  committed_ = now;
  rebuild(staged_tier_, committed_, rows_.size());  // empty unless a later batch is staged
}

void LshIndex::drop_staged() {
  rows_.truncate(committed_);
  rebuild(staged_tier_, committed_, committed_);
}

void LshIndex::truncate_staged(std::uint64_t count) {
  if (count >= staged()) return;
  rows_.truncate(committed_ + count);
  rebuild(staged_tier_, committed_, rows_.size());
}

void LshIndex::load_committed(const std::uint8_t* rows, std::size_t count) {
  if (rows_.size() + count > kMaxDocuments) {
    throw Error("MinHashDeduplicator: the index would hold more than " +
                std::to_string(kMaxDocuments) + " documents (document ids are u32)");
  }
  for (std::size_t i = 0; i < count; ++i) rows_.append(rows + i * rows_.row_bytes());
  committed_ = rows_.size();
}

void LshIndex::rebuild_committed() { rebuild(committed_tier_, 0, committed_); }

std::size_t LshIndex::memory_bytes() const noexcept {
  std::size_t bytes = rows_.memory_bytes();
  for (const Tier* tier : {&committed_tier_, &staged_tier_}) {
    bytes += tier->tables.capacity() * sizeof(BandTable);
    for (const BandTable& table : tier->tables) bytes += table.memory_bytes();
  }
  return bytes;
}

}  // namespace luminamoon::data::minhash_internal
