// Valid UTF-8 into the fixed-width forms a CPython str keeps its text in (PEP 393): Latin-1 (one
// byte a code point, ASCII being the case below U+0080), UCS-2 (two bytes) or UTF-32 (four), in
// host byte order, the narrowest that holds the text's largest code point. The bindings make the
// str of a document this way (PyUnicode_New, then decode_utf8 into its buffer): CPython's
// decoder copies 2.7 GB/s on the real corpus's documents that are not ASCII (96.5-99.9% ASCII
// characters), where runs of ASCII here are copied 16 bytes a step (docs/benchmarks.md).
#pragma once

#include <cstddef>
#include <string_view>

namespace luminamoon::data {

struct Utf8Shape {
  std::size_t code_points = 0;
  unsigned width = 1;                  // bytes a unit of the narrowest form: 1, 2 or 4
  bool ascii = true;                   // every byte below 0x80 (width 1)
  std::size_t continuation_bytes = 0;  // bytes 0x80..0xBF: how far the text is from ASCII
};

// The shape of `utf8`, which must be valid UTF-8 (utf8_is_valid, pii/pii_masker.h): its code points
// are its bytes less its continuation bytes, and the width follows from its largest byte (a lead
// byte C4..EF starts a code point from U+0100 to U+FFFF, F0..F4 one above). For other bytes the
// answer is meaningless (but reading stays inside `utf8`).
Utf8Shape utf8_shape(std::string_view utf8) noexcept;

// Copies the ASCII bytes that begin `text` to `out` (which holds text.size() bytes) and returns
// how many: text.size() when it is all ASCII (one pass, for the str of an ASCII document, which is
// its bytes), else a prefix that ends before its first other byte (at most 31 bytes before it;
// more bytes of `out` may have been written, up to the first other byte's block).
std::size_t copy_ascii_prefix(std::string_view text, char* out) noexcept;

// Writes the code points of `utf8` (valid UTF-8, its shape's width) at `out`, `capacity` units
// of `width` bytes (1, 2 or 4), which must be utf8_shape(utf8).code_points. On bytes that are
// not valid UTF-8 the values written are meaningless, but nothing is read outside `utf8` and
// nothing is written past `capacity` units. Throws InvalidArgument for another width.
void decode_utf8(std::string_view utf8, unsigned width, void* out, std::size_t capacity);

// Whether decode_utf8 of this width decodes text dense with characters that are not ASCII
// (Cyrillic, Greek, CJK) in vector blocks on this CPU: true for UCS-2 where AVX2 is there. The
// bindings give other dense text to CPython's decoder, which is as fast as a loop over it.
bool decode_utf8_dense_is_vectorized(unsigned width) noexcept;

}  // namespace luminamoon::data
