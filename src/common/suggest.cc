// Damerau-Levenshtein suggestions for unknown names (see suggest.h for the contract).
#include "luminamoon/data/common/suggest.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

// Decodes UTF-8 into code points so distances match the Python fallback, which works on str.
// Option names come from Python str objects, so they are valid UTF-8; a stray byte still
// decodes to one unit rather than being skipped.
std::vector<std::uint32_t> code_points(std::string_view s) {
  std::vector<std::uint32_t> out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    std::size_t len = 1;
    std::uint32_t cp = b0;
    if (b0 >= 0xF0 && b0 < 0xF8) {
      len = 4;
      cp = b0 & 0x07u;
    } else if (b0 >= 0xE0) {
      len = 3;
      cp = b0 & 0x0Fu;
    } else if (b0 >= 0xC0) {
      len = 2;
      cp = b0 & 0x1Fu;
    }
    if (len > 1 && i + len <= s.size()) {
      for (std::size_t k = 1; k < len; ++k) {
        cp = (cp << 6) | (static_cast<std::uint8_t>(s[i + k]) & 0x3Fu);
      }
    } else {
      len = 1;
      cp = b0;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

}  // namespace

std::size_t damerau_levenshtein(std::string_view a_utf8, std::string_view b_utf8) {
  const auto a = code_points(a_utf8);
  const auto b = code_points(b_utf8);
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // Three rolling rows: the transposition step looks two rows back.
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t best = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, prev2[j - 2] + 1);
      }
      cur[j] = best;
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> did_you_mean(std::string_view name,
                                        std::span<const std::string_view> candidates) {
  const std::size_t limit = std::max<std::size_t>(2, code_points(name).size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const std::string_view candidate : candidates) {
    const std::size_t d = damerau_levenshtein(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

void reject_unknown_option(std::string_view owner, std::string_view name,
                           std::span<const std::string_view> known) {
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string message = std::string(owner) + ": unknown option '" + std::string(name) + "'";
  if (auto best = did_you_mean(name, known)) {
    message += "; did you mean '" + *best + "'?";
  } else {
    message += "; valid options: ";
    for (std::size_t i = 0; i < known.size(); ++i) {
      if (i != 0) message += ", ";
      message += known[i];
    }
  }
  throw ConfigError(message);
}

}  // namespace luminamoon::data
