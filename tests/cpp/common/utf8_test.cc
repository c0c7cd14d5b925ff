// The common UTF-8 module: every ISA's validator equals the scalar reference (the cleaner's
// kernels_test holds them to an independent decoder at length), and the maximal-subpart decoder,
// iteration, counting and repair follow CPython's bytes.decode("utf-8", "replace").
#include "common/internal/utf8.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace luminamoon::data::utf8_internal {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  // Biased towards the bytes that matter: ASCII, continuations, and every kind of lead.
  static constexpr unsigned char kPool[] = {'a',  ' ',  0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                            0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
                                            0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF};
  std::string s(n, '\0');
  for (char& c : s) {
    c = static_cast<char>(rng() % 2 == 0 ? kPool[rng() % sizeof kPool]
                                         : static_cast<unsigned char>(rng()));
  }
  return s;
}

// Re-encoding what for_each_code_point reports: the repair as the iteration sees it.
std::string reencoded(std::string_view bytes) {
  std::string out;
  for_each_code_point(bytes, [&](char32_t cp, std::size_t, std::size_t) {
    std::uint8_t buf[4];
    out.append(reinterpret_cast<const char*>(buf), encode(cp, buf));
  });
  return out;
}

TEST(Utf8, DecoderFollowsMaximalSubparts) {
  struct Case {
    std::string bytes;
    std::string repaired;
    std::size_t code_points;
  };
  const std::vector<Case> cases = {
      {"abc", "abc", 3},
      {"\xFF", kFffd, 1},
      {"\xED\xA0\x80", kFffd + kFffd + kFffd, 3},  // a surrogate: three subparts
      {"\xE2\x82", kFffd, 1},                      // truncated: one subpart
      {"\xF0\x9F\x98", kFffd, 1},
      {"\xC0\xAF", kFffd + kFffd, 2},  // overlong leads are invalid alone
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd, 4},
      {"a\xE2\x82z\xF4\x90", "a" + kFffd + "z" + kFffd + kFffd, 5},
      {std::string("a\0b", 3), std::string("a\0b", 3), 3},
      {"h\xC3\xA9llo \xF0\x9F\x98\x80", "h\xC3\xA9llo \xF0\x9F\x98\x80", 7},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(repaired(c.bytes), c.repaired);
    EXPECT_EQ(reencoded(c.bytes), c.repaired);
    EXPECT_EQ(count_code_points(c.bytes), c.code_points);
    EXPECT_EQ(is_valid(c.bytes), c.bytes == c.repaired);
  }
}

TEST(Utf8, DecodeReportsCPythonReasons) {
  const auto reason = [](std::string_view s) {
    return decode(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()).error;
  };
  EXPECT_EQ(reason("\x80"), Utf8Error::kInvalidStart);
  EXPECT_EQ(reason("\xC1\x80"), Utf8Error::kInvalidStart);
  EXPECT_EQ(reason("\xF5"), Utf8Error::kInvalidStart);
  EXPECT_EQ(reason("\xE0\x80\x80"), Utf8Error::kInvalidContinuation);
  EXPECT_EQ(reason("\xE2\x82"), Utf8Error::kTruncated);
  EXPECT_EQ(reason("\xE2\x82\xAC"), Utf8Error::kNone);
}

// Table 3-7 read literally, a loop over the expected length: the oracle of the unrolled decoder.
Decoded decode_oracle(const std::uint8_t* p, std::size_t left) {
  const std::uint8_t b0 = p[0];
  if (b0 < 0x80) return {b0, 1, Utf8Error::kNone};
  std::uint32_t need = 0;
  std::uint32_t cp = 0;
  std::uint8_t lo = 0x80;
  std::uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {0, 1, Utf8Error::kInvalidStart};
  }
  for (std::uint32_t k = 1; k < need; ++k) {
    if (k >= left) return {0, k, Utf8Error::kTruncated};
    if (p[k] < lo || p[k] > hi) return {0, k, Utf8Error::kInvalidContinuation};
    lo = 0x80;
    hi = 0xBF;
    cp = (cp << 6) | (p[k] & 0x3Fu);
  }
  return {cp, need, Utf8Error::kNone};
}

TEST(Utf8, DecoderMatchesTheLiteralTableOnEveryPrefix) {
  // Every lead byte with every second byte and a few third/fourth bytes, cut at every length.
  const std::uint8_t tails[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  for (unsigned b0 = 0; b0 < 256; ++b0) {
    for (unsigned b1 = 0; b1 < 256; ++b1) {
      for (const std::uint8_t b2 : tails) {
        for (const std::uint8_t b3 : tails) {
          const std::uint8_t buf[4] = {static_cast<std::uint8_t>(b0), static_cast<std::uint8_t>(b1),
                                       b2, b3};
          for (std::size_t left = 1; left <= 4; ++left) {
            const Decoded got = decode(buf, left);
            const Decoded want = decode_oracle(buf, left);
            ASSERT_EQ(got.code_point, want.code_point) << b0 << " " << b1 << " " << left;
            ASSERT_EQ(got.length, want.length) << b0 << " " << b1 << " " << left;
            ASSERT_EQ(got.error, want.error) << b0 << " " << b1 << " " << left;
          }
        }
      }
    }
  }
}

TEST(Utf8, EncodeAndDecodeRoundTripEveryScalarValue) {
  for (std::uint32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::uint8_t buf[4];
    const std::size_t n = encode(cp, buf);
    ASSERT_EQ(utf8_valid_prefix_scalar(buf, n), n) << cp;
    const Decoded d = decode(buf, n);
    ASSERT_EQ(d.error, Utf8Error::kNone) << cp;
    ASSERT_EQ(d.code_point, cp);
    ASSERT_EQ(d.length, n);
    std::size_t i = 0;
    ASSERT_EQ(decode_valid(buf, i), cp);
    ASSERT_EQ(i, n);
  }
}

TEST(Utf8, HelpersAgreeOnRandomBytes) {
  std::mt19937_64 rng(10);
  for (int round = 0; round < 2000; ++round) {
    const std::string s = random_bytes(rng, rng() % 200);
    const std::string fixed = repaired(s);
    ASSERT_EQ(fixed, reencoded(s));
    ASSERT_TRUE(is_valid(fixed));
    ASSERT_EQ(count_code_points(s), count_valid_code_points(fixed));
    const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
    ASSERT_EQ(is_valid(s), fixed == s);
    ASSERT_EQ(valid_prefix(p, s.size()), utf8_valid_prefix_scalar(p, s.size()));
  }
}

class Utf8Isa : public ::testing::TestWithParam<Isa> {};

TEST_P(Utf8Isa, ValidPrefixEqualsScalar) {
  const Utf8Kernel& kernel = utf8_kernel_for(GetParam());
  EXPECT_EQ(kernel.isa, GetParam());
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    // Mostly valid text with the odd bad byte, so errors land at every block offset.
    std::string s = repaired(random_bytes(rng, rng() % 700));
    if (!s.empty() && rng() % 2 == 0) s[rng() % s.size()] = static_cast<char>(rng());
    const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
    ASSERT_EQ(kernel.valid_prefix(p, s.size()), utf8_valid_prefix_scalar(p, s.size()))
        << isa_name(GetParam()) << " round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, Utf8Isa, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& param) {
                           return std::string(isa_name(param.param));
                         });

}  // namespace
}  // namespace luminamoon::data::utf8_internal
