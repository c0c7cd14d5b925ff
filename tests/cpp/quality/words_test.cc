// The spaCy-compatible word tokenizer and sentence counter. Expected tokens are spaCy 3.8's
// (spacy.blank("en")) on the same strings; tests/test_quality_datatrove.py compares many more.
#include "quality/internal/words.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace luminamoon::data::quality_internal {
namespace {

std::vector<std::string> words_of(std::string_view text) {
  std::vector<Token> tokens;
  tokenize_document(text, tokens);
  std::vector<std::string> out;
  for (const Token& t : tokens) {
    if (t.kind != TokenKind::kWhitespace) out.emplace_back(text.substr(t.begin, t.end - t.begin));
  }
  return out;
}

std::size_t sentences(std::string_view line) {
  std::vector<Token> scratch;
  return count_sentences(line, scratch);
}

TEST(Words, AffixesInfixesAndExceptions) {
  EXPECT_EQ(
      words_of("Hello, world! Don't e-mail me at foo@bar.com... U.S. costs $5.00 (approx.) "
               "well-known and/or 3.14 x--y 'quoted' #tag the. The."),
      (std::vector<std::string>{
          "Hello",  ",",           "world", "!",     "Do",     "n't",  "e",    "-",  "mail",   "me",
          "at",     "foo@bar.com", "...",   "U.S.",  "costs",  "$",    "5.00", "(",  "approx", ".",
          ")",      "well",        "-",     "known", "and/or", "3.14", "x",    "--", "y",      "'",
          "quoted", "'",           "#",     "tag",   "the",    ".",    "The",  "."}));
}

// The word scan skips printable ASCII 16 bytes at a time and looks at every other byte one by
// one: a separator (or a byte that only looks like one) at every offset of a long run, and at
// the very end, must split exactly where the byte-by-byte scan splits.
TEST(Words, WordEndsAtEveryOffsetOfLongRuns) {
  const std::string left(40, 'a');
  const std::string right(23, 'b');
  for (std::size_t k = 0; k <= left.size(); ++k) {
    const std::string head = left.substr(0, k) + "x";  // never empty
    // Whitespace, ASCII and not: two words.
    for (const std::string_view space :
         {" ", "\t", "\n", "\x0b", "\x1c", "\x1f", "\u00a0", "\u2028", "\u3000"}) {
      EXPECT_EQ(words_of(head + std::string(space) + right),
                (std::vector<std::string>{head, right}))
          << k << " " << space;
    }
    // Controls that are not whitespace, DEL, and letters outside ASCII stay inside the word.
    for (const std::string_view inside : {"\x01", "\x1b", "\x7f", "\u00e9", "\u0416", "\u4e2d"}) {
      const std::string word = head + std::string(inside) + right;
      EXPECT_EQ(words_of(word), (std::vector<std::string>{word})) << k;
    }
    // A word that ends with the text, after a long run.
    EXPECT_EQ(words_of("z " + head), (std::vector<std::string>{"z", head})) << k;
  }
}

TEST(Words, UrlsUnitsAndEmoticons) {
  EXPECT_EQ(words_of("Visit https://example.com/a-b?x=1, or www.test.org. Call 10am; it's 5km "
                     "away:)"),
            (std::vector<std::string>{"Visit", "https://example.com/a-b?x=1", ",", "or",
                                      "www.test.org", ".", "Call", "10", "am", ";", "it", "'s", "5",
                                      "km", "away", ":)"}));
  EXPECT_EQ(words_of(":) (: wow:) x-a. e.g., 10.0.0.1 8.8.8.8:80/p 22\u00b0C."),
            (std::vector<std::string>{":)", "(:", "wow", ":)", "x", "-", "a.", "e.g.", ",",
                                      "10.0.0.1", "8.8.8.8:80/p", "22", "\u00b0", "C", "."}));
}

TEST(Words, WhitespaceRunsAreTokensButNotWords) {
  std::vector<Token> tokens;
  tokenize_document("a  b\tc\n", tokens);
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[1].kind, TokenKind::kWhitespace);  // the second space
  EXPECT_EQ(tokens[2].kind, TokenKind::kGlued);
  EXPECT_EQ(words_of(" \n\t "), std::vector<std::string>{});
  EXPECT_EQ(words_of(""), std::vector<std::string>{});
}

TEST(Words, SentencesAsSpacysSentencizer) {
  EXPECT_EQ(sentences("Hello, world! Don't e-mail me. U.S. costs the. The."), 4u);
  EXPECT_EQ(sentences("He said \"Stop.\"  Then left... Really?! Yes.\tOk. 3.5 is pi-ish. Mr. Smith "
                      "paid $30."),
            6u);
  EXPECT_EQ(sentences("no punctuation at all"), 1u);
  EXPECT_EQ(sentences(""), 0u);
  EXPECT_EQ(sentences("..."), 1u);
}

TEST(Words, LongInputsAreLinear) {
  // ~1 MB of affixes, infixes and merged exceptions: quadratic work would take minutes.
  const std::string brackets = std::string(500'000, '(') + "x" + std::string(500'000, ')');
  EXPECT_EQ(words_of(brackets).size(), 1'000'001u);
  std::string hyphens;
  for (int i = 0; i < 300'000; ++i) hyphens += "ab-";
  hyphens += "ab";
  EXPECT_EQ(words_of(hyphens).size(), 600'001u);
  std::string matched;  // exceptions merged back by the special-case matcher
  for (int i = 0; i < 200'000; ++i) matched += "f(x): ";
  EXPECT_EQ(words_of(matched).size(), 400'000u);
  const std::string dots = "a" + std::string(1'000'000, '.');
  EXPECT_EQ(words_of(dots).size(), 2u);
}

}  // namespace
}  // namespace luminamoon::data::quality_internal
