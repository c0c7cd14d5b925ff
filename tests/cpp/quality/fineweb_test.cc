// FineWeb's newline/word ratio: the filter decides most documents from a lower bound on the word
// count instead of tokenizing them (metrics.cc, word_count_lower_bound). The bound must never
// exceed the tokenizer's count, and every decision and reported value must be the one the exact
// ratio gives, at any threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminamoon/data/quality/quality_filter.h"
#include "quality/internal/metrics.h"

namespace luminamoon::data::quality_internal {
namespace {

// Pieces that reach every way the tokenizer starts, splits and merges words: ASCII and Unicode
// whitespace (NBSP, U+3000, NEL, U+2028 are whitespace to it; 0x01 and 0x7F are not), special
// cases ("don't", ":)", "e.g."), affixes, non-ASCII letters, emoji.
const std::vector<std::string> kPieces = {"a",
                                          "word",
                                          "don't",
                                          ":)",
                                          "e.g.",
                                          "U.S.",
                                          "...",
                                          "-",
                                          "(",
                                          ")",
                                          "\"",
                                          "'s",
                                          "n't",
                                          "$5",
                                          "1,000",
                                          "x-y",
                                          "http://x.org/a?b=c",
                                          " ",
                                          "  ",
                                          "\n",
                                          "\n\n",
                                          "\t",
                                          "\r\n",
                                          "\x0b",
                                          "\x0c",
                                          "\x1c",
                                          "\x1f",
                                          "\x01",
                                          "\x7f",
                                          "\xc2\xa0",
                                          "\xe3\x80\x80",
                                          "\xc2\x85",
                                          "\xe2\x80\xa8",
                                          "\xc3\xa9",
                                          "\xe6\x97\xa5\xe6\x9c\xac",
                                          "\xf0\x9f\x98\x80",
                                          "I'm",
                                          "can't",
                                          "o'clock",
                                          "!",
                                          "?",
                                          ";",
                                          "--",
                                          "1.5",
                                          "Mr."};

std::vector<std::string> random_documents(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> piece(0, kPieces.size() - 1);
  std::uniform_int_distribution<std::size_t> length(0, 60);
  std::vector<std::string> docs;
  for (std::size_t d = 0; d < count; ++d) {
    std::string doc;
    const std::size_t n = length(rng);
    for (std::size_t k = 0; k < n; ++k) {
      doc += kPieces[piece(rng)];
      if (rng() % 3 == 0) doc += ' ';
      if (rng() % 5 == 0) doc += '\n';
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

TEST(FineWebWordBound, NeverExceedsTheTokenCount) {
  Document doc;
  for (const std::string& text : random_documents(20000, 7)) {
    doc.reset(text);
    ASSERT_LE(word_count_lower_bound(text), doc.tokens().size()) << text;
  }
  // What it counts: printable ASCII after the start or an ASCII whitespace byte.
  EXPECT_EQ(word_count_lower_bound(""), 0u);
  EXPECT_EQ(word_count_lower_bound("a b\tc\nd\x1c"
                                   "e"),
            5u);
  EXPECT_EQ(word_count_lower_bound("ab\x01"
                                   "c \xc3\xa9x \xc2\xa0y"),
            1u);
}

// The definition, one byte at a time (the function takes 16 bytes at a time where it can).
std::size_t reference_bound(std::string_view text) {
  std::size_t count = 0;
  bool after_space = true;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (after_space && b >= 0x21 && b <= 0x7E) ++count;
    after_space = b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r' ||
                  b == 0x1C || b == 0x1D || b == 0x1E || b == 0x1F;
  }
  return count;
}

TEST(FineWebWordBound, EveryByteValueAtEveryBlockOffset) {
  // Bytes at the edges of each class (0x08/0x09, 0x0D/0x0E, 0x1B/0x1C, 0x1F/0x20, 0x20/0x21,
  // 0x7E/0x7F/0x80, 0xFF) and all others, on random strings crossing 16-byte blocks.
  std::mt19937 rng(3);
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 100, '\0');
    const bool edges = round % 2 == 0;
    constexpr unsigned char kEdges[] = {0x08, 0x09, 0x0D, 0x0E, 0x1B, 0x1C, 0x1F, 0x20,
                                        0x21, 0x61, 0x7E, 0x7F, 0x80, 0xC3, 0xFF, 0x00};
    for (char& c : text) c = static_cast<char>(edges ? kEdges[rng() % 16] : rng() % 256);
    ASSERT_EQ(word_count_lower_bound(text), reference_bound(text)) << round;
  }
  for (std::size_t at = 0; at < 40; ++at) {  // one word start at every offset
    for (const char before : {' ', '\t', '\x1f', 'x', '\x7f', '\x08'}) {
      std::string text(at, 'y');
      text += before;
      text += "z";
      ASSERT_EQ(word_count_lower_bound(text), reference_bound(text)) << at;
    }
  }
}

TEST(FineWebWordBound, DecisionsAndValuesAreThoseOfTheExactRatio) {
  std::vector<std::string> texts = random_documents(3000, 11);
  texts.emplace_back("");
  texts.emplace_back("\n\n\n");
  texts.emplace_back("one\ntwo\nthree\nfour");
  std::vector<std::string_view> views(texts.begin(), texts.end());
  const std::vector<std::string_view> presets = {"fineweb"};
  std::vector<double> exact;
  {
    const QualityFilter all(presets);
    for (const std::string_view text : views) {
      for (const auto& [name, value] : all.metrics(text)) {
        if (name == "fineweb_newline_word_ratio") exact.push_back(value);
      }
    }
  }
  ASSERT_EQ(exact.size(), views.size());
  for (const double threshold : {0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 1e9}) {
    // Only the newline rule on, so that every document reaches it.
    const std::vector<std::pair<std::string_view, QualitySetting>> settings = {
        {"fineweb_min_lines", std::monostate{}},
        {"fineweb_min_line_punct_ratio", std::monostate{}},
        {"fineweb_max_short_line_ratio", std::monostate{}},
        {"fineweb_max_dup_line_char_ratio", std::monostate{}},
        {"fineweb_max_newline_word_ratio", threshold}};
    const QualityFilter f(presets, settings, QualityFilterOptions{1});
    const QualityBatchResult result = f.filter_batch(views);
    for (std::size_t i = 0; i < views.size(); ++i) {
      const bool keep = !(exact[i] > threshold);
      ASSERT_EQ(result.keep[i] != 0, keep) << "threshold " << threshold << ": " << texts[i];
      if (!keep) {
        ASSERT_TRUE(result.reasons[i].has_value());
        EXPECT_EQ(result.reasons[i]->value, exact[i]);  // the exact ratio, never the bound
      }
    }
  }
}

}  // namespace
}  // namespace luminamoon::data::quality_internal
