// UTF-8 repair (CPython's "replace" rule) and the Python string helpers of the QualityFilter.
#include "quality/internal/text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace luminamoon::data::quality_internal {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Text, RepairMatchesCPythonReplace) {
  // Expected values: bytes.decode("utf-8", "replace") in CPython 3.11.
  EXPECT_EQ(repair_utf8("abc"), "abc");
  EXPECT_EQ(repair_utf8("\xFF"), kFffd);
  EXPECT_EQ(repair_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // a surrogate, 3 subparts
  EXPECT_EQ(repair_utf8("\xE2\x82"), kFffd);                      // truncated: one subpart
  EXPECT_EQ(repair_utf8("\xF0\x9F\x98"), kFffd);
  EXPECT_EQ(repair_utf8("\xC0\xAF"), kFffd + kFffd);  // overlong lead bytes are invalid alone
  EXPECT_EQ(repair_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);
  EXPECT_EQ(repair_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
  EXPECT_TRUE(is_valid_utf8("h\xC3\xA9llo \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
  EXPECT_FALSE(is_valid_utf8("12345678\x80"));
}

TEST(Text, PythonStringSemantics) {
  EXPECT_EQ(count_code_points("h\xC3\xA9\xF0\x9F\x98\x80"), 3u);
  EXPECT_EQ(strip(" \t\xC2\xA0x y\xE3\x80\x80\n"), "x y");  // NBSP and U+3000 are whitespace
  EXPECT_EQ(strip("\xE2\x80\x8Bx"), "\xE2\x80\x8Bx");       // U+200B is not
  EXPECT_TRUE(is_blank("\x1C\x1F \x0B"));
  std::vector<std::string> lines;
  for_each_splitline(
      "a\r\nb\rc\x0B"
      "d\xC2\x85"
      "e\xE2\x80\xA8"
      "f\n",
      [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(count_occurrences("......", "..."), 2u);
  EXPECT_EQ(count_occurrences("", "#"), 0u);
}

std::vector<std::string> splitlines(std::string_view text) {
  std::vector<std::string> out;
  for_each_splitline(text, [&](std::string_view line) { out.emplace_back(line); });
  return out;
}

std::vector<std::string> whitespace_words(std::string_view text) {
  std::vector<std::string> out;
  for_each_whitespace_word(text, [&](std::string_view word) { out.emplace_back(word); });
  return out;
}

// The line and word scans skip 16 bytes at a time: a terminator, a separator, or a byte that
// only looks like one, at every offset of long runs and at the end must give what
// str.splitlines() / str.split() give (expected values: CPython 3.11).
TEST(Text, SplitsAtEveryOffsetOfLongRuns) {
  const std::string run(37, 'a');
  for (std::size_t k = 1; k <= run.size(); ++k) {
    const std::string head = run.substr(0, k);
    const std::string tail = "bcdefghijklmnopqrstu";
    for (const std::string_view eol : {"\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
                                       "\u0085", "\u2028", "\u2029"}) {
      const std::string text = head + std::string(eol) + tail;
      EXPECT_EQ(splitlines(text), (std::vector<std::string>{head, tail})) << k;
      EXPECT_EQ(splitlines(text + std::string(eol)), (std::vector<std::string>{head, tail})) << k;
    }
    // Bytes among the candidates that end no line: other controls, U+00E9 (C3), U+00C2 (C3 82),
    // U+2019 (E2 80 99), U+0080 (C2 80).
    for (const std::string_view inside :
         {"\x01", "\x1b", "\x1f", "\t", "\u00e9", "\u00c2", "\u2019", "\u0080"}) {
      const std::string text = head + std::string(inside) + tail;
      EXPECT_EQ(splitlines(text), (std::vector<std::string>{text})) << k;
    }
    for (const std::string_view space : {" ", "\t", "\n", "\x1f", "\u00a0", "\u2028"}) {
      EXPECT_EQ(whitespace_words(head + std::string(space) + tail),
                (std::vector<std::string>{head, tail}))
          << k;
    }
    for (const std::string_view inside : {"\x01", "\x7f", "\u00e9", "\u4e2d"}) {
      const std::string word = head + std::string(inside) + tail;
      EXPECT_EQ(whitespace_words(" " + word + " "), (std::vector<std::string>{word})) << k;
    }
  }
}

TEST(Text, FlagsOfCodePoints) {
  EXPECT_TRUE(flags(U'a') & kAlpha);
  EXPECT_TRUE(flags(U'\u00e9') & kLower);
  EXPECT_TRUE(flags(U'\u3000') & kSpace);
  EXPECT_TRUE(flags(U'\u2026') & kDtPunct);
  EXPECT_TRUE(flags(U'\u3002') & kDtTerminal);
  EXPECT_EQ(flags(0x110000), 0u);
}

}  // namespace
}  // namespace luminamoon::data::quality_internal
