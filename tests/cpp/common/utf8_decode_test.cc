// utf8_shape, copy_ascii_prefix and decode_utf8: golden shapes and units for each width, equality
// with CPython's reading (utf8_internal::for_each_code_point) on random valid text of every
// width and length from unaligned pointers, and bounds on bytes that are not UTF-8.
#include "luminamoon/data/common/utf8_decode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/internal/utf8.h"
#include "common/internal/utf8_decode_kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

// The units decode_utf8 writes for `text` (its shape's width), read back as integers.
std::vector<std::uint32_t> decoded(std::string_view text, const Utf8Shape& shape) {
  // 16 guard bytes after the output: decode_utf8 must leave them alone.
  std::vector<unsigned char> out(shape.code_points * shape.width + 16, 0xA5);
  decode_utf8(text, shape.width, out.data(), shape.code_points);
  for (std::size_t k = shape.code_points * shape.width; k < out.size(); ++k) {
    EXPECT_EQ(out[k], 0xA5) << "written past the capacity";
  }
  std::vector<std::uint32_t> units(shape.code_points);
  for (std::size_t k = 0; k < units.size(); ++k) {
    if (shape.width == 1) units[k] = out[k];
    if (shape.width == 2) {
      std::uint16_t u = 0;
      std::memcpy(&u, out.data() + 2 * k, 2);
      units[k] = u;
    }
    if (shape.width == 4) std::memcpy(&units[k], out.data() + 4 * k, 4);
  }
  return units;
}

std::vector<std::uint32_t> reference(std::string_view text) {
  std::vector<std::uint32_t> points;
  utf8_internal::for_each_code_point(
      text, [&](char32_t c, std::size_t, std::size_t) { points.push_back(c); });
  return points;
}

TEST(DecodeUtf8, GoldenShapesAndUnits) {
  struct Case {
    std::string text;
    unsigned width;
    bool ascii;
    std::vector<std::uint32_t> units;
  };
  const Case cases[] = {
      {"", 1, true, {}},
      {"abc", 1, true, {'a', 'b', 'c'}},
      {"caf\xC3\xA9", 1, false, {'c', 'a', 'f', 0xE9}},
      {"\xC2\x80\xC3\xBF", 1, false, {0x80, 0xFF}},
      {"a\xC4\x80", 2, false, {'a', 0x100}},
      {"\xE2\x82\xAC!", 2, false, {0x20AC, '!'}},
      {"\xEF\xBF\xBF", 2, false, {0xFFFF}},
      {"x\xF0\x9F\x98\x80y", 4, false, {'x', 0x1F600, 'y'}},
      {"\xF4\x8F\xBF\xBF", 4, false, {0x10FFFF}},
  };
  for (const Case& c : cases) {
    const Utf8Shape shape = utf8_shape(c.text);
    EXPECT_EQ(shape.width, c.width) << c.text;
    EXPECT_EQ(shape.ascii, c.ascii) << c.text;
    EXPECT_EQ(shape.code_points, c.units.size()) << c.text;
    EXPECT_EQ(decoded(c.text, shape), c.units) << c.text;
  }
}

// Random valid UTF-8: runs of ASCII (of every length, so characters fall on and across the
// 16- and 32-byte blocks) and characters of every encoded length, boundary values included.
std::string random_text(std::mt19937_64& rng, std::size_t characters, std::uint32_t top) {
  static constexpr std::uint32_t kEdges[] = {0x7F,   0x80,    0xE9,    0xFF,    0x100,
                                             0x7FF,  0x800,   0x20AC,  0xD7FF,  0xE000,
                                             0xFFFF, 0x10000, 0x1F600, 0x10FFFF};
  const auto ascii_share = static_cast<unsigned>(rng() % 101);
  std::string text;
  for (std::size_t k = 0; k < characters; ++k) {
    std::uint32_t c = static_cast<std::uint32_t>(rng() % 0x80);
    if (rng() % 100 >= ascii_share) {
      c = rng() % 2 == 0 ? kEdges[rng() % (sizeof kEdges / sizeof kEdges[0])]
                         : static_cast<std::uint32_t>(rng() % (top + 1));
      if (c > top || (c >= 0xD800 && c <= 0xDFFF)) c = 'x';
    }
    std::uint8_t bytes[4];
    text.append(reinterpret_cast<const char*>(bytes), utf8_internal::encode(c, bytes));
  }
  return text;
}

TEST(DecodeUtf8, RandomValidTextMatchesCPythonsReading) {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 3000; ++round) {
    const std::uint32_t top = round % 3 == 0 ? 0xFF : round % 3 == 1 ? 0xFFFF : 0x10FFFF;
    const std::string text = random_text(rng, rng() % (round < 1500 ? 40 : 400), top);
    // From an odd address as well: the bindings' texts sit anywhere.
    const std::string shifted = " " + text;
    const std::string_view view = std::string_view(shifted).substr(1);
    const std::vector<std::uint32_t> expected = reference(view);
    std::uint32_t largest = 0;
    for (const std::uint32_t c : expected) largest = std::max(largest, c);
    const Utf8Shape shape = utf8_shape(view);
    ASSERT_EQ(shape.code_points, expected.size());
    ASSERT_EQ(shape.width, largest < 0x100 ? 1u : largest < 0x10000 ? 2u : 4u);
    ASSERT_EQ(shape.ascii, largest < 0x80);
    ASSERT_EQ(decoded(view, shape), expected) << round;
  }
}

// The units a kernel (`decode`, of the width of Unit) writes for bytes p[0, n) into `capacity`
// units followed by 32 guard units, read back as integers; a guard unit written fails the test.
template <typename Unit, typename Decode>
std::vector<std::uint32_t> kernel_units(Decode decode, const std::uint8_t* p, std::size_t n,
                                        std::size_t capacity) {
  constexpr auto kGuard = static_cast<Unit>(0xA5A5A5A5u);
  std::vector<Unit> out(capacity + 32, kGuard);
  decode(p, n, out.data(), capacity);
  for (std::size_t k = capacity; k < out.size(); ++k) {
    EXPECT_EQ(out[k], kGuard) << "written past the capacity";
  }
  return {out.begin(), out.begin() + static_cast<std::ptrdiff_t>(capacity)};
}

void append_utf8(std::string& text, std::uint32_t c) {
  std::uint8_t bytes[4];
  text.append(reinterpret_cast<const char*>(bytes), utf8_internal::encode(c, bytes));
}

// The kernel `kernel.*member` of every ISA this CPU runs, on `text` after its first byte (from an
// odd address: the bindings' texts sit anywhere), writes CPython's reading of it and nothing past
// its capacity.
template <typename Unit, typename Fn>
void expect_every_kernel_reads(const std::string& text, Fn internal::Utf8DecodeKernel::*member,
                               int round) {
  const std::string_view view = std::string_view(text).substr(1);
  const std::vector<std::uint32_t> expected = reference(view);
  for (const Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)) + ", round " + std::to_string(round));
    EXPECT_EQ(kernel_units<Unit>(internal::utf8_decode_kernel_for(isa).*member,
                                 reinterpret_cast<const std::uint8_t*>(view.data()), view.size(),
                                 expected.size()),
              expected);
  }
}

// Latin-1 text as Western European text is: ASCII words with accented letters at a density from
// none to every character (2-byte characters at every offset of a 16-byte block, the last byte
// included), decoded by the kernel of every ISA this CPU runs, from an odd address.
TEST(DecodeUtf8, EveryLatin1KernelMatchesCPythonsReading) {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 3000; ++round) {
    const auto accents = static_cast<unsigned>(rng() % 101);  // percent of the characters
    std::string text = " ";
    const std::size_t characters = rng() % (round < 1500 ? 48 : 600);
    for (std::size_t k = 0; k < characters; ++k) {
      append_utf8(text, rng() % 100 < accents ? static_cast<std::uint32_t>(0x80 + rng() % 0x80)
                                              : static_cast<std::uint32_t>(rng() % 0x80));
    }
    expect_every_kernel_reads<std::uint8_t>(text, &internal::Utf8DecodeKernel::latin1, round);
    ASSERT_FALSE(HasFailure());
  }
}

// Bytes that are not UTF-8 (leads of every length, continuations and ASCII at random), any
// capacity: every Latin-1 and UCS-2 kernel stays inside its input and capacity (ASan sees the
// reads; the guard units the writes).
TEST(DecodeUtf8, EveryKernelStaysInBoundsOnBytesThatAreNotUtf8) {
  std::mt19937_64 rng(43);
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::uint8_t> bytes(rng() % 300);
    for (std::uint8_t& b : bytes) {
      b = static_cast<std::uint8_t>(rng() % 3 == 0 ? rng() % 0x80 : 0x80 + rng() % 0x80);
    }
    const std::size_t capacity = rng() % (bytes.size() + 2);
    for (const Isa isa : supported_isas()) {
      SCOPED_TRACE(std::string(isa_name(isa)) + ", round " + std::to_string(round));
      const internal::Utf8DecodeKernel& kernel = internal::utf8_decode_kernel_for(isa);
      kernel_units<std::uint8_t>(kernel.latin1, bytes.data(), bytes.size(), capacity);
      kernel_units<std::uint16_t>(kernel.ucs2, bytes.data(), bytes.size(), capacity);
      ASSERT_FALSE(HasFailure());
    }
  }
}

// UCS-2 text as it is written: words of ASCII, Cyrillic (2-byte), CJK (3-byte) and curly
// quotes or dashes, at a share of characters that are not ASCII from none to all, so the vector
// kernels meet characters on and across every offset of their blocks (the 3-byte ones as the
// block's last two bytes and its last one); decoded by the UCS-2 kernel of every ISA this CPU
// runs, from an odd address, and held to CPython's reading and to the capacity.
TEST(DecodeUtf8, EveryUcs2KernelMatchesCPythonsReading) {
  std::mt19937_64 rng(47);
  for (int round = 0; round < 3000; ++round) {
    const auto others = static_cast<unsigned>(rng() % 101);  // percent of the characters
    const auto cjk = static_cast<unsigned>(rng() % 101);     // of those, percent 3-byte
    std::string text = " ";
    const std::size_t characters = rng() % (round < 1500 ? 60 : 600);
    for (std::size_t k = 0; k < characters; ++k) {
      std::uint32_t c = static_cast<std::uint32_t>(rng() % 0x80);
      if (rng() % 100 < others) {
        c = rng() % 100 < cjk ? static_cast<std::uint32_t>(0x800 + rng() % 0xF800)
                              : static_cast<std::uint32_t>(0x80 + rng() % 0x780);
        if (c >= 0xD800 && c <= 0xDFFF) c = 0x2014;  // EM DASH
        if (rng() % 16 == 0) c = rng() % 2 == 0 ? 0x100 : 0xFFFF;
      }
      append_utf8(text, c);
    }
    expect_every_kernel_reads<std::uint16_t>(text, &internal::Utf8DecodeKernel::ucs2, round);
    ASSERT_FALSE(HasFailure());
  }
}

// The x86 kernels decode dense UCS-2 text in vector blocks (where the bindings stop asking
// CPython); the portable kernel does not, and decode_utf8_dense_is_vectorized says which is live.
TEST(DecodeUtf8, DenseUcs2IsVectorizedWhereTheKernelSaysSo) {
  EXPECT_EQ(internal::utf8_decode_kernel_for(Isa::kScalar).ucs2, internal::decode_ucs2_portable);
  for (const Isa isa : supported_isas()) {
    const bool vector =
        internal::utf8_decode_kernel_for(isa).ucs2 != internal::decode_ucs2_portable;
    EXPECT_EQ(vector, isa == Isa::kAvx2 || isa == Isa::kAvx512) << isa_name(isa);
  }
  EXPECT_EQ(decode_utf8_dense_is_vectorized(2),
            internal::active_utf8_decode_kernel().ucs2 != internal::decode_ucs2_portable);
  EXPECT_FALSE(decode_utf8_dense_is_vectorized(1));
  EXPECT_FALSE(decode_utf8_dense_is_vectorized(4));
}

TEST(DecodeUtf8, BytesThatAreNotUtf8StayInBounds) {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes(rng() % 200, '\0');
    for (char& b : bytes)
      b = static_cast<char>(rng() % 4 == 0 ? rng() % 0x80 : 0x80 + rng() % 0x80);
    const Utf8Shape shape = utf8_shape(bytes);
    for (const unsigned width : {1u, 2u, 4u}) {
      // Any capacity, the shape's included: nothing is written past it (decoded checks).
      Utf8Shape asked = shape;
      asked.width = width;
      asked.code_points = round % 2 == 0 ? shape.code_points : rng() % (shape.code_points + 2);
      decoded(bytes, asked);
    }
  }
}

TEST(DecodeUtf8, CopyAsciiPrefix) {
  std::mt19937_64 rng(37);
  for (int round = 0; round < 2000; ++round) {
    std::string text(rng() % 150, 'a');
    for (char& c : text) c = static_cast<char>('a' + rng() % 26);
    std::size_t first_other = text.size();
    if (!text.empty() && round % 3 != 0) {
      first_other = rng() % text.size();
      text[first_other] = static_cast<char>(0x80 + rng() % 0x80);
    }
    std::string out(text.size(), '\0');
    const std::size_t copied = copy_ascii_prefix(text, out.data());
    if (first_other == text.size()) {
      ASSERT_EQ(copied, text.size());
    } else {
      ASSERT_LE(copied, first_other);
      ASSERT_LT(first_other - copied, 32u);
    }
    ASSERT_EQ(out.substr(0, copied), text.substr(0, copied));
  }
}

TEST(DecodeUtf8, OtherWidthsAreRejected) {
  char out[8];
  EXPECT_THROW(decode_utf8("ab", 3, out, 2), InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
