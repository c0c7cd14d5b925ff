// Byte kernels of the TextCleaner, one implementation per ISA (kernels_scalar.cc is the
// reference; kernels_avx2.cc, kernels_avx512.cc, kernels_neon.cc must return exactly the same
// values for every input). ISA code is enabled per function with target attributes in its own
// translation unit, never by global -mavx2/-march flags.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::cleaner_internal {

// The UTF-8 validator is the common one (common/internal/utf8.h); each table below carries the
// validator of its own ISA, so the fused pass validates and classifies with one ISA.
using utf8_internal::Utf8ValidPrefixFn;

// Length of the longest prefix of data[0, size) in which every byte is "plain": copied to the
// output unchanged by every cleaning step. `data` is valid UTF-8 (already repaired). Byte i with
// value b is plain iff:
//   * 0x21 <= b <= 0x7E; or
//   * b >= 0x80 and i does not start a special sequence (below); or
//   * b == 0x20 (space) and i + 1 < size and byte i + 1 starts a "word" (below); or
//   * b == 0x0A (newline) and i + 1 < size and byte i + 1 starts a word.
// Byte j starts a word iff 0x21 <= data[j] <= 0x7E, or data[j] >= 0x80 and j does not start a
// special sequence.
// Special sequences (their first byte is never plain), all valid UTF-8 encodings:
//   C2 80..C2 9F   U+0080..U+009F  C1 controls
//   C2 A0          U+00A0          no-break space
//   E1 9A 80       U+1680          ogham space mark
//   E2 80 80..8A   U+2000..U+200A  en quad .. hair space
//   E2 80 AF       U+202F          narrow no-break space
//   E2 81 9F       U+205F          medium mathematical space
//   E3 80 80       U+3000          ideographic space
// (A special sequence is recognised only when all its bytes lie inside [0, size).)
// Everything else (0x00..0x1F other than the cases above, including tab and CR; 0x7F; a space or
// newline followed by whitespace, a newline, a special sequence or the end) is not plain.
// Readings fixed by the implementation (the tests hold every ISA to them):
//   * The rules are byte patterns, tested at every position, not only at character starts. So
//     the result is defined for any bytes, valid UTF-8 or not, and every ISA returns the same
//     value on invalid input too; on valid UTF-8 this is the same as the character reading.
//   * `size` is taken as the end of the text: a space or newline at size - 1 is not plain, and a
//     special sequence cut by size is not recognised (its bytes count as plain). A caller that
//     passes a window shorter than the document must end it at a character boundary (as the
//     utf8_valid_prefix result is), so that no special sequence is cut.
using CleanPrefixFn = std::size_t (*)(const std::uint8_t* data, std::size_t size);

struct Kernels {
  Isa isa;
  Utf8ValidPrefixFn utf8_valid_prefix;
  CleanPrefixFn clean_prefix;
};

// The kernels of one ISA (must be supported: see isa_supported), and of the live ISA.
const Kernels& kernels_for(Isa isa);
const Kernels& active_kernels();

std::size_t clean_prefix_scalar(const std::uint8_t* data, std::size_t size);
std::size_t clean_prefix_avx2(const std::uint8_t* data, std::size_t size);
std::size_t clean_prefix_avx512(const std::uint8_t* data, std::size_t size);
std::size_t clean_prefix_neon(const std::uint8_t* data, std::size_t size);

}  // namespace luminamoon::data::cleaner_internal
