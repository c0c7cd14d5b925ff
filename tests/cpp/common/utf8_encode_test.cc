// encode_utf8: golden bytes for each width, the first invalid unit, and equality with a
// unit-by-unit reference (utf8_internal::encode) on random units of every width and length,
// from unaligned pointers, around the 16-unit blocks.
#include "luminamoon/data/common/utf8_encode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/internal/utf8.h"
#include "common/internal/utf8_encode_kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

template <typename Unit>
std::pair<std::string, Utf8Encoded> encoded(const std::vector<Unit>& units) {
  std::string out(utf8_encode_capacity(units.size(), sizeof(Unit)), '\0');
  const Utf8Encoded r = encode_utf8(units.data(), units.size(), sizeof(Unit), out.data());
  out.resize(r.size);
  return {out, r};
}

// The shared reference (internal/utf8_encode_kernels.h) over a vector of units.
template <typename Unit>
std::pair<std::string, std::size_t> reference(const Unit* units, std::size_t n) {
  std::size_t first_invalid = 0;
  std::string bytes = internal::utf8_encode::reference_encode(
      reinterpret_cast<const unsigned char*>(units), n, sizeof(Unit), first_invalid);
  return {bytes, first_invalid};
}

TEST(EncodeUtf8, GoldenBytesPerWidth) {
  EXPECT_EQ(encoded(std::vector<std::uint8_t>{'h', 0xE9, 'l', 'l', 'o'}).first, "h\xC3\xA9llo");
  EXPECT_EQ(encoded(std::vector<std::uint16_t>{0x20AC, ' ', 0x0416, 0x00FF}).first,
            "\xE2\x82\xAC \xD0\x96\xC3\xBF");
  EXPECT_EQ(encoded(std::vector<std::uint32_t>{0x1F600, 'a', 0x10FFFF}).first,
            "\xF0\x9F\x98\x80"
            "a\xF4\x8F\xBF\xBF");
  EXPECT_EQ(encoded(std::vector<std::uint8_t>{}).first, "");
  EXPECT_EQ(encoded(std::vector<std::uint8_t>{}).second.first_invalid, Utf8Encoded::npos);
}

TEST(EncodeUtf8, SurrogatesAreWrittenAsSurrogatepassAndReported) {
  std::vector<std::uint16_t> units(40, 'x');
  units[21] = 0xDC80;
  units[33] = 0xD800;
  const auto [bytes, r] = encoded(units);
  EXPECT_EQ(r.first_invalid, 21u);
  EXPECT_EQ(bytes.substr(21, 3), "\xED\xB2\x80");
  EXPECT_EQ(bytes.size(), 40u + 2 * 2);
  const auto [wide, r4] = encoded(std::vector<std::uint32_t>{'a', 0x110000, 0xDFFF});
  EXPECT_EQ(r4.first_invalid, 1u);
  EXPECT_EQ(wide, "a\xEF\xBF\xBD\xED\xBF\xBF");
  // Latin-1 has nothing to report.
  EXPECT_EQ(encoded(std::vector<std::uint8_t>(40, 0xFF)).second.first_invalid, Utf8Encoded::npos);
}

TEST(EncodeUtf8, OtherWidthsAreRejected) {
  char out[8];
  EXPECT_THROW(encode_utf8("abc", 1, 3, out), InvalidArgument);
  EXPECT_THROW(encode_utf8("abc", 1, 0, out), InvalidArgument);
}

TEST(EncodeUtf8, CapacityIsTheWidestUnitTimesCount) {
  EXPECT_EQ(utf8_encode_capacity(10, 1), 20u);
  EXPECT_EQ(utf8_encode_capacity(10, 2), 30u);
  EXPECT_EQ(utf8_encode_capacity(10, 4), 40u);
  // The widest units fill it exactly.
  EXPECT_EQ(encoded(std::vector<std::uint8_t>(33, 0x80)).first.size(), 66u);
  EXPECT_EQ(encoded(std::vector<std::uint16_t>(33, 0xFFFF)).first.size(), 99u);
  EXPECT_EQ(encoded(std::vector<std::uint32_t>(33, 0x10000)).first.size(), 132u);
}

// Mostly ASCII (runs that fill blocks) with the boundary values of every encoded length.
template <typename Unit>
std::vector<Unit> random_units(std::mt19937_64& rng, std::size_t n, std::uint32_t max) {
  static constexpr std::uint32_t kEdges[] = {
      0,      0x7F,   0x80,   0xFF,   0x100,  0x7FF,   0x800,    0xD7FF,   0xD800,    0xDBFF,
      0xDC00, 0xDFFF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF, 0x110000, 0xFFFFFFFF};
  std::vector<Unit> units(n);
  const unsigned ascii_share = static_cast<unsigned>(rng() % 101);  // percent, per string
  for (Unit& u : units) {
    std::uint32_t c = 0;
    if (rng() % 100 < ascii_share) {
      c = static_cast<std::uint32_t>(rng() % 0x80);
    } else if (rng() % 2 == 0) {
      c = kEdges[rng() % (sizeof kEdges / sizeof kEdges[0])];
    } else {
      c = static_cast<std::uint32_t>(rng());
    }
    u = static_cast<Unit>(c > max ? c % (max + std::uint64_t{1}) : c);
  }
  return units;
}

template <typename Unit>
void check_kernel_against_reference(internal::Utf8EncodeFn kernel, std::uint32_t max) {
  std::mt19937_64 rng(sizeof(Unit) * 7919);
  for (int round = 0; round < 3000; ++round) {
    const std::size_t n = static_cast<std::size_t>(rng() % (round < 1000 ? 40 : 300));
    const std::vector<Unit> units = random_units<Unit>(rng, n, max);
    // From an odd address: the input need not be aligned for its width.
    // (and no more bytes than the units: ASan sees a read past them)
    std::vector<unsigned char> shifted(n * sizeof(Unit) + 1);
    if (n != 0) std::memcpy(shifted.data() + 1, units.data(), n * sizeof(Unit));
    const std::size_t capacity = utf8_encode_capacity(n, sizeof(Unit));
    std::string out(capacity + 8, '\x5A');
    const Utf8Encoded r = kernel(shifted.data() + 1, n, out.data());
    const auto [expected, first_invalid] = reference(units.data(), n);
    ASSERT_EQ(out.substr(0, r.size), expected) << "round " << round << ", " << n << " units";
    ASSERT_EQ(r.first_invalid, first_invalid) << "round " << round;
    // Nothing past the capacity.
    ASSERT_EQ(out.find_first_not_of('\x5A', capacity), std::string::npos) << "round " << round;
  }
}

// The kernel of `isa` for Unit's width.
template <typename Unit>
internal::Utf8EncodeFn kernel_of(Isa isa) {
  const internal::Utf8EncodeKernel& k = internal::utf8_encode_kernel_for(isa);
  return sizeof(Unit) == 1 ? k.latin1 : sizeof(Unit) == 2 ? k.ucs2 : k.utf32;
}

template <typename Unit>
void check_against_reference(std::uint32_t max) {
  for (const Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    check_kernel_against_reference<Unit>(kernel_of<Unit>(isa), max);
  }
}

TEST(EncodeUtf8, Latin1MatchesTheReference) { check_against_reference<std::uint8_t>(0xFF); }
TEST(EncodeUtf8, Ucs2MatchesTheReference) { check_against_reference<std::uint16_t>(0xFFFF); }
TEST(EncodeUtf8, Utf32MatchesTheReference) { check_against_reference<std::uint32_t>(0xFFFFFFFF); }

TEST(EncodeUtf8, EveryKernelOnWordsOfEachScript) {
  // Words of ASCII, Latin-1, Cyrillic (2 bytes), CJK (3 bytes) and emoji between spaces, in
  // strings long enough for many blocks of each mix.
  static constexpr std::uint32_t kScripts[][2] = {
      {'a', 26}, {0xE0, 32}, {0x430, 32}, {0x4E00, 500}, {0x1F600, 64}};
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::uint32_t> text;
    while (text.size() < 500) {
      const auto* script = kScripts[rng() % (round % 5 == 0 ? 5 : 3)];
      for (std::size_t k = 2 + rng() % 8; k > 0; --k) {
        text.push_back(script[0] + static_cast<std::uint32_t>(rng() % script[1]));
      }
      text.push_back(' ');
    }
    const auto [expected, first_invalid] = reference(text.data(), text.size());
    ASSERT_EQ(first_invalid, Utf8Encoded::npos);
    for (const Isa isa : supported_isas()) {
      const internal::Utf8EncodeKernel& kernel = internal::utf8_encode_kernel_for(isa);
      std::string out(utf8_encode_capacity(text.size(), 4), '\0');
      if (std::all_of(text.begin(), text.end(), [](std::uint32_t c) { return c < 0x10000; })) {
        const std::vector<std::uint16_t> ucs2(text.begin(), text.end());
        const Utf8Encoded r = kernel.ucs2(reinterpret_cast<const unsigned char*>(ucs2.data()),
                                          ucs2.size(), out.data());
        ASSERT_EQ(out.substr(0, r.size), expected) << isa_name(isa) << ", round " << round;
      }
      const Utf8Encoded r = kernel.utf32(reinterpret_cast<const unsigned char*>(text.data()),
                                         text.size(), out.data());
      ASSERT_EQ(out.substr(0, r.size), expected) << isa_name(isa) << ", round " << round;
    }
  }
}

TEST(EncodeUtf8, ValidInputGivesValidUtf8) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 500; ++round) {
    std::vector<std::uint32_t> units = random_units<std::uint32_t>(rng, rng() % 200, 0x10FFFF);
    for (std::uint32_t& c : units) {
      if (c >= 0xD800 && c <= 0xDFFF) c = 'x';
    }
    const auto [bytes, r] = encoded(units);
    ASSERT_EQ(r.first_invalid, Utf8Encoded::npos);
    ASSERT_TRUE(utf8_internal::is_valid(bytes)) << "round " << round;
  }
}

TEST(Utf8Scratch, EncodesEachDocumentIntoOneReusedBuffer) {
  Utf8Scratch scratch;
  const std::vector<std::uint16_t> euro{0x20AC, ' ', 'a'};
  std::size_t first_invalid = 0;
  const std::string_view first = scratch.encode({euro.data(), euro.size(), 2}, first_invalid);
  EXPECT_EQ(first, "\xE2\x82\xAC a");
  EXPECT_EQ(first_invalid, Utf8Encoded::npos);
  EXPECT_EQ(scratch.capacity(), std::size_t{64} * 1024);  // one allocation for many short ones
  const std::vector<std::uint8_t> latin1{'c', 'a', 'f', 0xE9};
  const std::string_view second = scratch.encode({latin1.data(), latin1.size(), 1}, first_invalid);
  EXPECT_EQ(second, "caf\xC3\xA9");
  EXPECT_EQ(second.data(), first.data());
  const std::vector<std::uint32_t> lone{'x', 0xD800};
  EXPECT_EQ(scratch.encode({lone.data(), lone.size(), 4}, first_invalid), "x\xED\xA0\x80");
  EXPECT_EQ(first_invalid, 1U);
  // A document over the buffer grows it; release_above frees only a buffer over the limit.
  const std::vector<std::uint16_t> big(100'000, 0x0416);
  EXPECT_EQ(scratch.encode({big.data(), big.size(), 2}, first_invalid).size(), 200'000U);
  EXPECT_EQ(scratch.capacity(), 300'000U);
  scratch.release_above(300'000);
  EXPECT_EQ(scratch.capacity(), 300'000U);
  scratch.release_above(299'999);
  EXPECT_EQ(scratch.capacity(), 0U);
  EXPECT_EQ(scratch.encode({euro.data(), euro.size(), 2}, first_invalid), "\xE2\x82\xAC a");
}

TEST(PendingUtf8, FirstAtAndOrderChecks) {
  const std::vector<PendingUtf8> pending{{2, {}}, {5, {}}, {6, {}}, {9, {}}};
  EXPECT_EQ(first_pending_at(pending, 0), 0U);
  EXPECT_EQ(first_pending_at(pending, 2), 0U);
  EXPECT_EQ(first_pending_at(pending, 3), 1U);
  EXPECT_EQ(first_pending_at(pending, 6), 2U);
  EXPECT_EQ(first_pending_at(pending, 10), 4U);
  EXPECT_EQ(first_pending_at({}, 0), 0U);
  EXPECT_NO_THROW(check_pending(pending, 10, "here"));
  EXPECT_NO_THROW(check_pending({}, 0, "here"));
  try {
    check_pending(pending, 9, "here");
    FAIL() << "an index past the documents";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "here: pending[3] names document 9; indices must ascend and be below 9");
  }
  const std::vector<PendingUtf8> repeated{{2, {}}, {2, {}}};
  EXPECT_THROW(check_pending(repeated, 10, "here"), InvalidArgument);
  const std::vector<PendingUtf8> descending{{3, {}}, {1, {}}};
  EXPECT_THROW(check_pending(descending, 10, "here"), InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
