// Shard lists and per-shard formats: glob expansion (sorted per pattern, like Python's
// sorted(glob.glob(p))) and format / compression detection from the file name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/readers/shard_reader.h"
#include "readers/internal/byte_source.h"

namespace luminamoon::data::readers_internal {

// Whether `pattern` contains glob syntax (*, ? or [), as Python's glob.has_magic.
bool has_glob_magic(std::string_view pattern) noexcept;

// Expands one pattern: a path without glob syntax is returned as is (even when missing, so that
// it is reported when read); a glob gives its matches sorted bytewise (empty: no match).
std::vector<std::string> expand_pattern(const std::string& pattern);

// The compression of `path`, from a .gz / .zst / .zstd suffix (ASCII case-insensitive).
Compression detect_compression(std::string_view path);

// The format of `path`: `requested` unless it is kAuto, else from .jsonl / .json / .ndjson
// (kJsonl) or .txt (kText) before the compression suffix, ASCII case-insensitive. nullopt when
// the name says nothing.
std::optional<ShardFormat> detect_format(std::string_view path, ShardFormat requested);

}  // namespace luminamoon::data::readers_internal
