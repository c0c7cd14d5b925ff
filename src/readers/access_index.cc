// Access-point index file: encoding and validation (see internal/access_index.h).
#include "readers/internal/access_index.h"

#include <zlib.h>

#include <cstring>

#include "luminamoon/data/common/xxh3.h"

namespace luminamoon::data::readers_internal {
namespace {

constexpr char kMagic[4] = {'L', 'M', 'I', 'X'};

void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }
void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint32_t crc_of(const std::string& bytes, std::size_t from = 0) {
  return static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(bytes.data()) + from,
                                          static_cast<uInt>(bytes.size() - from)));
}
std::uint32_t crc_of(const unsigned char* data, std::size_t size) {
  return static_cast<std::uint32_t>(crc32(0, data, static_cast<uInt>(size)));
}

}  // namespace

std::string encode_index_header(const IndexHeader& header) {
  std::string out(kMagic, 4);
  put_u32(out, kIndexVersion);
  put_u32(out, static_cast<std::uint32_t>(header.kind));
  put_u64(out, header.spacing);
  put_u64(out, header.identity.size);
  put_u64(out, static_cast<std::uint64_t>(header.identity.mtime_ns));
  put_u32(out, static_cast<std::uint32_t>(header.path.size()));
  out += header.path;
  put_u32(out, crc_of(out));
  return out;
}

std::string encode_access_point(const AccessPoint& point) {
  std::string out;
  out.reserve(kPointFixedBytes + point.window.size() + 4);
  put_u64(out, point.compressed_offset);
  put_u64(out, point.uncompressed_offset);
  put_u64(out, point.newlines);
  put_u64(out, point.member_size);
  put_u32(out, point.member_crc);
  put_u8(out, point.bits);
  put_u32(out, static_cast<std::uint32_t>(point.window.size()));
  out += point.window;
  put_u32(out, crc_of(out));
  return out;
}

std::optional<DecodedIndex> decode_index(std::string_view bytes, std::string* why) {
  auto fail = [&](const char* reason) -> std::optional<DecodedIndex> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  if (n < kIndexHeaderFixedBytes + 4) return fail("shorter than the header");
  if (std::memcmp(p, kMagic, 4) != 0) return fail("bad magic (not an LMIX index)");
  if (get_u32(p + 4) != kIndexVersion) return fail("unsupported version");
  const std::uint32_t kind = get_u32(p + 8);
  if (kind != 1 && kind != 2) return fail("unknown kind");
  const std::uint32_t path_len = get_u32(p + 36);
  if (path_len > kMaxIndexPathBytes) return fail("path longer than 4096 bytes");
  const std::size_t header_end = kIndexHeaderFixedBytes + path_len;
  if (n < header_end + 4) return fail("shorter than the header");
  if (get_u32(p + header_end) != crc_of(p, header_end)) return fail("header CRC mismatch");
  DecodedIndex index;
  index.header.kind = static_cast<IndexKind>(kind);
  index.header.spacing = get_u64(p + 12);
  index.header.identity.size = get_u64(p + 20);
  index.header.identity.mtime_ns = static_cast<std::int64_t>(get_u64(p + 28));
  index.header.path.assign(bytes.substr(kIndexHeaderFixedBytes, path_len));
  if (index.header.spacing < kMinIndexSpacing) return fail("spacing below 64 KiB");
  const bool gzip = index.header.kind == IndexKind::kGzip;

  std::size_t pos = header_end + 4;
  index.valid_bytes = pos;
  while (n - pos >= kPointFixedBytes + 4) {
    const unsigned char* r = p + pos;
    AccessPoint point;
    point.compressed_offset = get_u64(r);
    point.uncompressed_offset = get_u64(r + 8);
    point.newlines = get_u64(r + 16);
    point.member_size = get_u64(r + 24);
    point.member_crc = get_u32(r + 32);
    point.bits = r[36];
    const std::uint32_t window_len = get_u32(r + 37);
    if (window_len > kDeflateWindowBytes) break;
    if (n - pos < kPointFixedBytes + window_len + 4) break;  // torn tail
    const std::size_t body = kPointFixedBytes + window_len;
    if (get_u32(r + body) != crc_of(r, body)) break;
    // Consistency: a point must be usable as it is, and later than the one before.
    if (point.bits > 7 || point.newlines > point.uncompressed_offset) break;
    if (point.compressed_offset > index.header.identity.size) break;
    if (gzip) {
      if (point.member_size > point.uncompressed_offset) break;
      if (window_len != std::min<std::uint64_t>(kDeflateWindowBytes, point.member_size)) break;
      if (point.bits > 0 && point.compressed_offset == 0) break;
    } else if (point.bits != 0 || window_len != 0 || point.member_size != 0 ||
               point.member_crc != 0) {
      break;
    }
    if (!index.points.empty()) {
      const AccessPoint& last = index.points.back();
      if (point.uncompressed_offset <= last.uncompressed_offset ||
          point.compressed_offset < last.compressed_offset) {
        break;
      }
    }
    point.window.assign(reinterpret_cast<const char*>(r + kPointFixedBytes), window_len);
    index.points.push_back(std::move(point));
    pos += body + 4;
    index.valid_bytes = pos;
  }
  return index;
}

std::string index_file_name(std::string_view shard_path, IndexKind kind) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::uint64_t h = xxh3_64(shard_path);
  std::string name(16, '0');
  for (std::size_t i = 0; i < 16; ++i) name[15 - i] = kHex[(h >> (4 * i)) & 0xf];
  return name + (kind == IndexKind::kGzip ? ".gzidx" : ".zstidx");
}

}  // namespace luminamoon::data::readers_internal
