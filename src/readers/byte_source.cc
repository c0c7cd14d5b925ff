// Byte sources of a shard (see internal/byte_source.h for the loss rule on damaged streams).
#include "readers/internal/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "common/internal/posix_file.h"
#include "luminamoon/data/common/error.h"
#include "readers/internal/access_index.h"
#include "readers/internal/shard_input.h"

namespace luminamoon::data::readers_internal {
namespace {

using internal::PosixFile;

// Plain files are read in large blocks straight into the caller's buffer.
constexpr std::size_t kFileReadBytes = 1 << 20;
// Compressed files are read this much at a time and decoded in kCompressedFeedBytes slices.
constexpr std::size_t kCompressedReadBytes = 64 * kCompressedFeedBytes;
static_assert(kCompressedReadBytes % kCompressedFeedBytes == 0);

std::string errno_text(int error_number) { return std::strerror(error_number); }

// '\n' in [data, data + size): memchr jumps, ~5x std::count on text with lines of 100+ bytes.
std::uint64_t count_newlines(const char* data, std::size_t size) {
  std::uint64_t n = 0;
  const char* const end = data + size;
  while (data < end) {
    const void* hit = std::memchr(data, '\n', static_cast<std::size_t>(end - data));
    if (hit == nullptr) break;
    ++n;
    data = static_cast<const char*>(hit) + 1;
  }
  return n;
}

// A local file through PosixFile.
class FileInput final : public ShardInput {
 public:
  FileInput(PosixFile file, std::uint64_t size, ShardIdentity identity)
      : file_(std::move(file)), size_(size), identity_(identity) {}

  std::size_t pread_some(void* buffer, std::size_t size, std::uint64_t offset) override {
    try {
      return file_.pread_some(buffer, size, offset);
    } catch (const IoError& e) {
      throw InputError(errno_text(e.error_number()));
    }
  }
  std::uint64_t size() const override { return size_; }
  ShardIdentity identity() const override { return identity_; }

 private:
  PosixFile file_;
  std::uint64_t size_;
  ShardIdentity identity_;
};

class PlainSource final : public ByteSource {
 public:
  explicit PlainSource(std::unique_ptr<ShardInput> input) : input_(std::move(input)) {}

  std::size_t read(char* out, std::size_t capacity) override {
    if (failed() || capacity == 0) return 0;
    try {
      const std::size_t n = input_->pread_some(out, std::min(capacity, kFileReadBytes), position_);
      position_ += n;
      return n;
    } catch (const InputError& e) {
      error_ = "read error after " + std::to_string(position_) + " bytes: " + e.what();
      return 0;
    }
  }

  std::uint64_t skip(std::uint64_t count, std::optional<std::uint64_t>& newlines) override {
    newlines.reset();
    position_ = std::min(count, input_->size());
    return position_;
  }

 private:
  std::unique_ptr<ShardInput> input_;
  std::uint64_t position_ = 0;
};

// The access-point index of one compressed shard (internal/access_index.h): what the index file
// already holds, and the appends. Any I/O error disables it: the index is a cache.
class IndexFile {
 public:
  IndexFile(std::string path, IndexHeader header)
      : path_(std::move(path)), header_(std::move(header)) {}

  const IndexHeader& header() const noexcept { return header_; }
  bool usable() const noexcept { return usable_; }
  std::uint64_t indexed_end() const noexcept { return indexed_end_; }

  // Reads the file; returns the last valid point at or before `target` (nullopt: none).
  std::optional<AccessPoint> load(std::uint64_t target) {
    loaded_ = true;
    try {
      PosixFile file = PosixFile::open_if_exists(path_, O_RDONLY);
      if (!file.valid()) return std::nullopt;
      if (!file.non_regular_kind().empty()) {
        usable_ = false;  // never write to a FIFO or a device named like an index
        return std::nullopt;
      }
      std::string bytes(static_cast<std::size_t>(file.size()), '\0');
      bytes.resize(file.pread_some(bytes.data(), bytes.size(), 0));
      std::optional<DecodedIndex> index = decode_index(bytes);
      if (!index || !(index->header.kind == header_.kind) ||
          index->header.spacing != header_.spacing ||
          !(index->header.identity == header_.identity) || index->header.path != header_.path) {
        return std::nullopt;  // stale or foreign: rewritten at the first append
      }
      valid_bytes_ = index->valid_bytes;
      matches_ = true;
      std::optional<AccessPoint> best;
      for (AccessPoint& point : index->points) {
        indexed_end_ = point.uncompressed_offset;
        if (point.uncompressed_offset <= target) best = std::move(point);
      }
      return best;
    } catch (const IoError&) {
      usable_ = false;
      return std::nullopt;
    }
  }

  void append(const AccessPoint& point) {
    if (!usable_) return;
    if (!loaded_) load(0);
    if (!usable_ || point.uncompressed_offset <= indexed_end_) return;
    try {
      if (!file_.valid()) {
        file_ = PosixFile::open(path_, O_RDWR | O_CREAT);
        if (!file_.non_regular_kind().empty()) throw IoError(EINVAL, path_, "not a regular file");
        if (!matches_) {
          const std::string header = encode_index_header(header_);
          file_.truncate(0);
          file_.pwrite_all(header.data(), header.size(), 0);
          valid_bytes_ = header.size();
          matches_ = true;
        } else {
          file_.truncate(valid_bytes_);  // drop a torn tail before appending
        }
      }
      const std::string record = encode_access_point(point);
      file_.pwrite_all(record.data(), record.size(), valid_bytes_);
      valid_bytes_ += record.size();
      indexed_end_ = point.uncompressed_offset;
    } catch (const IoError&) {
      usable_ = false;
      file_.close();
    }
  }

 private:
  std::string path_;
  IndexHeader header_;
  PosixFile file_;
  bool loaded_ = false, usable_ = true, matches_ = false;
  std::size_t valid_bytes_ = 0;
  std::uint64_t indexed_end_ = 0;
};

// Common driver of the compressed sources: reads the file, hands the decoder fixed-size feeds,
// and serves decoded bytes. A decoder step that fails drops its own output (`committed` marks).
// Feeds are aligned on multiples of kCompressedFeedBytes of the file also after a resume from an
// access point, so a resumed read fails (and drops) exactly where a read from the start would.
class CompressedSource : public ByteSource {
 public:
  explicit CompressedSource(std::unique_ptr<ShardInput> file)
      : file_(std::move(file)), input_(kCompressedReadBytes) {}

  std::size_t read(char* out, std::size_t capacity) override {
    while (ready_pos_ == ready_.size()) {
      if (finished_) return 0;
      ready_.clear();
      ready_pos_ = 0;
      produce();
    }
    const std::size_t n = std::min(capacity, ready_.size() - ready_pos_);
    std::memcpy(out, ready_.data() + ready_pos_, n);
    ready_pos_ += n;
    return n;
  }

  void enable_index(std::unique_ptr<IndexFile> index) { index_ = std::move(index); }

  std::uint64_t skip(std::uint64_t count, std::optional<std::uint64_t>& newlines) override {
    if (index_ && count > 0 && uoff_ == 0 && !finished_) {
      if (std::optional<AccessPoint> point = index_->load(count)) {
        unsigned char prime = 0;
        bool ok = true;
        if (point->bits > 0) {
          try {
            ok = file_->pread_some(&prime, 1, point->compressed_offset - 1) == 1;
          } catch (const InputError&) {
            ok = false;
          }
        }
        if (ok && restart(*point, prime)) {
          const std::uint64_t base = point->uncompressed_offset;
          uoff_ = base;
          newlines_ = point->newlines;
          chain_ = base;
          file_pos_ = point->compressed_offset / kCompressedFeedBytes * kCompressedFeedBytes;
          skip_in_first_read_ = static_cast<std::size_t>(point->compressed_offset - file_pos_);
          std::optional<std::uint64_t> rest;
          const std::uint64_t done = ByteSource::skip(count - base, rest);
          newlines = point->newlines + rest.value_or(0);
          return base + done;
        }
      }
    }
    return ByteSource::skip(count, newlines);
  }

 protected:
  // Decodes one feed (at `offset` in the file), appending to `out`. On failure: `out` keeps only
  // the output of the steps that completed, error_ is set, returns false.
  virtual bool decode(const unsigned char* data, std::size_t size, std::uint64_t offset,
                      std::string& out) = 0;
  // At the end of the compressed input: false (error_ set) when it stops inside a member/frame.
  virtual bool finish() = 0;
  // Puts the decoder at an access point (`prime`: the byte before it, for gzip's bits).
  virtual bool restart(const AccessPoint& point, unsigned char prime) = 0;

  void fail(std::string message) {
    error_ = std::move(message);
    decompression_failed_ = true;
  }

  bool indexing() const noexcept { return index_ && index_->usable(); }

  // True when a point at `used` bytes of this step's output is due (one per index spacing).
  bool point_due(std::size_t used) const noexcept {
    return indexing() && uoff_ + used >= chain_ + index_->header().spacing;
  }

  // Records a due point at `used` bytes of this step's output; kept only if the step succeeds.
  void offer_point(const std::string& out, std::size_t used, AccessPoint point) {
    chain_ = uoff_ + used;
    if (chain_ <= index_->indexed_end()) return;  // already in the file
    point.uncompressed_offset = chain_;
    point.newlines = newlines_ + count_newlines(out.data(), used);
    pending_.emplace_back(used, std::move(point));
  }

 private:
  void produce() {
    if (in_pos_ == in_end_) {
      try {
        in_end_ = file_->pread_some(input_.data(), input_.size(), file_pos_);
      } catch (const InputError& e) {
        error_ = "read error after " + std::to_string(file_pos_) + " compressed bytes: " + e.what();
        finished_ = true;
        return;
      }
      in_pos_ = std::min(skip_in_first_read_, in_end_);
      skip_in_first_read_ = 0;
      file_pos_ += in_end_;
      if (in_end_ == in_pos_) {
        finish();
        finished_ = true;
        return;
      }
    }
    // Feeds end on multiples of kCompressedFeedBytes of the file.
    const std::uint64_t at = file_pos_ - in_end_ + in_pos_;
    const std::size_t to_boundary =
        kCompressedFeedBytes - static_cast<std::size_t>(at % kCompressedFeedBytes);
    const std::size_t n = std::min(to_boundary, in_end_ - in_pos_);
    const bool ok = decode(input_.data() + in_pos_, n, at, ready_);
    in_pos_ += n;
    if (index_) {
      for (auto& [used, point] : pending_) {
        if (used <= ready_.size()) index_->append(point);
      }
      pending_.clear();
      newlines_ += count_newlines(ready_.data(), ready_.size());
    }
    uoff_ += ready_.size();
    if (!ok) finished_ = true;
  }

  std::unique_ptr<ShardInput> file_;
  std::uint64_t file_pos_ = 0;
  std::vector<unsigned char> input_;
  std::size_t in_pos_ = 0, in_end_ = 0;
  std::size_t skip_in_first_read_ = 0;
  std::string ready_;
  std::size_t ready_pos_ = 0;
  bool finished_ = false;
  std::unique_ptr<IndexFile> index_;
  std::uint64_t uoff_ = 0;      // stream offset of the start of `ready_`
  std::uint64_t newlines_ = 0;  // '\n' before uoff_ (counted while indexing)
  std::uint64_t chain_ = 0;     // the last point (in the file or not): the next is one spacing on
  std::vector<std::pair<std::size_t, AccessPoint>> pending_;
};

// Grows `out` so that at least `room` bytes are writable past `used`; returns the write pointer.
unsigned char* reserve_tail(std::string& out, std::size_t used, std::size_t room) {
  if (out.size() < used + room) out.resize(std::max(used + room, out.size() * 2));
  return reinterpret_cast<unsigned char*>(out.data()) + used;
}

std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// gzip, including concatenated members (zero padding between them is skipped, as gzip does).
// Indexed: inflate stops at every deflate block boundary (Z_BLOCK) and one per spacing becomes an
// access point. Resumed at a point, the rest of that member is raw deflate (primed bits + window)
// and its trailer is checked here against the CRC and size carried by the point.
class GzipSource final : public CompressedSource {
 public:
  explicit GzipSource(std::unique_ptr<ShardInput> file) : CompressedSource(std::move(file)) {
    if (inflateInit2(&stream_, 15 + 16) != Z_OK) throw std::bad_alloc();
  }
  ~GzipSource() override { inflateEnd(&stream_); }

 protected:
  bool decode(const unsigned char* data, std::size_t size, std::uint64_t offset,
              std::string& out) override {
    const unsigned char* const begin = data;
    end_mark_.reset();
    while (size > 0) {
      if (trailer_needed_ > 0) {  // the gzip trailer of a member resumed as raw deflate
        const std::size_t take = std::min(size, trailer_needed_);
        std::memcpy(trailer_ + (8 - trailer_needed_), data, take);
        data += take;
        size -= take;
        trailer_needed_ -= take;
        if (trailer_needed_ > 0) return true;
        const bool crc_ok = le32(trailer_) == crc_;
        if (!crc_ok || le32(trailer_ + 4) != static_cast<std::uint32_t>(member_size_)) {
          // zlib checks the trailer in the step that reached it: a failure drops that step's
          // output, also the end of the member decoded in the same feed.
          if (end_mark_) out.resize(*end_mark_);
          fail(crc_ok ? "corrupt gzip stream: incorrect length check"
                      : "corrupt gzip stream: incorrect data check");
          return false;
        }
        end_member();
        continue;
      }
      if (!in_member_) {
        if (members_ > 0) {
          while (size > 0 && *data == 0) ++data, --size;
          if (size == 0) return true;
        }
        inflateReset2(&stream_, 15 + 16);
        in_member_ = true;
        raw_ = false;
        member_size_ = 0;
      }
      // One step: this member over the rest of the feed, like one zlib decompress() call.
      const std::size_t mark = out.size();
      std::size_t used = mark;
      stream_.next_in = const_cast<unsigned char*>(data);
      stream_.avail_in = static_cast<uInt>(size);
      const int flush = indexing() ? Z_BLOCK : Z_NO_FLUSH;
      int rc = Z_OK;
      for (;;) {
        const std::size_t room = std::max<std::size_t>(64 * 1024, 4 * stream_.avail_in);
        unsigned char* const write = reserve_tail(out, used, room);
        stream_.next_out = write;
        stream_.avail_out = static_cast<uInt>(room);
        rc = inflate(&stream_, flush);
        const std::size_t produced = room - stream_.avail_out;
        if (raw_ && produced > 0) {
          crc_ = static_cast<std::uint32_t>(crc32(crc_, write, static_cast<uInt>(produced)));
        }
        used += produced;
        member_size_ += produced;
        if (rc == Z_STREAM_END) break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) break;
        if (flush == Z_BLOCK && (stream_.data_type & 128) != 0 && (stream_.data_type & 64) == 0 &&
            point_due(used)) {
          AccessPoint point;
          point.compressed_offset = offset + static_cast<std::uint64_t>(stream_.next_in - begin);
          point.bits = static_cast<std::uint8_t>(stream_.data_type & 7);
          point.member_size = member_size_;
          point.member_crc = raw_ ? crc_ : static_cast<std::uint32_t>(stream_.adler);
          point.window.resize(kDeflateWindowBytes);
          uInt length = 0;
          inflateGetDictionary(&stream_, reinterpret_cast<Bytef*>(point.window.data()), &length);
          point.window.resize(length);
          offer_point(out, used, std::move(point));
        }
        if (stream_.avail_in == 0 && stream_.avail_out != 0) break;  // needs the next feed
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END) {
        out.resize(mark);
        fail(std::string("corrupt gzip stream: ") +
             (stream_.msg != nullptr ? stream_.msg : "zlib error " + std::to_string(rc)));
        return false;
      }
      out.resize(used);
      const std::size_t consumed = size - stream_.avail_in;
      data += consumed;
      size -= consumed;
      if (rc == Z_STREAM_END) {
        if (raw_) {
          trailer_needed_ = 8;
          end_mark_ = mark;
        } else {
          end_member();
        }
      }
    }
    return true;
  }

  bool finish() override {
    if (!in_member_) return true;
    fail("truncated gzip stream: the file ends inside a compressed member");
    return false;
  }

  bool restart(const AccessPoint& point, unsigned char prime) override {
    if (inflateReset2(&stream_, -15) != Z_OK) return false;
    if (point.bits > 0 && inflatePrime(&stream_, point.bits, prime >> (8 - point.bits)) != Z_OK) {
      return false;
    }
    if (!point.window.empty() &&
        inflateSetDictionary(&stream_, reinterpret_cast<const Bytef*>(point.window.data()),
                             static_cast<uInt>(point.window.size())) != Z_OK) {
      return false;
    }
    in_member_ = true;
    raw_ = true;
    members_ = 1;
    member_size_ = point.member_size;
    crc_ = point.member_crc;
    trailer_needed_ = 0;
    return true;
  }

 private:
  void end_member() {
    in_member_ = false;
    raw_ = false;
    ++members_;
  }

  z_stream stream_{};
  bool in_member_ = false;
  bool raw_ = false;  // resumed inside this member: raw deflate, trailer checked here
  std::uint64_t members_ = 0;
  std::uint64_t member_size_ = 0;
  std::uint32_t crc_ = 0;  // raw_: CRC-32 of the member's output so far
  std::size_t trailer_needed_ = 0;
  unsigned char trailer_[8] = {};
  std::optional<std::size_t> end_mark_;  // this feed's step that ended the raw member
};

// zstd, including concatenated frames. Indexed: a frame start becomes an access point, at most
// one per spacing. A single-frame file has none (zstd cannot restart inside a frame).
class ZstdSource final : public CompressedSource {
 public:
  explicit ZstdSource(std::unique_ptr<ShardInput> file)
      : CompressedSource(std::move(file)), ctx_(ZSTD_createDCtx()) {
    if (ctx_ == nullptr) throw std::bad_alloc();
  }
  ~ZstdSource() override { ZSTD_freeDCtx(ctx_); }

 protected:
  bool decode(const unsigned char* data, std::size_t size, std::uint64_t offset,
              std::string& out) override {
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) {
      if (!in_frame_) {
        ZSTD_DCtx_reset(ctx_, ZSTD_reset_session_only);
        in_frame_ = true;
        if (point_due(out.size())) {
          AccessPoint point;
          point.compressed_offset = offset + in.pos;
          offer_point(out, out.size(), std::move(point));
        }
      }
      // One step: this frame over the rest of the feed, like one zstandard decompress() call.
      const std::size_t mark = out.size();
      std::size_t used = mark;
      bool frame_done = false;
      for (;;) {
        const std::size_t room = ZSTD_DStreamOutSize();
        ZSTD_outBuffer buffer{reserve_tail(out, used, room), room, 0};
        const std::size_t rc = ZSTD_decompressStream(ctx_, &buffer, &in);
        if (ZSTD_isError(rc)) {
          out.resize(mark);
          fail(std::string("corrupt zstd stream: ") + ZSTD_getErrorName(rc));
          return false;
        }
        used += buffer.pos;
        if (rc == 0) {
          frame_done = true;
          break;
        }
        if (in.pos == in.size && buffer.pos < buffer.size) break;  // needs the next feed
      }
      out.resize(used);
      if (frame_done) in_frame_ = false;
    }
    return true;
  }

  bool finish() override {
    if (!in_frame_) return true;
    fail("truncated zstd stream: the file ends inside a frame");
    return false;
  }

  bool restart(const AccessPoint&, unsigned char) override {
    ZSTD_DCtx_reset(ctx_, ZSTD_reset_session_only);
    in_frame_ = false;
    return true;
  }

 private:
  ZSTD_DCtx* ctx_;
  bool in_frame_ = false;
};

}  // namespace

std::uint64_t ByteSource::skip(std::uint64_t count, std::optional<std::uint64_t>& newlines) {
  std::vector<char> scratch(1 << 16);
  std::uint64_t done = 0, lines = 0;
  while (done < count) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(scratch.size(), count - done));
    const std::size_t n = read(scratch.data(), want);
    if (n == 0) break;
    lines += count_newlines(scratch.data(), n);
    done += n;
  }
  newlines = lines;
  return done;
}

namespace {

// The input of a local file: non-blocking open (a FIFO with no writer would block O_RDONLY
// forever), the type checked on the descriptor (no stat-then-open race), blocking mode restored.
std::unique_ptr<ShardInput> open_file_input(const std::string& path, std::string& error) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    error = errno_text(errno);
    return nullptr;
  }
  PosixFile file(fd, path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = errno_text(errno);
    return nullptr;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "it is a directory";
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    // FIFOs and devices could block or never end (/dev/zero): never a hang.
    error = "not a regular file";
    return nullptr;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    error = errno_text(errno);
    return nullptr;
  }
  ShardIdentity identity;
  identity.size = static_cast<std::uint64_t>(st.st_size);
  identity.mtime_ns =
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return std::make_unique<FileInput>(std::move(file), identity.size, identity);
}

// "LMHTTP 1\nsize 5\netag \"a\"\n..." -> "size 5, etag \"a\", ..." for messages.
std::string describe_validators(std::string_view text) {
  std::string out;
  std::size_t line = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view part = text.substr(0, nl);
    if (line++ > 0) out += (out.empty() ? "" : ", ") + std::string(part);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// The validators of a URL kept beside the checkpoint: written when the shard is read from its
// start, compared when it is resumed. A mismatch sets `error` (the shard changed).
bool check_remote_validators(const std::string& dir, const std::string& url,
                             const std::string& current, std::uint64_t start, std::string& error) {
  const std::string path =
      dir + "/" + index_file_name(url, IndexKind::kGzip).substr(0, 16) + ".http";
  std::string stored;
  bool have = false;
  try {
    PosixFile file = PosixFile::open_if_exists(path, O_RDONLY);
    if (file.valid() && file.non_regular_kind().empty()) {
      stored.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), 1 << 16)));
      stored.resize(file.pread_some(stored.data(), stored.size(), 0));
      have = true;
    }
  } catch (const IoError&) {
    have = false;
  }
  if (start > 0 && have && stored != current) {
    error =
        "the remote shard changed since it was first read (then: " + describe_validators(stored) +
        "; now: " + describe_validators(current) +
        "); resuming would mix two versions of the file: restore it, or restart this shard "
        "from offset 0";
    return false;
  }
  if (start == 0 || !have) {
    try {
      PosixFile file = PosixFile::open(path, O_WRONLY | O_CREAT | O_TRUNC);
      file.pwrite_all(current.data(), current.size(), 0);
    } catch (const IoError&) {
      // A cache like the index: reading goes on without it.
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<ByteSource> open_byte_source(const std::string& path, Compression compression,
                                             std::string& error, const SourceOptions* options) {
  const SourceOptions defaults;
  const SourceOptions& o = options != nullptr ? *options : defaults;
  std::unique_ptr<ShardInput> input;
  if (is_url(path)) {
    input = open_http_input(path, o.http, error);
    if (input && !o.index.dir.empty() &&
        !check_remote_validators(o.index.dir, path, input->validators(), o.start, error)) {
      return nullptr;
    }
  } else {
    input = open_file_input(path, error);
  }
  if (!input) return nullptr;
  const ShardIdentity identity = input->identity();
  std::unique_ptr<CompressedSource> source;
  switch (compression) {
    case Compression::kGzip:
      source = std::make_unique<GzipSource>(std::move(input));
      break;
    case Compression::kZstd:
      source = std::make_unique<ZstdSource>(std::move(input));
      break;
    case Compression::kNone:
      return std::make_unique<PlainSource>(std::move(input));
  }
  if (!o.index.dir.empty()) {
    IndexHeader header;
    header.kind = compression == Compression::kGzip ? IndexKind::kGzip : IndexKind::kZstd;
    header.spacing = o.index.spacing;
    header.identity = identity;
    header.path = path;
    std::string file_path = o.index.dir + "/" + index_file_name(path, header.kind);
    source->enable_index(std::make_unique<IndexFile>(std::move(file_path), std::move(header)));
  }
  return source;
}

std::optional<std::uint64_t> count_newlines_in_file(const std::string& path, std::uint64_t count) {
  if (is_url(path)) return std::nullopt;  // not fetched again just for a line number
  try {
    PosixFile file = PosixFile::open(path, O_RDONLY);
    std::vector<char> buffer(kFileReadBytes);
    std::uint64_t done = 0, lines = 0;
    while (done < count) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), count - done));
      const std::size_t n = file.pread_some(buffer.data(), want, done);
      if (n == 0) break;
      lines += count_newlines(buffer.data(), n);
      done += n;
    }
    return lines;
  } catch (const IoError&) {
    return std::nullopt;
  }
}

}  // namespace luminamoon::data::readers_internal
