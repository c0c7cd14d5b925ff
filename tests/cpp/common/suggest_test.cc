#include "luminamoon/data/common/suggest.h"

#include <gtest/gtest.h>

#include <array>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

TEST(DamerauLevenshtein, BasicEdits) {
  EXPECT_EQ(damerau_levenshtein("", ""), 0u);
  EXPECT_EQ(damerau_levenshtein("abc", ""), 3u);
  EXPECT_EQ(damerau_levenshtein("kitten", "sitting"), 3u);
  EXPECT_EQ(damerau_levenshtein("read_only", "read_onyl"), 1u);  // transposition costs one
  EXPECT_EQ(damerau_levenshtein("ca", "abc"), 3u);               // OSA, not unrestricted DL
}

TEST(DamerauLevenshtein, CountsCodePointsNotBytes) {
  EXPECT_EQ(damerau_levenshtein("h\xc3\xa9llo", "hello"), 1u);  // é vs e
  EXPECT_EQ(damerau_levenshtein("\xe6\x97\xa5", ""), 1u);       // one CJK code point
}

TEST(DidYouMean, PicksClosestAndBreaksTiesByOrder) {
  constexpr std::array<std::string_view, 3> known = {"read_only", "durable", "ready"};
  EXPECT_EQ(did_you_mean("readonly", known), "read_only");
  EXPECT_EQ(did_you_mean("durabel", known), "durable");
  constexpr std::array<std::string_view, 2> tie = {"ab", "ba"};
  EXPECT_EQ(did_you_mean("aa", tie), "ab");
  EXPECT_EQ(did_you_mean("completely_different", known), std::nullopt);
}

TEST(RejectUnknownOption, MessageCarriesSuggestion) {
  constexpr std::array<std::string_view, 2> known = {"read_only", "durable"};
  EXPECT_NO_THROW(reject_unknown_option("StateTracker", "durable", known));
  try {
    reject_unknown_option("StateTracker", "read_onyl", known);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "StateTracker: unknown option 'read_onyl'; did you mean 'read_only'?");
  }
  try {
    reject_unknown_option("StateTracker", "zzzzzzzzzzzz", known);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "StateTracker: unknown option 'zzzzzzzzzzzz'; valid options: read_only, durable");
  }
}

}  // namespace
}  // namespace luminamoon::data
