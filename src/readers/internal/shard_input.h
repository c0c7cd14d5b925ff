// Random access to the bytes of one shard: a local file (pread) or an http(s) URL (HTTP/1.1 Range
// requests through libcurl, with bounded retries and ETag / Last-Modified checks). The byte
// sources (byte_source.h) read through it, so every format works over HTTP too. The Python
// fallback (fallbacks/http_input.py) follows the same rules and messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "readers/internal/access_index.h"

namespace luminamoon::data::readers_internal {

// A read that failed; what() is the reason ("Input/output error", "HTTP 503 after 5 attempts").
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ShardInput {
 public:
  virtual ~ShardInput() = default;
  // Reads up to `size` bytes at `offset`: fewer only at the end of the shard. Throws InputError.
  virtual std::size_t pread_some(void* buffer, std::size_t size, std::uint64_t offset) = 0;
  virtual std::uint64_t size() const = 0;
  // What an access-point index is bound to: size and mtime for a file; for a URL the size and a
  // hash of its ETag and Last-Modified (a changed remote file invalidates its index).
  virtual ShardIdentity identity() const = 0;
  // For a URL, its validators as stored beside the checkpoint ("" for a file).
  virtual std::string validators() const { return {}; }
};

struct HttpOptions {
  unsigned retries = 4;   // extra attempts after a 5xx, a timeout or a connection error
  double backoff = 0.5;   // seconds before the first retry, doubled for each next one
  double timeout = 30.0;  // seconds per request (connect and transfer)
};

// True for "http://..." and "https://..." (ASCII case-insensitive scheme).
bool is_url(std::string_view path) noexcept;
// The name a format is detected from: a URL without its ?query and #fragment; a path as it is.
std::string_view name_for_format(std::string_view path) noexcept;

// Opens `url`: one Range request for byte 0 learns the size and the validators. nullptr and
// `error` ("HTTP 404", "connection error after 5 attempts", ...) when it cannot be read.
std::unique_ptr<ShardInput> open_http_input(const std::string& url, const HttpOptions& options,
                                            std::string& error);

}  // namespace luminamoon::data::readers_internal
