#include "minhash/internal/lsh_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace luminamoon::data::minhash_internal {
namespace {

std::vector<std::uint8_t> packed(const std::vector<std::uint32_t>& values, std::uint32_t bits) {
  std::vector<std::uint8_t> row(row_bytes(static_cast<std::uint32_t>(values.size()), bits));
  pack_row(values.data(), static_cast<std::uint32_t>(values.size()), bits, row.data());
  return row;
}

TEST(Rows, PackLayout) {
  EXPECT_EQ(packed({0x1A, 0x2B, 0x3C}, 4), (std::vector<std::uint8_t>{0xBA, 0x0C}));
  EXPECT_EQ(packed({0x1A, 0x2B}, 8), (std::vector<std::uint8_t>{0x1A, 0x2B}));
  EXPECT_EQ(packed({0x1234}, 16), (std::vector<std::uint8_t>{0x34, 0x12}));
  EXPECT_EQ(packed({0x12345678}, 32), (std::vector<std::uint8_t>{0x78, 0x56, 0x34, 0x12}));
  const auto row = packed({1, 2, 3, 4, 5}, 4);
  for (std::uint32_t i = 0; i < 5; ++i) EXPECT_EQ(row_value(row.data(), i, 4), i + 1);
}

TEST(Rows, CountEqualAllWidths) {
  std::mt19937_64 rng(5);
  for (const std::uint32_t bits : {4U, 8U, 16U, 32U}) {
    for (const std::uint32_t p : {1U, 7U, 16U, 17U, 64U, 65U}) {
      std::vector<std::uint32_t> a(p);
      std::vector<std::uint32_t> b(p);
      std::uint32_t expected = 0;
      const std::uint32_t mask = bits == 32 ? 0xFFFFFFFFU : (1U << bits) - 1;
      for (std::uint32_t i = 0; i < p; ++i) {
        a[i] = static_cast<std::uint32_t>(rng());
        b[i] = rng() % 2 ? a[i] : static_cast<std::uint32_t>(rng());
        expected += (a[i] & mask) == (b[i] & mask) ? 1U : 0U;
      }
      EXPECT_EQ(count_equal(packed(a, bits).data(), packed(b, bits).data(), p, bits), expected);
    }
  }
}

TEST(BandTable, CapacitySequence) {
  EXPECT_EQ(table_capacity_for(0), 16U);
  EXPECT_EQ(table_capacity_for(14), 16U);
  EXPECT_EQ(table_capacity_for(15), 24U);
  EXPECT_EQ(table_capacity_for(21), 24U);
  EXPECT_EQ(table_capacity_for(22), 36U);
  for (std::size_t n : {100U, 1000U, 123457U}) {
    const std::size_t c = table_capacity_for(n);
    EXPECT_LE(n * 8, c * 7);
    EXPECT_GT(n * 8 * 3, c * 7 * 2 - 16);  // load stays above ~7/12
  }
}

// Every id inserted under one hash, in probe order, for tables below, at and above the group
// width, with the probe path wrapping past the end (the tag copies past the end must follow).
TEST(BandTable, SameKeyEntriesInProbeOrderAcrossTheEnd) {
  for (const std::size_t capacity : {1U, 5U, 15U, 16U, 17U, 40U, 100U}) {
    for (const std::uint64_t hash : {0ULL, 0x1234ULL, ~0ULL, 0x8000000000000000ULL}) {
      BandTable table;
      table.reset(capacity);
      const std::size_t n = capacity - 1;  // insert() requires a free slot
      for (std::uint32_t id = 0; id < n; ++id) table.insert(hash, id);
      std::vector<std::uint32_t> seen;
      EXPECT_FALSE(table.find_if(hash, [&](std::uint32_t id) {
        seen.push_back(id);
        return false;
      }));
      std::vector<std::uint32_t> expected(n);
      for (std::uint32_t id = 0; id < n; ++id) expected[id] = id;
      EXPECT_EQ(seen, expected) << "capacity " << capacity << " hash " << hash;
      if (n > 0) {
        // find_if stops at the first id f accepts.
        std::uint32_t calls = 0;
        EXPECT_TRUE(table.find_if(hash, [&](std::uint32_t id) {
          ++calls;
          return id == n / 2;
        }));
        EXPECT_EQ(calls, n / 2 + 1);
      }
    }
  }
}

// Random keys against a reference: a lookup visits exactly the entries of its key (those whose
// tag matches too; ids carry the key so the check can tell), and no entry twice.
TEST(BandTable, LookupsMatchAReferenceAtEveryLoad) {
  std::mt19937_64 rng(11);
  for (const std::size_t capacity : {16U, 24U, 36U, 81U, 1395U}) {
    BandTable table;
    table.reset(capacity);
    std::vector<std::uint64_t> keys;
    for (int k = 0; k < 40; ++k) keys.push_back(rng());
    std::vector<std::vector<std::uint32_t>> ids(keys.size());
    const std::size_t n = capacity * 7 / 8;
    for (std::uint32_t id = 0; id < n; ++id) {
      const std::size_t k = rng() % keys.size();
      table.insert(keys[k], id * 64 + static_cast<std::uint32_t>(k));
      ids[k].push_back(id * 64 + static_cast<std::uint32_t>(k));
    }
    for (std::size_t k = 0; k < keys.size(); ++k) {
      std::vector<std::uint32_t> seen;
      table.find_if(keys[k], [&](std::uint32_t id) {
        if (id % 64 == k) seen.push_back(id);
        return false;
      });
      EXPECT_EQ(seen, ids[k]) << "capacity " << capacity << " key " << k;
    }
  }
}

TEST(LshIndex, ReserveChangesNoAnswer) {
  std::mt19937_64 rng(13);
  LshIndex grown(16, LshShape{4, 4}, 4, 12);
  LshIndex reserved(16, LshShape{4, 4}, 4, 12);
  reserved.reserve_staged(3000);
  std::vector<std::vector<std::uint8_t>> rows;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint32_t> v(16);
    for (auto& x : v) x = static_cast<std::uint32_t>(rng());
    if (i % 5 == 4) v = {};  // a few exact repeats
    if (v.empty()) {
      rows.push_back(rows[rng() % rows.size()]);
    } else {
      rows.push_back(packed(v, 4));
    }
    EXPECT_EQ(grown.add_if_unique(rows.back().data()), reserved.add_if_unique(rows.back().data()));
    if (i == 1500) {
      grown.promote(grown.staged());
      reserved.promote(reserved.staged());
      reserved.reserve_staged(1500);
    }
  }
  for (const auto& r : rows)
    EXPECT_EQ(grown.candidates(r.data(), true), reserved.candidates(r.data(), true));
}

TEST(LshIndex, TruncateStagedAnswersAsIfTheRestWereNeverStaged) {
  // Rows 0..999 committed, 1000..2999 staged; keep the first 700 staged (filter_batch's rollback
  // of one batch with a lone surrogate keeps the staged documents of the calls before it).
  std::mt19937_64 rng(21);
  std::vector<std::vector<std::uint8_t>> rows;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint32_t> v(16);
    for (auto& x : v) x = static_cast<std::uint32_t>(rng());
    rows.push_back(i % 7 == 6 ? rows[rng() % rows.size()] : packed(v, 4));
  }
  LshIndex truncated(16, LshShape{4, 4}, 4, 12);
  LshIndex expected(16, LshShape{4, 4}, 4, 12);
  for (std::size_t i = 0; i < 3000; ++i) {
    truncated.add_staged(rows[i].data());
    if (i < 1700) expected.add_staged(rows[i].data());
    if (i == 999) {
      truncated.promote(truncated.staged());
      expected.promote(expected.staged());
      truncated.reserve_staged(2000);
    }
  }
  truncated.truncate_staged(700);
  EXPECT_EQ(truncated.committed(), 1000U);
  EXPECT_EQ(truncated.staged(), 700U);
  truncated.truncate_staged(900);  // more than there are: nothing changes
  EXPECT_EQ(truncated.staged(), 700U);
  for (const auto& r : rows) {
    EXPECT_EQ(truncated.candidates(r.data(), true), expected.candidates(r.data(), true));
    EXPECT_EQ(truncated.candidates(r.data(), false), expected.candidates(r.data(), false));
  }
  // Staging goes on from there, through the tables' growth, as in the index that never had them.
  for (std::size_t i = 1700; i < 3000; ++i) {
    EXPECT_EQ(truncated.add_if_unique(rows[i].data()), expected.add_if_unique(rows[i].data()));
  }
  EXPECT_EQ(truncated.size(), expected.size());
  truncated.truncate_staged(0);
  EXPECT_EQ(truncated.size(), 1000U);
  for (const std::uint64_t id : truncated.candidates(rows[2000].data(), false)) {
    EXPECT_LT(id, 1000U);  // only committed documents are left
  }
}

TEST(RowStore, ReserveKeepsEveryRowAcrossPages) {
  RowStore store(3);
  store.reserve(10);
  for (std::uint32_t i = 0; i < 5; ++i) {
    const std::uint8_t row[3] = {static_cast<std::uint8_t>(i), 7, 9};
    store.append(row);
  }
  // A reservation past the first page, then rows into the second page.
  store.reserve(RowStore::kPageRows + 100);
  for (std::uint32_t i = 5; i < RowStore::kPageRows + 50; ++i) {
    const std::uint8_t row[3] = {static_cast<std::uint8_t>(i), static_cast<std::uint8_t>(i >> 8),
                                 static_cast<std::uint8_t>(i >> 16)};
    store.append(row);
  }
  store.reserve(10);  // fewer than there are: nothing changes
  ASSERT_EQ(store.size(), RowStore::kPageRows + 50);
  EXPECT_EQ(store.row(3)[0], 3);
  EXPECT_EQ(store.row(3)[2], 9);
  for (std::uint64_t i = 5; i < store.size(); i += 997) {
    EXPECT_EQ(store.row(i)[0], static_cast<std::uint8_t>(i));
    EXPECT_EQ(store.row(i)[1], static_cast<std::uint8_t>(i >> 8));
  }
  store.truncate(2);
  store.reserve(4);
  const std::uint8_t row[3] = {1, 2, 3};
  store.append(row);
  EXPECT_EQ(store.size(), 3U);
  EXPECT_EQ(store.row(2)[2], 3);
  EXPECT_EQ(store.row(1)[0], 1);
}

TEST(LshIndex, CandidatesStagingAndVerification) {
  // 8 values, 2 bands of 4 rows, 8-bit values, 6 equal values verify.
  LshIndex index(8, LshShape{2, 4}, 8, 6);
  const auto a = packed({1, 2, 3, 4, 5, 6, 7, 8}, 8);
  const auto b = packed({1, 2, 3, 4, 5, 6, 9, 9}, 8);  // band 0 equal, 6 of 8 equal
  const auto c = packed({1, 2, 3, 4, 0, 0, 0, 0}, 8);  // band 0 equal, 4 of 8
  const auto d = packed({9, 9, 9, 9, 9, 9, 9, 9}, 8);  // nothing shared
  EXPECT_EQ(index.add_staged(a.data()), 0U);
  EXPECT_EQ(index.candidates(b.data(), false), (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(index.candidates(b.data(), true), (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(index.has_duplicate(b.data()));
  EXPECT_EQ(index.candidates(c.data(), false), (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(index.candidates(c.data(), true).empty());
  EXPECT_FALSE(index.has_duplicate(c.data()));
  EXPECT_TRUE(index.candidates(d.data(), false).empty());
  index.promote(1);
  EXPECT_EQ(index.committed(), 1U);
  EXPECT_EQ(index.add_staged(c.data()), 1U);
  EXPECT_EQ(index.candidates(a.data(), false), (std::vector<std::uint64_t>{0, 1}));
  index.drop_staged();
  EXPECT_EQ(index.size(), 1U);
  EXPECT_EQ(index.candidates(a.data(), false), (std::vector<std::uint64_t>{0}));
}

TEST(LshIndex, ManyDocumentsThroughGrowthAndReload) {
  std::mt19937_64 rng(9);
  LshIndex index(16, LshShape{4, 4}, 4, 12);
  std::vector<std::vector<std::uint8_t>> rows;
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::uint32_t> v(16);
    for (auto& x : v) x = static_cast<std::uint32_t>(rng());
    rows.push_back(packed(v, 4));
    index.add_staged(rows.back().data());
    if (i % 700 == 0) index.promote(index.staged());
  }
  index.promote(index.staged());
  LshIndex reloaded(16, LshShape{4, 4}, 4, 12);
  for (const auto& r : rows) reloaded.load_committed(r.data(), 1);
  reloaded.rebuild_committed();
  for (std::size_t i = 0; i < rows.size(); i += 37) {
    const auto got = index.candidates(rows[i].data(), true);
    EXPECT_NE(std::find(got.begin(), got.end(), i), got.end());
    EXPECT_EQ(got, reloaded.candidates(rows[i].data(), true));
  }
  EXPECT_GT(index.memory_bytes(), 5000U * 8);
}

}  // namespace
}  // namespace luminamoon::data::minhash_internal
