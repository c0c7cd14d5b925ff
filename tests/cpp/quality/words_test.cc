// The spaCy-compatible word tokenizer and sentence counter. Expected tokens are spaCy 3.8's
// (spacy.blank("en")) on the same strings; tests/test_quality_datatrove.py compares many more.
#include "quality/internal/words.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
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

// The fast path (one 16-byte load per word, cached words: TokenizerPath::kFast) against the
// byte loops with every word through the rules (TokenizerPath::kReference): every token's
// offsets and kind, and their order, must be equal. The cache lives on from text to text, so
// the later texts of each test replay the words of the earlier ones.
void expect_same_tokens(std::string_view text) {
  std::vector<Token> block;
  std::vector<Token> bytes;
  tokenize_document(text, block, TokenizerPath::kFast);
  tokenize_document(text, bytes, TokenizerPath::kReference);
  ASSERT_EQ(block.size(), bytes.size()) << "text: " << text;
  for (std::size_t i = 0; i < block.size(); ++i) {
    ASSERT_TRUE(block[i].begin == bytes[i].begin && block[i].end == bytes[i].end &&
                block[i].kind == bytes[i].kind)
        << "token " << i << " of: " << text;
  }
}

// A word of every length from 0 to 20 (so that its end falls on both sides of the 16-byte
// block read at its start), of each shape, with each ending byte (every ASCII byte, whitespace
// and look-alikes outside ASCII), then one space and another word, two spaces, a non-ASCII word,
// or nothing, and 0-17 more bytes (so that the text's end falls on both sides of the block too).
TEST(Words, FastPathEqualsReferenceAtEveryOffset) {
  std::vector<std::string> ends;
  for (int c = 0; c < 128; ++c) ends.emplace_back(1, static_cast<char>(c));
  for (const char* e : {"\u00a0", "\u2028", "\u3000", "\u0085", "\u00e9", "\u2019s", "\u2026",
                        "\u00b0", "\U0001F600"}) {
    ends.emplace_back(e);
  }
  const std::vector<std::string> runs = {"abcdefghijklmnopqrstu", "ZYXWVUTSRQPONMLKJIHGF",
                                         "01234567890123456789", "aB9z0Ab8Yc1dE2fG3hI4",
                                         "@[`{/:09AZaz@[`{/:09"};
  for (const std::string& run : runs) {
    for (std::size_t length = 0; length <= 20; ++length) {
      for (const std::string& end : ends) {
        const std::string word = run.substr(0, length) + end;
        for (const std::string_view after : {" next", "  next", " \u00e9", ""}) {
          for (std::size_t tail = 0; tail <= 17; ++tail) {
            expect_same_tokens("w " + word + std::string(after) + std::string(tail, 'z'));
          }
        }
      }
    }
  }
}

// Random texts of the pieces the rules look at (exceptions, matcher patterns, affixes, infixes,
// URLs, e-mail addresses, units, Unicode spaces and letters, emoji, controls) and random code
// points: the fast path must give the reference's tokens on every one.
TEST(Words, FastPathEqualsReferenceOnRandomTexts) {
  const std::vector<std::string> pieces = {"don't",
                                           "can't",
                                           "Don't",
                                           "U.S.",
                                           "U.S",
                                           "e.g.",
                                           "i.e.",
                                           "it's",
                                           "that's",
                                           "'s",
                                           "\u2019s",
                                           ":)",
                                           ":-)",
                                           "(:",
                                           "<3",
                                           "http://example.com/a?b=1",
                                           "www.foo.org",
                                           "a@b.com",
                                           "10km",
                                           "5$",
                                           "US$5",
                                           "C$",
                                           "...",
                                           "\u2026",
                                           "\u2014",
                                           "--",
                                           "-",
                                           "~",
                                           "'",
                                           "\"",
                                           "(",
                                           ")",
                                           "[",
                                           "]",
                                           ",",
                                           ".",
                                           ";",
                                           ":",
                                           "!",
                                           "?",
                                           "+",
                                           "*",
                                           "^",
                                           "=",
                                           "<",
                                           ">",
                                           "/",
                                           "|",
                                           "&",
                                           "#",
                                           "@",
                                           "a",
                                           "Z",
                                           "the",
                                           "The",
                                           "dont",
                                           "cant",
                                           "Im",
                                           "Couldntve",
                                           "Doesntve",
                                           "Couldn't",
                                           "Could've",
                                           "Mightn't've",
                                           "n't",
                                           "\u2018",
                                           "\u201c",
                                           "\u00b0C",
                                           "F.",
                                           "3a.m",
                                           "1p.m.",
                                           "\u00e9",
                                           "\u00df",
                                           "\u0130",
                                           "\U0001F600",
                                           "\u4e2d\u6587",
                                           "192.168.0.1",
                                           "1.2.3.4",
                                           "a-b",
                                           "a_b",
                                           "(a)",
                                           "a.B",
                                           "aB.",
                                           "AB.",
                                           "Ab.",
                                           "9.",
                                           "x!",
                                           "12,",
                                           "ok)",
                                           " ",
                                           " ",
                                           " ",
                                           "  ",
                                           "\n",
                                           "\t",
                                           "\r\n",
                                           "\x0b",
                                           "\x1c",
                                           "\x1f",
                                           "\u0085",
                                           "\u00a0",
                                           "\u2028",
                                           "\u3000",
                                           "\u200b",
                                           std::string(1, '\0'),
                                           "\x01",
                                           "\x7f"};
  std::mt19937_64 rng(15);
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (int doc = 0; doc < 20000; ++doc) {
    std::string text;
    const std::size_t parts = 1 + below(40);
    for (std::size_t p = 0; p < parts; ++p) {
      const std::size_t kind = below(20);
      if (kind < 10) {
        text += pieces[below(pieces.size())];
      } else if (kind < 14) {
        text += ' ';
      } else if (kind < 18) {
        const std::string_view alphabet = "abcxyzABCXYZ0123456789";
        for (std::size_t k = below(24); k > 0; --k) text += alphabet[below(alphabet.size())];
      } else {  // any code point but a surrogate (the tokenizer's input is valid UTF-8)
        auto cp = static_cast<char32_t>(below(3) == 0 ? below(0x80) : below(0x110000));
        if (cp >= 0xD800 && cp < 0xE000) cp = U'x';
        if (cp < 0x80) {
          text += static_cast<char>(cp);
        } else if (cp < 0x800) {
          text += static_cast<char>(0xC0 | (cp >> 6));
          text += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          text += static_cast<char>(0xE0 | (cp >> 12));
          text += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          text += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          text += static_cast<char>(0xF0 | (cp >> 18));
          text += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
          text += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          text += static_cast<char>(0x80 | (cp & 0x3F));
        }
      }
    }
    expect_same_tokens(text);
  }
}

// Whitespace runs are skipped 16 bytes at a time on the fast path: a run of every length 0-40
// of ASCII whitespace (each kind, so that every byte of the SIMD test is exercised), ended by a
// word, by whitespace outside ASCII (which the run must go on through), by a control or DEL byte
// (not whitespace: a word), or by the text's end, at every distance from the end of the text.
// (Breaking the run's end on purpose, e.g. taking a non-space byte for one when a space follows
// it, fails this test.)
TEST(Words, FastPathEqualsReferenceOnWhitespaceRuns) {
  const std::vector<std::string> kinds = {" ",    "\t",   "\n",   "\x0b", "\x0c", "\r",
                                          "\x1c", "\x1d", "\x1e", "\x1f", " \n",  "\r\n"};
  for (const std::string& kind : kinds) {
    for (std::size_t length = 0; length <= 40; ++length) {
      std::string run;
      while (run.size() < length) run += kind;
      run.resize(length);
      for (const std::string_view end : {"w", "\u00a0", "\u2028", "\u3000", "\u0085", "\x01",
                                         "\x08", "\x1b", "\x7f", "\x0e", "\u00e9", ""}) {
        for (std::size_t tail = 0; tail <= 17; ++tail) {
          const std::string text = run + std::string(end) + std::string(tail, 'z');
          expect_same_tokens(text);
          expect_same_tokens("w" + text);
          expect_same_tokens("w " + text);
          // Whitespace again right after the end: the run must stop at the end all the same.
          expect_same_tokens(run + std::string(end) + " " + std::string(tail, 'z'));
        }
      }
    }
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
