// Access-point indexes of .gz / .zst shards: the LMIX format (golden vector, validation) and
// resume through the index (same records as a resume from the start, without reading the prefix).
#include "readers/internal/access_index.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/readers/shard_reader.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;
using readers_internal::AccessPoint;
using readers_internal::decode_index;
using readers_internal::encode_access_point;
using readers_internal::encode_index_header;
using readers_internal::IndexHeader;
using readers_internal::IndexKind;

std::string hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The golden vector shared with tests/test_readers_resume_io.py (the fallback's encoder).
IndexHeader golden_header() {
  IndexHeader h;
  h.kind = IndexKind::kGzip;
  h.spacing = 65536;
  h.identity.size = 123456789;
  h.identity.mtime_ns = 1700000000123456789;
  h.path = "data/part-0.jsonl.gz";
  return h;
}

AccessPoint golden_point() {
  AccessPoint p;
  p.compressed_offset = 40000;
  p.uncompressed_offset = 70000;
  p.newlines = 321;
  p.member_size = 5;
  p.member_crc = 0xdeadbeef;
  p.bits = 3;
  p.window = "hello";
  return p;
}

TEST(AccessIndexFormat, GoldenVector) {
  const std::string expected =
      read_file(fs::path(LUMINAMOON_SOURCE_DIR) / "tests/golden/access_index_v1.hex");
  const std::string bytes =
      encode_index_header(golden_header()) + encode_access_point(golden_point());
  EXPECT_EQ(hex(bytes) + "\n", expected);
  const auto decoded = decode_index(bytes);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->header.path, "data/part-0.jsonl.gz");
  EXPECT_EQ(decoded->header.identity, golden_header().identity);
  ASSERT_EQ(decoded->points.size(), 1u);
  EXPECT_EQ(decoded->points[0], golden_point());
  EXPECT_EQ(decoded->valid_bytes, bytes.size());
}

TEST(AccessIndexFormat, RejectsBadHeadersAndKeepsTheValidPrefixOfRecords) {
  const std::string header = encode_index_header(golden_header());
  AccessPoint second = golden_point();
  second.compressed_offset = 50000;
  second.uncompressed_offset = 90000;
  const std::string one = encode_access_point(golden_point());
  const std::string two = encode_access_point(second);
  std::string why;
  EXPECT_FALSE(decode_index("", &why));
  EXPECT_EQ(why, "shorter than the header");
  std::string bad = header;
  bad[0] = 'X';
  EXPECT_FALSE(decode_index(bad, &why));
  EXPECT_EQ(why, "bad magic (not an LMIX index)");
  bad = header;
  bad[20] ^= 1;  // identity changed without the CRC
  EXPECT_FALSE(decode_index(bad, &why));
  EXPECT_EQ(why, "header CRC mismatch");
  // A torn tail, a flipped bit and an out-of-order record all end the valid prefix.
  const std::string full = header + one + two;
  for (std::size_t cut = header.size(); cut < full.size(); cut += 7) {
    const auto d = decode_index(full.substr(0, cut));
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->points.size(), cut >= header.size() + one.size() ? 1u : 0u);
  }
  std::string flipped = full;
  flipped[header.size() + one.size() + 10] ^= 0x40;
  EXPECT_EQ(decode_index(flipped)->points.size(), 1u);
  EXPECT_EQ(decode_index(flipped)->valid_bytes, header.size() + one.size());
  EXPECT_EQ(decode_index(header + two + one)->points.size(), 1u);
  AccessPoint bad_window = golden_point();
  bad_window.window = "hell";  // must be min(32 KiB, member_size) bytes
  EXPECT_EQ(decode_index(header + encode_access_point(bad_window))->points.size(), 0u);
}

class IndexedResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lm_index_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Text that compresses like prose (not trivially): ~`lines` JSONL records.
  static std::string corpus(std::size_t lines, unsigned seed) {
    static const char* kWords[] = {"resume", "stream",     "shard",    "window", "deflate", "block",
                                   "offset", "coordinate", "training", "batch",  "zstd",    "frame",
                                   "the",    "of",         "and",      "a",      "to",      "in"};
    std::mt19937 rng(seed);
    std::string out;
    for (std::size_t i = 0; i < lines; ++i) {
      out += "{\"text\": \"" + std::to_string(i);
      const std::size_t n = 5 + rng() % 30;
      for (std::size_t w = 0; w < n; ++w) out += std::string(" ") + kWords[rng() % 18];
      out += "\"}\n";
    }
    return out;
  }

  static std::string gzip(const std::string& data) {
    z_stream z{};
    EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  }

  static std::string zstd_frames(const std::string& data, std::size_t frame_bytes) {
    std::string out;
    for (std::size_t at = 0; at < data.size(); at += frame_bytes) {
      const std::string part = data.substr(at, frame_bytes);
      std::string frame(ZSTD_compressBound(part.size()), '\0');
      frame.resize(ZSTD_compress(frame.data(), frame.size(), part.data(), part.size(), 3));
      out += frame;
    }
    return out;
  }

  struct Read {
    std::vector<std::string> texts;
    std::vector<StreamCoordinate> coordinates;
    std::vector<std::string> issues;
  };

  Read read(const std::string& path, std::optional<StreamCoordinate> start, bool indexed) {
    ShardReaderOptions o;
    o.start = start;
    o.batch_size = 97;
    o.threads = 1;
    if (indexed) {
      o.index_dir = (dir_ / "index").string();
      o.index_spacing = 64 * 1024;
    }
    ShardReader reader({path}, o);
    Read r;
    DocumentBatch batch;
    while (reader.next_batch(batch)) {
      for (std::size_t i = 0; i < batch.size(); ++i) {
        r.texts.emplace_back(batch.texts[i]);
        r.coordinates.push_back(batch.coordinates[i]);
      }
    }
    for (const ReadIssue& issue : reader.issues()) {
      r.issues.push_back(std::string(issue_kind_name(issue.kind)) + " " + issue.to_string());
    }
    return r;
  }

  std::optional<readers_internal::DecodedIndex> index_of(const std::string& path, IndexKind kind) {
    const std::string bytes =
        read_file(dir_ / "index" / readers_internal::index_file_name(path, kind));
    return decode_index(bytes);
  }

  // Overwrites [0, end) of the file with garbage, keeping its size and mtime (so the index still
  // matches): a read that touches the prefix fails, one that starts at an access point does not.
  static void clobber_prefix(const std::string& path, std::size_t end) {
    const auto mtime = fs::last_write_time(path);
    std::string bytes = read_file(path);
    for (std::size_t i = 0; i < end; ++i) bytes[i] = static_cast<char>(0xA5 ^ (i * 31));
    std::ofstream(path, std::ios::binary) << bytes;
    fs::last_write_time(path, mtime);
  }

  fs::path dir_;
};

TEST_F(IndexedResumeTest, GzipResumeFromAnIndexMatchesAFullResumeAndSkipsThePrefix) {
  const std::string data = corpus(12000, 1);
  const std::string path = write("a.jsonl.gz", gzip(data));
  const Read full = read(path, std::nullopt, true);  // builds the index
  ASSERT_EQ(full.texts.size(), 12000u);
  EXPECT_TRUE(full.issues.empty());
  const auto index = index_of(path, IndexKind::kGzip);
  ASSERT_TRUE(index.has_value());
  ASSERT_GE(index->points.size(), 5u);
  for (const AccessPoint& p : index->points) {
    // Each point's newline count is the exact count of the prefix.
    EXPECT_EQ(p.newlines,
              static_cast<std::uint64_t>(std::count(
                  data.begin(), data.begin() + static_cast<long>(p.uncompressed_offset), '\n')));
  }
  for (const std::size_t at : {std::size_t{1}, full.texts.size() / 2, full.texts.size() * 9 / 10}) {
    const StreamCoordinate start = full.coordinates[at - 1];
    const Read plain = read(path, start, false);
    const Read indexed = read(path, start, true);
    EXPECT_EQ(indexed.texts, plain.texts);
    EXPECT_EQ(indexed.coordinates, plain.coordinates);
    EXPECT_EQ(
        std::vector<std::string>(full.texts.begin() + static_cast<long>(at), full.texts.end()),
        plain.texts);
  }
  // Proof that the indexed resume does not read the prefix: destroy it.
  const StreamCoordinate late = full.coordinates[full.texts.size() * 9 / 10];
  const AccessPoint* used = nullptr;
  for (const AccessPoint& p : index->points) {
    if (p.uncompressed_offset <= late.byte_offset) used = &p;
  }
  ASSERT_NE(used, nullptr);
  clobber_prefix(path, static_cast<std::size_t>(used->compressed_offset) - 1);
  const Read after = read(path, late, true);
  EXPECT_TRUE(after.issues.empty()) << after.issues.front();
  EXPECT_EQ(after.texts, std::vector<std::string>(
                             full.texts.begin() + static_cast<long>(full.texts.size() * 9 / 10 + 1),
                             full.texts.end()));
  const Read unindexed = read(path, late, false);
  ASSERT_FALSE(unindexed.issues.empty());
  EXPECT_EQ(unindexed.issues[0].rfind("decompression_error", 0), 0u);
}

TEST_F(IndexedResumeTest, MultiMemberGzipAndTrailerChecks) {
  const std::string a = corpus(3000, 2), b = corpus(3000, 3);
  std::string blob = gzip(a) + std::string(5, '\0') + gzip(b);
  const std::string path = write("m.jsonl.gz", blob);
  const Read full = read(path, std::nullopt, true);
  ASSERT_EQ(full.texts.size(), 6000u);
  for (const std::size_t at : {std::size_t{1500}, std::size_t{2999}, std::size_t{4500}}) {
    const StreamCoordinate start = full.coordinates[at - 1];
    EXPECT_EQ(read(path, start, true).texts, read(path, start, false).texts) << at;
  }
  // A damaged CRC in the first member's trailer: the resumed (raw) member reports what a read
  // from the start reports.
  const std::size_t trailer = gzip(a).size() - 8;
  blob[trailer] = static_cast<char>(blob[trailer] ^ 1);
  const auto mtime = fs::last_write_time(path);
  std::ofstream(path, std::ios::binary) << blob;
  fs::last_write_time(path, mtime);
  const StreamCoordinate start = full.coordinates[2000];
  const Read plain = read(path, start, false), indexed = read(path, start, true);
  ASSERT_EQ(plain.issues.size(), 1u);
  EXPECT_NE(plain.issues[0].find("incorrect data check"), std::string::npos) << plain.issues[0];
  EXPECT_EQ(indexed.issues, plain.issues);
  EXPECT_EQ(indexed.texts, plain.texts);
}

TEST_F(IndexedResumeTest, TruncatedGzipResumedFromAnIndexIsADecompressionError) {
  const std::string data = corpus(8000, 4);
  const std::string blob = gzip(data);
  const std::string path = write("t.jsonl.gz", blob);
  const Read full = read(path, std::nullopt, true);
  std::ofstream(path, std::ios::binary) << blob.substr(0, blob.size() * 3 / 4);
  // The index is stale now (size changed): it is rebuilt, and both reads agree.
  const StreamCoordinate start = full.coordinates[1000];
  const Read plain = read(path, start, false);
  read(path, std::nullopt, true);  // rebuild
  const Read indexed = read(path, start, true);
  ASSERT_EQ(plain.issues.size(), 1u);
  EXPECT_NE(plain.issues[0].find("truncated gzip stream"), std::string::npos);
  EXPECT_EQ(indexed.issues, plain.issues);
  EXPECT_EQ(indexed.texts, plain.texts);
  ASSERT_TRUE(index_of(path, IndexKind::kGzip).has_value());
  EXPECT_EQ(index_of(path, IndexKind::kGzip)->header.identity.size, blob.size() * 3 / 4);
}

TEST_F(IndexedResumeTest, ZstdFrameIndex) {
  const std::string data = corpus(12000, 5);
  const std::string path = write("z.jsonl.zst", zstd_frames(data, 100 * 1024));
  const Read full = read(path, std::nullopt, true);
  ASSERT_EQ(full.texts.size(), 12000u);
  const auto index = index_of(path, IndexKind::kZstd);
  ASSERT_TRUE(index.has_value());
  ASSERT_GE(index->points.size(), 5u);
  for (const AccessPoint& p : index->points) EXPECT_EQ(p.uncompressed_offset % (100 * 1024), 0u);
  const StreamCoordinate late = full.coordinates[10000];
  const AccessPoint* used = nullptr;
  for (const AccessPoint& p : index->points) {
    if (p.uncompressed_offset <= late.byte_offset) used = &p;
  }
  ASSERT_NE(used, nullptr);
  const Read plain = read(path, late, false);
  clobber_prefix(path, static_cast<std::size_t>(used->compressed_offset));
  const Read indexed = read(path, late, true);
  EXPECT_TRUE(indexed.issues.empty());
  EXPECT_EQ(indexed.texts, plain.texts);
  EXPECT_EQ(indexed.coordinates, plain.coordinates);
}

TEST_F(IndexedResumeTest, SingleFrameZstdHasNoPoints) {
  const std::string data = corpus(6000, 6);
  const std::string path = write("s.jsonl.zst", zstd_frames(data, data.size()));
  const Read full = read(path, std::nullopt, true);
  EXPECT_FALSE(
      fs::exists(dir_ / "index" / readers_internal::index_file_name(path, IndexKind::kZstd)));
  const StreamCoordinate start = full.coordinates[4000];
  EXPECT_EQ(read(path, start, true).texts, read(path, start, false).texts);
}

TEST_F(IndexedResumeTest, BadOptions) {
  ShardReaderOptions o;
  o.index_spacing = 1000;
  EXPECT_THROW(ShardReader({"x.jsonl.gz"}, o), InvalidArgument);
  const std::string file = write("not_a_dir", "x");
  o.index_spacing = 1 << 20;
  o.index_dir = file;
  EXPECT_THROW(ShardReader({"x.jsonl.gz"}, o), IoError);
}

}  // namespace
}  // namespace luminamoon::data
