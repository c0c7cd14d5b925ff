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

namespace luminamoon::data::readers_internal {
namespace {

using internal::PosixFile;

// Plain files are read in large blocks straight into the caller's buffer.
constexpr std::size_t kFileReadBytes = 1 << 20;
// Compressed files are read this much at a time and decoded in kCompressedFeedBytes slices.
constexpr std::size_t kCompressedReadBytes = 64 * kCompressedFeedBytes;
static_assert(kCompressedReadBytes % kCompressedFeedBytes == 0);

std::string errno_text(int error_number) { return std::strerror(error_number); }

class PlainSource final : public ByteSource {
 public:
  explicit PlainSource(PosixFile file) : file_(std::move(file)) {}

  std::size_t read(char* out, std::size_t capacity) override {
    if (failed() || capacity == 0) return 0;
    try {
      const std::size_t n = file_.pread_some(out, std::min(capacity, kFileReadBytes), position_);
      position_ += n;
      return n;
    } catch (const IoError& e) {
      error_ = "read error after " + std::to_string(position_) +
               " bytes: " + errno_text(e.error_number());
      return 0;
    }
  }

  std::uint64_t skip(std::uint64_t count, std::optional<std::uint64_t>& newlines) override {
    newlines.reset();
    std::uint64_t size = 0;
    try {
      size = file_.size();
    } catch (const IoError& e) {
      error_ = "cannot stat: " + errno_text(e.error_number());
      return 0;
    }
    position_ = std::min(count, size);
    return position_;
  }

 private:
  PosixFile file_;
  std::uint64_t position_ = 0;
};

// Common driver of the compressed sources: reads the file, hands the decoder fixed-size feeds,
// and serves decoded bytes. A decoder step that fails drops its own output (`committed` marks).
class CompressedSource : public ByteSource {
 public:
  explicit CompressedSource(PosixFile file)
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

 protected:
  // Decodes one feed, appending to `out`. On failure: `out` keeps only the output of the steps
  // that completed, error_ is set, returns false.
  virtual bool decode(const unsigned char* data, std::size_t size, std::string& out) = 0;
  // At the end of the compressed input: false (error_ set) when it stops inside a member/frame.
  virtual bool finish() = 0;

  void fail(std::string message) {
    error_ = std::move(message);
    decompression_failed_ = true;
  }

 private:
  void produce() {
    if (in_pos_ == in_end_) {
      try {
        in_end_ = file_.pread_some(input_.data(), input_.size(), file_pos_);
      } catch (const IoError& e) {
        error_ = "read error after " + std::to_string(file_pos_) +
                 " compressed bytes: " + errno_text(e.error_number());
        finished_ = true;
        return;
      }
      in_pos_ = 0;
      file_pos_ += in_end_;
      if (in_end_ == 0) {
        finish();
        finished_ = true;
        return;
      }
    }
    const std::size_t n = std::min(kCompressedFeedBytes, in_end_ - in_pos_);
    const bool ok = decode(input_.data() + in_pos_, n, ready_);
    in_pos_ += n;
    if (!ok) finished_ = true;
  }

  PosixFile file_;
  std::uint64_t file_pos_ = 0;
  std::vector<unsigned char> input_;
  std::size_t in_pos_ = 0, in_end_ = 0;
  std::string ready_;
  std::size_t ready_pos_ = 0;
  bool finished_ = false;
};

// Grows `out` so that at least `room` bytes are writable past `used`; returns the write pointer.
unsigned char* reserve_tail(std::string& out, std::size_t used, std::size_t room) {
  if (out.size() < used + room) out.resize(std::max(used + room, out.size() * 2));
  return reinterpret_cast<unsigned char*>(out.data()) + used;
}

// gzip, including concatenated members (zero padding between them is skipped, as gzip does).
class GzipSource final : public CompressedSource {
 public:
  explicit GzipSource(PosixFile file) : CompressedSource(std::move(file)) {
    if (inflateInit2(&stream_, 15 + 16) != Z_OK) throw std::bad_alloc();
  }
  ~GzipSource() override { inflateEnd(&stream_); }

 protected:
  bool decode(const unsigned char* data, std::size_t size, std::string& out) override {
    while (size > 0) {
      if (!in_member_) {
        if (members_ > 0) {
          while (size > 0 && *data == 0) ++data, --size;
          if (size == 0) return true;
        }
        inflateReset(&stream_);
        in_member_ = true;
      }
      // One step: this member over the rest of the feed, like one zlib decompress() call.
      const std::size_t mark = out.size();
      std::size_t used = mark;
      stream_.next_in = const_cast<unsigned char*>(data);
      stream_.avail_in = static_cast<uInt>(size);
      int rc = Z_OK;
      for (;;) {
        const std::size_t room = std::max<std::size_t>(64 * 1024, 4 * stream_.avail_in);
        stream_.next_out = reserve_tail(out, used, room);
        stream_.avail_out = static_cast<uInt>(room);
        rc = inflate(&stream_, Z_NO_FLUSH);
        used += room - stream_.avail_out;
        if (rc == Z_STREAM_END) break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) break;
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
        in_member_ = false;
        ++members_;
      }
    }
    return true;
  }

  bool finish() override {
    if (!in_member_) return true;
    fail("truncated gzip stream: the file ends inside a compressed member");
    return false;
  }

 private:
  z_stream stream_{};
  bool in_member_ = false;
  std::uint64_t members_ = 0;
};

// zstd, including concatenated frames.
class ZstdSource final : public CompressedSource {
 public:
  explicit ZstdSource(PosixFile file) : CompressedSource(std::move(file)), ctx_(ZSTD_createDCtx()) {
    if (ctx_ == nullptr) throw std::bad_alloc();
  }
  ~ZstdSource() override { ZSTD_freeDCtx(ctx_); }

 protected:
  bool decode(const unsigned char* data, std::size_t size, std::string& out) override {
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) {
      if (!in_frame_) {
        ZSTD_DCtx_reset(ctx_, ZSTD_reset_session_only);
        in_frame_ = true;
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
    lines += static_cast<std::uint64_t>(std::count(scratch.data(), scratch.data() + n, '\n'));
    done += n;
  }
  newlines = lines;
  return done;
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path, Compression compression,
                                             std::string& error) {
  // Non-blocking open: a FIFO with no writer would block O_RDONLY forever. The file type is
  // checked on the descriptor (no stat-then-open race); blocking mode is restored for reads.
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
  switch (compression) {
    case Compression::kGzip:
      return std::make_unique<GzipSource>(std::move(file));
    case Compression::kZstd:
      return std::make_unique<ZstdSource>(std::move(file));
    case Compression::kNone:
      break;
  }
  return std::make_unique<PlainSource>(std::move(file));
}

std::optional<std::uint64_t> count_newlines_in_file(const std::string& path, std::uint64_t count) {
  try {
    PosixFile file = PosixFile::open(path, O_RDONLY);
    std::vector<char> buffer(kFileReadBytes);
    std::uint64_t done = 0, lines = 0;
    while (done < count) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), count - done));
      const std::size_t n = file.pread_some(buffer.data(), want, done);
      if (n == 0) break;
      lines += static_cast<std::uint64_t>(std::count(buffer.data(), buffer.data() + n, '\n'));
      done += n;
    }
    return lines;
  } catch (const IoError&) {
    return std::nullopt;
  }
}

}  // namespace luminamoon::data::readers_internal
