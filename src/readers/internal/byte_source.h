// The uncompressed bytes of one shard, front to back: plain files by large preads, .gz by zlib,
// .zst by libzstd. Compressed input is decoded in fixed 4 KiB feeds of the compressed file; the
// output of a decoding step that fails is dropped, so a damaged stream delivers exactly the
// bytes the Python fallback delivers (it feeds zlib / zstandard the same 4 KiB pieces).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "readers/internal/shard_input.h"

namespace luminamoon::data::readers_internal {

enum class Compression : std::uint8_t { kNone, kGzip, kZstd };

// Compressed bytes handed to the decoder per step. Also the unit of loss on corruption.
inline constexpr std::size_t kCompressedFeedBytes = 4096;

class ByteSource {
 public:
  virtual ~ByteSource() = default;

  // Reads up to `capacity` bytes into `out` (fewer is not the end). 0 means the end of the
  // stream: failed() then says whether it ended cleanly.
  virtual std::size_t read(char* out, std::size_t capacity) = 0;

  // Moves past the first `count` bytes of the stream (resume). Returns the bytes actually passed
  // (fewer when the stream is shorter or fails). Compressed sources decode and discard, counting
  // newlines into `newlines`; plain files seek and leave `newlines` empty (counted on demand).
  virtual std::uint64_t skip(std::uint64_t count, std::optional<std::uint64_t>& newlines);

  bool failed() const noexcept { return !error_.empty(); }
  const std::string& error() const noexcept { return error_; }
  // True when the failure is a damaged compressed stream, false for an I/O error.
  bool decompression_failed() const noexcept { return decompression_failed_; }

 protected:
  std::string error_;
  bool decompression_failed_ = false;
};

// Access-point index of compressed shards (internal/access_index.h): kept in `dir` (none when
// empty), one point per `spacing` uncompressed bytes.
struct IndexOptions {
  std::string dir;
  std::uint64_t spacing = 4u << 20;
};

// How a shard is opened: its index, http(s) behaviour, and the offset reading starts at (a URL's
// validators kept in the index directory are checked when it is not 0).
struct SourceOptions {
  IndexOptions index;
  HttpOptions http;
  std::uint64_t start = 0;
};

// Opens a shard (a local path or an http(s) URL) for reading. Returns nullptr and sets `error`
// ("No such file or directory", "it is a directory", "not a regular file", "HTTP 404", ...)
// when it cannot be read.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path, Compression compression,
                                             std::string& error,
                                             const SourceOptions* options = nullptr);

// Counts '\n' in the first `count` bytes of the plain file `path`; nullopt if it cannot be read.
std::optional<std::uint64_t> count_newlines_in_file(const std::string& path, std::uint64_t count);

}  // namespace luminamoon::data::readers_internal
