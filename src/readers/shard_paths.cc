// Glob expansion and format detection of shard paths (see internal/shard_paths.h).
#include "readers/internal/shard_paths.h"

#include <glob.h>

#include <algorithm>

#include "readers/internal/shard_input.h"

namespace luminamoon::data::readers_internal {
namespace {

bool ends_with_ascii_nocase(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  const std::string_view tail = s.substr(s.size() - suffix.size());
  return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) {
    const char lower = (a >= 'A' && a <= 'Z') ? static_cast<char>(a - 'A' + 'a') : a;
    return lower == b;
  });
}

}  // namespace

bool has_glob_magic(std::string_view pattern) noexcept {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

std::vector<std::string> expand_pattern(const std::string& pattern) {
  // A URL is one shard: its '?' starts a query, not a glob.
  if (!has_glob_magic(pattern) || is_url(pattern)) return {pattern};
  glob_t matches{};
  // GLOB_NOESCAPE: a backslash is an ordinary character, as in Python's glob on POSIX.
  const int rc = ::glob(pattern.c_str(), GLOB_NOESCAPE | GLOB_NOSORT, nullptr, &matches);
  std::vector<std::string> out;
  if (rc == 0) {
    out.reserve(matches.gl_pathc);
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  // Bytewise order = code point order of the UTF-8 names = Python's sorted() on str.
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The name without its compression suffix.
std::string_view strip_compression(std::string_view name) {
  for (const std::string_view suffix : {".gz", ".zst", ".zstd"}) {
    if (ends_with_ascii_nocase(name, suffix)) return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

}  // namespace

Compression detect_compression(std::string_view path) {
  path = name_for_format(path);
  if (ends_with_ascii_nocase(path, ".gz")) return Compression::kGzip;
  if (ends_with_ascii_nocase(path, ".zst") || ends_with_ascii_nocase(path, ".zstd")) {
    return Compression::kZstd;
  }
  return Compression::kNone;
}

std::optional<ShardFormat> detect_format(std::string_view path, ShardFormat requested) {
  if (requested != ShardFormat::kAuto) return requested;
  const std::string_view name = strip_compression(name_for_format(path));
  for (const std::string_view ext : {".jsonl", ".json", ".ndjson"}) {
    if (ends_with_ascii_nocase(name, ext)) return ShardFormat::kJsonl;
  }
  if (ends_with_ascii_nocase(name, ".txt")) return ShardFormat::kText;
  return std::nullopt;
}

}  // namespace luminamoon::data::readers_internal
