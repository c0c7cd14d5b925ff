// UTF-8 from fixed-width code units: Latin-1 (one byte a unit), UCS-2 (two bytes, each unit a
// code point: no surrogate pairs) and UTF-32 (four bytes), in host byte order. These are the
// three forms a CPython str keeps its text in (PEP 393), and the bindings encode every str that
// is not ASCII with this: CPython's own encoder copies 1.7-1.8 GB/s on real text that is 96-99%
// ASCII (its per-character loop has no ASCII fast path for these forms), and
// PyUnicode_AsUTF8AndSize keeps the result attached to the str for the object's lifetime.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <string_view>

namespace luminamoon::data {

// Bytes that encode_utf8's output buffer must hold for `count` units of `width` bytes: the most
// one unit can take (2 for Latin-1, 3 for UCS-2, 4 for UTF-32) times count. Bytes past the
// encoded ones, inside this capacity, may be overwritten (the encoder stores whole blocks).
constexpr std::size_t utf8_encode_capacity(std::size_t count, unsigned width) noexcept {
  return count * (width == 1 ? 2 : width == 2 ? 3 : 4);
}

struct Utf8Encoded {
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  std::size_t size = 0;  // bytes written
  // The index of the first unit that is not a Unicode scalar value, npos when there is none. A
  // surrogate (U+D800..U+DFFF) is written in its 3-byte form, as Python's "surrogatepass" error
  // handler writes it (not valid UTF-8); a unit above U+10FFFF (never in a Python str) as U+FFFD.
  std::size_t first_invalid = npos;
};

// A document's code units in one of the forms encode_utf8 reads (a CPython str's characters).
struct CodeUnits {
  const void* data = nullptr;
  std::size_t count = 0;
  unsigned width = 1;  // bytes a unit: 1, 2 or 4
};

// Encodes units[0, count), each `width` bytes (1, 2 or 4), into `out`, which must hold
// utf8_encode_capacity(count, width) bytes. Runs of ASCII are narrowed 16 units at a time.
// Throws InvalidArgument for any other width.
Utf8Encoded encode_utf8(const void* units, std::size_t count, unsigned width, char* out);

// A document of a batch that is still code units: the batch's view of document `index` is not
// read, these units are. A stage that reads each document once (exact dedup's hashes, MinHash's
// signatures) encodes such a document on the worker that reads it, into that worker's
// Utf8Scratch, so the batch's UTF-8 is never written out whole and read back, and the encoding
// is spread over the workers with the rest of the work (the bindings list the strs that are not
// ASCII so, bindings/common.h). Lists of them are in ascending `index` order.
struct PendingUtf8 {
  std::size_t index = 0;
  CodeUnits units;
};

// One worker's buffer for encode_utf8, grown as needed and reused from document to document.
class Utf8Scratch {
 public:
  // The UTF-8 of `units` (valid until the next call); `first_invalid` as encode_utf8 reports it.
  std::string_view encode(const CodeUnits& units, std::size_t& first_invalid);
  std::size_t capacity() const noexcept { return capacity_; }
  // Frees the buffer when it holds more than `most` bytes.
  void release_above(std::size_t most) noexcept {
    if (capacity_ > most) {
      buffer_.reset();
      capacity_ = 0;
    }
  }

 private:
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
};

// Throws InvalidArgument ("<where>: pending[k] ...") unless the indices of `pending` ascend and
// are below `documents`.
void check_pending(std::span<const PendingUtf8> pending, std::size_t documents, const char* where);

// The first entry of `pending` (ascending indices) whose index is `begin` or more.
std::size_t first_pending_at(std::span<const PendingUtf8> pending, std::size_t begin) noexcept;

}  // namespace luminamoon::data
