// The two ASCII paths of the word tokenizer (internal/shingles.h, AsciiPath) make the same
// normalised text and the same shingle hashes, in the same order, on documents built to cross
// every boundary they handle differently: 64-byte blocks, pure-ASCII blocks next to blocks with a
// multibyte or invalid byte, tokens longer than a block, separator runs at block edges, documents
// with fewer tokens than one shingle, and more than a chunk (Shingler::kChunk) of shingles.
#include "minhash/internal/shingles.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace luminamoon::data::minhash_internal {
namespace {

struct Shingled {
  std::string normalized;
  std::vector<std::uint64_t> hashes;
  std::size_t count = 0;
};

Shingled shingle(Shingler& shingler, std::string_view document) {
  Shingled run;
  run.count = shingler.run(
      document,
      [](void* context, const std::uint64_t* hashes, std::size_t n) {
        auto* out = static_cast<std::vector<std::uint64_t>*>(context);
        out->insert(out->end(), hashes, hashes + n);
      },
      &run.hashes);
  run.normalized = std::string(shingler.normalized());
  return run;
}

// Pieces that start, end and split tokens in every way the tokenizer distinguishes.
std::string random_document(std::mt19937_64& rng) {
  static const std::vector<std::string> pieces = {
      "word",
      "Mixed",
      "UPPER",
      "x",
      "42",
      "a1b2",
      " ",
      "  ",
      "\n\n",
      "\t",
      ",",
      ". ",
      "--",
      "\xC3\xA9t\xC3\xA9",         // "été": 2-byte word characters
      "\xC4\xB0stanbul",           // a lowercase mapping that grows
      "\xE6\x97\xA5\xE6\x9C\xAC",  // CJK word characters
      "\xE2\x80\x94",              // an em dash: a separator
      "\xFF",
      "\x80",
      "\xC3",  // invalid bytes: separators
      std::string(63, 'q'),
      std::string(64, 'R'),
      std::string(130, 's'),  // long tokens
      std::string(70, ' '),   // a separator run over a block
  };
  std::string doc;
  const std::size_t parts = std::uniform_int_distribution<std::size_t>(0, 400)(rng);
  for (std::size_t i = 0; i < parts; ++i) {
    doc += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
  }
  return doc;
}

TEST(ShinglerAsciiPath, CompactMatchesTokens) {
  if (active_ascii_path() != AsciiPath::kCompact) {
    GTEST_SKIP() << "this CPU or LUMINAMOON_SIMD setting runs the tokens path only";
  }
  std::mt19937_64 rng(15);
  std::vector<std::string> docs = {"",
                                   " ",
                                   "a",
                                   "a b",
                                   "  Hello,   WORLD! -- x  ",
                                   std::string(200, 'z'),
                                   std::string(64, ' ') + "tail"};
  for (int i = 0; i < 3000; ++i) docs.push_back(random_document(rng));
  // Many shingles: more than one chunk of them per document.
  std::string many;
  for (int i = 0; i < 3000; ++i) many += "w" + std::to_string(i % 97) + (i % 7 == 0 ? ",  " : " ");
  docs.push_back(many);
  for (const std::uint32_t ngram : {1U, 2U, 3U, 5U, 9U}) {
    Shingler tokens(ShingleKind::kWord, ngram, AsciiPath::kTokens);
    Shingler compact(ShingleKind::kWord, ngram, AsciiPath::kCompact);
    for (std::size_t d = 0; d < docs.size(); ++d) {
      const Shingled expected = shingle(tokens, docs[d]);
      const Shingled got = shingle(compact, docs[d]);
      ASSERT_EQ(got.normalized, expected.normalized) << "ngram " << ngram << ", doc " << d;
      ASSERT_EQ(got.hashes, expected.hashes) << "ngram " << ngram << ", doc " << d;
      ASSERT_EQ(got.count, expected.hashes.size());
      ASSERT_EQ(expected.count, expected.hashes.size());
    }
  }
}

TEST(ShinglerAsciiPath, NormalisedTextHasSingleSpacesOnly) {
  for (const AsciiPath path : {AsciiPath::kTokens, active_ascii_path()}) {
    Shingler shingler(ShingleKind::kWord, 5, path);
    std::mt19937_64 rng(16);
    for (int i = 0; i < 500; ++i) {
      const Shingled run = shingle(shingler, random_document(rng));
      const std::string& text = run.normalized;
      if (text.empty()) continue;
      ASSERT_NE(text.front(), ' ');
      ASSERT_NE(text.back(), ' ');
      ASSERT_EQ(text.find("  "), std::string::npos) << text;
    }
  }
}

TEST(ShinglerAsciiPath, ShortDocumentIsOneShingleOfTheWholeText) {
  for (const AsciiPath path : {AsciiPath::kTokens, active_ascii_path()}) {
    Shingler four(ShingleKind::kWord, 4, path);
    Shingler one(ShingleKind::kWord, 1, path);
    // Three tokens, fewer than four, behind separator-only blocks: one shingle, the hash of the
    // whole normalised text.
    const Shingled short_doc =
        shingle(four, std::string(70, ' ') + "Abc,  DEF\n" + std::string(64, '.') + "ghi   ");
    ASSERT_EQ(short_doc.normalized, "abc def ghi");
    ASSERT_EQ(short_doc.hashes.size(), 1U);
    const Shingled exact = shingle(four, "abc def ghi");
    EXPECT_EQ(short_doc.hashes, exact.hashes);
    EXPECT_EQ(shingle(one, "").hashes.size(), 0U);
  }
}

}  // namespace
}  // namespace luminamoon::data::minhash_internal
