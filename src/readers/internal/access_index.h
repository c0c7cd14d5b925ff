// Access-point index of a compressed shard (docs/readers.md, "Access-point index"): where a
// decoder can restart inside a .gz (zran-style: a deflate block boundary, the bits of its first
// byte and the 32 KiB window before it) or a .zst (a frame start), so a resume decodes at most
// one spacing of data instead of the whole prefix. The file is a cache: a missing, stale or
// damaged index only makes a resume slower, never different. Native and fallback
// (fallbacks/access_index.py) write byte-identical files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace luminamoon::data::readers_internal {

inline constexpr std::uint32_t kIndexVersion = 1;
inline constexpr std::size_t kIndexHeaderFixedBytes = 40;  // before the path and the CRC
inline constexpr std::size_t kPointFixedBytes = 41;        // before the window and the CRC
inline constexpr std::size_t kMaxIndexPathBytes = 4096;
inline constexpr std::size_t kDeflateWindowBytes = 32768;
inline constexpr std::uint64_t kMinIndexSpacing = 64 * 1024;

enum class IndexKind : std::uint32_t { kGzip = 1, kZstd = 2 };

// Identifies the shard an index was built from: a changed size or mtime invalidates it.
struct ShardIdentity {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const ShardIdentity&) const = default;
};

struct IndexHeader {
  IndexKind kind = IndexKind::kGzip;
  std::uint64_t spacing = 0;
  ShardIdentity identity;
  std::string path;  // the shard as listed by the reader (bytes)
};

struct AccessPoint {
  std::uint64_t compressed_offset = 0;    // first compressed byte to feed
  std::uint64_t uncompressed_offset = 0;  // stream offset of the first byte decoded from there
  std::uint64_t newlines = 0;             // '\n' before uncompressed_offset
  std::uint64_t member_size = 0;          // gzip: member bytes decoded before the point
  std::uint32_t member_crc = 0;           // gzip: CRC-32 of those bytes
  std::uint8_t bits = 0;                  // gzip: bits of byte compressed_offset-1 to prime
  std::string window;                     // gzip: the last min(32 KiB, member_size) bytes
  bool operator==(const AccessPoint&) const = default;
};

std::string encode_index_header(const IndexHeader& header);
std::string encode_access_point(const AccessPoint& point);

struct DecodedIndex {
  IndexHeader header;
  std::vector<AccessPoint> points;  // the valid prefix of the records
  std::size_t valid_bytes = 0;      // header + valid records; what follows is a torn tail
};

// Decodes an index file. nullopt (with `why`) when the header is not a valid index; records
// after the first invalid one (torn write, bad CRC, out-of-order offsets) are left out.
std::optional<DecodedIndex> decode_index(std::string_view bytes, std::string* why = nullptr);

// "<xxh3-64 of the path, 16 hex digits>.gzidx" or ".zstidx".
std::string index_file_name(std::string_view shard_path, IndexKind kind);

}  // namespace luminamoon::data::readers_internal
