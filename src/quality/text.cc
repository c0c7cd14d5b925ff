// Python whitespace stripping and the two-stage character flag table built from the generated
// ranges (UTF-8 validation, repair and counting are common/internal/utf8.h's).
#include <algorithm>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "luminamoon/data/common/xxh3.h"
#include "quality/internal/tables.h"
#include "quality/internal/text.h"

namespace luminamoon::data::quality_internal {

namespace {

struct BuiltFlagTable {
  std::vector<std::uint16_t> stage1;
  std::vector<std::uint32_t> stage2;
  BuiltFlagTable() {
    constexpr std::size_t kBlock = std::size_t{1} << FlagTable::kBlockBits;
    constexpr std::size_t kBlocks = (0x10FFFF >> FlagTable::kBlockBits) + 1;
    std::vector<std::uint32_t> block(kBlock);
    // Identical blocks (most of the unassigned planes) share one row: rows by content hash.
    absl::flat_hash_map<std::uint64_t, std::vector<std::uint16_t>> rows;
    std::size_t range = 0;
    for (std::size_t b = 0; b < kBlocks; ++b) {
      for (std::size_t k = 0; k < kBlock; ++k) {
        const std::size_t cp = b * kBlock + k;
        while (range + 1 < kCodePointRangeCount && kCodePointRanges[range + 1].first <= cp) {
          ++range;
        }
        block[k] = kCodePointRanges[range].flags;
      }
      const std::uint64_t h = xxh3_64(block.data(), block.size() * sizeof(std::uint32_t));
      std::vector<std::uint16_t>& candidates = rows[h];
      std::size_t row = stage2.size() / kBlock;
      for (const std::uint16_t r : candidates) {
        if (std::equal(block.begin(), block.end(), stage2.begin() + r * kBlock)) row = r;
      }
      if (row == stage2.size() / kBlock) {
        stage2.insert(stage2.end(), block.begin(), block.end());
        candidates.push_back(static_cast<std::uint16_t>(row));
      }
      stage1.push_back(static_cast<std::uint16_t>(row));
    }
  }
};

const BuiltFlagTable kBuiltFlagTable;

}  // namespace

const FlagTable kFlagTable{kBuiltFlagTable.stage1.data(), kBuiltFlagTable.stage2.data()};

std::string_view lstrip(std::string_view text) {
  std::size_t i = 0;
  std::size_t length = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (!is_space(b)) break;
      ++i;
      continue;
    }
    if (!is_space(decode_at(text, i, length))) break;
    i += length;
  }
  return text.substr(i);
}

std::string_view rstrip(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    const auto b = static_cast<unsigned char>(text[end - 1]);
    if (b < 0x80) {
      if (!is_space(b)) break;
      --end;
      continue;
    }
    const std::size_t start = previous_start(text, end);
    if (!is_space(decode_at(text, start))) break;
    end = start;
  }
  return text.substr(0, end);
}

std::string_view strip(std::string_view text) { return rstrip(lstrip(text)); }

bool is_blank(std::string_view text) { return lstrip(text).empty(); }

std::size_t count_occurrences(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  std::size_t pos = text.find(needle);
  while (pos != std::string_view::npos) {
    ++count;
    pos = text.find(needle, pos + needle.size());
  }
  return count;
}

}  // namespace luminamoon::data::quality_internal
