#include "luminamoon/data/readers/shard_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "readers/internal/record_scanner.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;
using readers_internal::ByteSource;
using readers_internal::RecordScanner;
using readers_internal::ScanEvent;
using readers_internal::SplitMode;

// Serves a string in pieces of `piece` bytes, optionally failing at the end.
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string data, std::size_t piece, bool fail_at_end = false)
      : data_(std::move(data)), piece_(piece), fail_(fail_at_end) {}
  std::size_t read(char* out, std::size_t capacity) override {
    const std::size_t n = std::min({capacity, piece_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, n, out);
    pos_ += n;
    if (n == 0 && fail_) {
      error_ = "damaged";
      decompression_failed_ = true;
    }
    return n;
  }

 private:
  std::string data_;
  std::size_t piece_, pos_ = 0;
  bool fail_;
};

struct Scanned {
  std::string kind;  // R(ecord), L(ong), E(rror), end
  std::uint64_t offset, end, line, blank, length;
  bool shard_end;
  std::string data;
  bool operator==(const Scanned&) const = default;
};

std::vector<Scanned> scan(const std::string& data, SplitMode mode, std::uint64_t max,
                          std::size_t piece, std::size_t block, bool fail = false) {
  MemorySource source(data, piece, fail);
  RecordScanner scanner(source, mode, max, 0, block);
  std::vector<Scanned> out;
  std::vector<ScanEvent> events;
  while (!scanner.done()) {
    events.clear();
    scanner.next_block(events);
    for (const ScanEvent& e : events) {
      const char* names[] = {"R", "L", "E", "end"};
      out.push_back({names[static_cast<int>(e.kind)], e.offset, e.end, e.line, e.blank_lines,
                     e.length, e.shard_end, std::string(e.data)});
    }
  }
  return out;
}

TEST(RecordScannerTest, Lines) {
  const auto events = scan("a\r\n\n  \nbb\nccc", SplitMode::kLine, 100, 4096, 4096);
  const std::vector<Scanned> expected = {
      {"R", 0, 3, 0, 0, 0, false, "a\r"},
      {"R", 7, 10, 3, 2, 0, false, "bb"},
      {"R", 10, 13, 4, 0, 0, true, "ccc"},
      {"end", 0, 13, 0, 0, 0, false, ""},
  };
  EXPECT_EQ(events, expected);
}

TEST(RecordScannerTest, LastLineEndingAtEofPointsToNextShard) {
  const auto events = scan("a\nb\n", SplitMode::kLine, 100, 1, 1);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_FALSE(events[0].shard_end);
  EXPECT_TRUE(events[1].shard_end);
  EXPECT_EQ(events[1].end, 4u);
}

TEST(RecordScannerTest, Paragraphs) {
  const auto events = scan("\np1\np1b\n \t\nq\n\n", SplitMode::kParagraph, 100, 4096, 4096);
  const std::vector<Scanned> expected = {
      {"R", 1, 8, 1, 1, 0, false, "p1\np1b"},
      {"R", 11, 13, 4, 1, 0, false, "q"},
      {"end", 0, 14, 0, 1, 0, false, ""},
  };
  EXPECT_EQ(events, expected);
}

TEST(RecordScannerTest, TooLongRecordsAreStreamedPast) {
  const std::string data = "ok\n" + std::string(10000, 'x') + "\nok2";
  for (const std::size_t piece : {1ul, 7ul, 4096ul}) {
    const auto events = scan(data, SplitMode::kLine, 100, piece, 64);
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[1].kind, "L");
    EXPECT_EQ(events[1].offset, 3u);
    EXPECT_EQ(events[1].length, 10000u);
    EXPECT_EQ(events[1].line, 1u);
    EXPECT_EQ(events[2].data, "ok2");
  }
}

TEST(RecordScannerTest, DamagedStreamDropsTheUnfinishedRecord) {
  const auto events = scan("a\nb\npartial", SplitMode::kLine, 100, 3, 3, /*fail=*/true);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].data, "b");
  EXPECT_FALSE(events[1].shard_end);
  EXPECT_EQ(events[2].kind, "E");
  EXPECT_EQ(events[2].offset, 4u);
  EXPECT_EQ(events[2].line, 2u);
  EXPECT_EQ(events[3].end, 11u);
}

// Whatever the read and block sizes, the events are the same (the scanner holds back what it
// cannot decide yet instead of guessing).
TEST(RecordScannerTest, IndependentOfReadSizes) {
  std::mt19937 rng(7);
  const char alphabet[] = {'a', ' ', '\n', '\r', '\t', 'b'};
  for (int round = 0; round < 300; ++round) {
    std::string data;
    const std::size_t n = rng() % 200;
    for (std::size_t i = 0; i < n; ++i) data += alphabet[rng() % sizeof(alphabet)];
    for (const SplitMode mode : {SplitMode::kLine, SplitMode::kParagraph, SplitMode::kFile}) {
      const std::uint64_t max = 1 + rng() % 40;
      const auto reference = scan(data, mode, max, 4096, 4096);
      for (const std::size_t piece : {1ul, 2ul, 5ul}) {
        for (const std::size_t block : {1ul, 3ul, 16ul}) {
          EXPECT_EQ(scan(data, mode, max, piece, block), reference)
              << "round " << round << " mode " << static_cast<int>(mode) << " piece " << piece
              << " block " << block;
        }
      }
    }
  }
}

class ShardReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lm_readers_" +
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

  static std::string zstd(const std::string& data) {
    std::string out(ZSTD_compressBound(data.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
    return out;
  }

  static std::vector<std::string> texts(ShardReader& reader,
                                        std::vector<StreamCoordinate>* coordinates = nullptr) {
    std::vector<std::string> out;
    DocumentBatch batch;
    while (reader.next_batch(batch)) {
      for (std::size_t i = 0; i < batch.size(); ++i) {
        out.emplace_back(batch.texts[i]);
        if (coordinates != nullptr) coordinates->push_back(batch.coordinates[i]);
      }
    }
    return out;
  }

  fs::path dir_;
};

StreamCoordinate at(std::uint32_t shard, std::uint64_t offset, std::uint64_t row) {
  StreamCoordinate c;
  c.shard_id = shard;
  c.byte_offset = offset;
  c.global_row_idx = row;
  return c;
}

TEST_F(ShardReaderTest, CoordinatesAndIssues) {
  const std::string a =
      write("a.jsonl", "{\"text\": \"x\"}\n\n{bad\n{\"txt\": 1}\n{\"text\": \"y\"}");
  const std::string b = write("b.jsonl.gz", gzip("{\"text\": \"z\"}\n"));
  ShardReader reader({a, (dir_ / "none*.jsonl").string(), b}, {});
  std::vector<StreamCoordinate> coordinates;
  EXPECT_EQ(texts(reader, &coordinates), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(coordinates, (std::vector<StreamCoordinate>{at(0, 14, 1), at(1, 0, 4), at(2, 0, 5)}));
  const auto issues = reader.issues();
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].kind, IssueKind::kUnmatchedGlob);
  EXPECT_FALSE(issues[0].shard_id.has_value());
  EXPECT_EQ(issues[1].kind, IssueKind::kMalformedJson);
  EXPECT_EQ(issues[1].line, 3u);
  EXPECT_EQ(issues[1].byte_offset, 15u);
  EXPECT_EQ(issues[2].kind, IssueKind::kMissingField);
  EXPECT_EQ(issues[2].message, "field 'text' not found; did you mean 'txt'?");
  EXPECT_EQ(issues[2].to_string(), a + ":4 (byte 20): field 'text' not found; did you mean 'txt'?");
  const ReadStats stats = reader.stats();
  EXPECT_EQ(stats.records, 5u);
  EXPECT_EQ(stats.documents, 3u);
  EXPECT_EQ(stats.blank_lines, 1u);
  EXPECT_EQ(stats.bytes_read, 44u + 14u);
}

TEST_F(ShardReaderTest, ResumeFromEveryCoordinateAllFormats) {
  std::string data;
  for (int i = 0; i < 300; ++i) data += "{\"text\": \"doc " + std::to_string(i) + "\"}\n";
  const std::vector<std::string> shards = {write("p.jsonl", data), write("g.jsonl.gz", gzip(data)),
                                           write("z.jsonl.zst", zstd(data))};
  ShardReaderOptions options;
  options.batch_size = 7;
  ShardReader full(shards, options);
  std::vector<StreamCoordinate> coordinates;
  const auto all = texts(full, &coordinates);
  ASSERT_EQ(all.size(), 900u);
  for (std::size_t k = 0; k < coordinates.size(); k += 13) {
    options.start = coordinates[k];
    ShardReader rest(shards, options);
    std::vector<StreamCoordinate> rest_coordinates;
    EXPECT_EQ(
        texts(rest, &rest_coordinates),
        std::vector<std::string>(all.begin() + static_cast<std::ptrdiff_t>(k) + 1, all.end()));
    EXPECT_EQ(rest_coordinates,
              std::vector<StreamCoordinate>(
                  coordinates.begin() + static_cast<std::ptrdiff_t>(k) + 1, coordinates.end()));
  }
}

TEST_F(ShardReaderTest, TruncatedGzipDeliversWhatWasDecoded) {
  std::string data;
  for (int i = 0; i < 20000; ++i)
    data += "{\"text\": \"record " + std::to_string(i * 7919) + "\"}\n";
  const std::string blob = gzip(data);
  const std::string path = write("t.jsonl.gz", blob.substr(0, blob.size() / 2));
  ShardReader reader({path}, {});
  const auto got = texts(reader);
  ASSERT_GT(got.size(), 0u);
  ASSERT_LT(got.size(), 20000u);
  EXPECT_EQ(got.back(), "record " + std::to_string((got.size() - 1) * 7919));
  const auto issues = reader.issues();
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, IssueKind::kDecompressionError);
  EXPECT_EQ(issues[0].line, got.size() + 1);
}

TEST_F(ShardReaderTest, StrictThrowsWithLocation) {
  const std::string path = write("s.jsonl", "{\"text\": \"a\"}\n{\"text\": 1}\n");
  ShardReaderOptions options;
  options.strict = true;
  ShardReader reader({path}, options);
  DocumentBatch batch;
  try {
    reader.next_batch(batch);
    FAIL() << "no exception";
  } catch (const MalformedInputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2 (byte 14): field 'text' is a number", 0), 0u)
        << e.what();
  }
  EXPECT_FALSE(reader.next_batch(batch));
}

TEST_F(ShardReaderTest, ThreadCountDoesNotChangeAnything) {
  std::string data;
  std::mt19937 rng(3);
  for (int i = 0; i < 30000; ++i) {
    data += (rng() % 50 == 0) ? "{broken\n"
                              : "{\"text\": \"" + std::string(rng() % 400, 'w') +
                                    "\", \"n\": " + std::to_string(i) + "}\n";
  }
  const std::string path = write("m.jsonl", data);
  auto run = [&](unsigned threads) {
    ShardReaderOptions options;
    options.threads = threads;
    options.fields = {"n"};
    options.batch_size = 1000;
    ShardReader reader({path}, options);
    std::vector<StreamCoordinate> coordinates;
    auto got = texts(reader, &coordinates);
    return std::make_tuple(got, coordinates, reader.issues().size(), reader.stats().records);
  };
  const auto one = run(1);
  EXPECT_EQ(run(2), one);
  EXPECT_EQ(run(8), one);
}

TEST_F(ShardReaderTest, OptionErrors) {
  EXPECT_THROW(parse_shard_format("jsnl"), ConfigError);
  EXPECT_THROW(parse_text_mode("para"), ConfigError);
  try {
    parse_shard_format("jsnl");
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "ShardReader: unknown format 'jsnl'; did you mean 'jsonl'?");
  }
  ShardReaderOptions options;
  options.start = at(5, 0, 0);
  EXPECT_THROW(ShardReader({write("a.jsonl", "")}, options), InvalidArgument);
  options = {};
  options.text_field = "a..b";
  EXPECT_THROW(ShardReader({}, options), InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
