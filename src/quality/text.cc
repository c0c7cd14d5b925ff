// UTF-8 validation and repair, code point counting, Python whitespace stripping; and the
// two-stage character flag table built from the generated ranges.
#include <algorithm>
#include <cstring>
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

std::size_t count_code_points(std::string_view text) {
  std::size_t continuation = 0;
  for (const char c : text) continuation += is_continuation(static_cast<unsigned char>(c));
  return text.size() - continuation;
}

namespace {

// Length of the well-formed sequence at bytes[i], or 0 with `valid_prefix` set to the length
// of its maximal subpart (at least 1) when it is ill-formed (Unicode 3.9, Table 3-7).
std::size_t sequence_length(std::string_view bytes, std::size_t i, std::size_t& valid_prefix) {
  const auto b0 = static_cast<unsigned char>(bytes[i]);
  std::size_t length = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    valid_prefix = 1;
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= bytes.size()) {
      valid_prefix = k;
      return 0;
    }
    const auto b = static_cast<unsigned char>(bytes[i + k]);
    const bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) {
      valid_prefix = k;
      return 0;
    }
  }
  return length;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes at a time.
    if (i + 8 <= n) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t prefix = 0;
    const std::size_t length = sequence_length(text, i, prefix);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string repair_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + 16);
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    if (static_cast<unsigned char>(bytes[i]) < 0x80) {
      out.push_back(bytes[i++]);
      continue;
    }
    std::size_t prefix = 0;
    const std::size_t length = sequence_length(bytes, i, prefix);
    if (length != 0) {
      out.append(bytes.substr(i, length));
      i += length;
    } else {
      out.append("\xEF\xBF\xBD");
      i += prefix;
    }
  }
  return out;
}

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
