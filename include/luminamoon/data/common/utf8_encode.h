// UTF-8 from fixed-width code units: Latin-1 (one byte a unit), UCS-2 (two bytes, each unit a
// code point: no surrogate pairs) and UTF-32 (four bytes), in host byte order. These are the
// three forms a CPython str keeps its text in (PEP 393), and the bindings encode every str that
// is not ASCII with this: CPython's own encoder copies 1.7-1.8 GB/s on real text that is 96-99%
// ASCII (its per-character loop has no ASCII fast path for these forms), and
// PyUnicode_AsUTF8AndSize keeps the result attached to the str for the object's lifetime.
#pragma once

#include <cstddef>
#include <limits>

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

}  // namespace luminamoon::data
