// The paths of the word tokenizer (internal/shingles.h, AsciiPath) make the same normalised text
// and the same shingle hashes, in the same order, as the code-point-at-a-time reference
// (AsciiPath::kScalar), on documents built to cross every boundary they handle differently:
// 64-byte blocks, pure-ASCII blocks next to blocks with multibyte or invalid bytes (decoded into
// the block's masks, or sent the code-point way when a sequence crosses the block's end or a
// lowercase mapping changes its length), the padded last block, tokens longer than a block,
// separator runs at block edges, documents with fewer tokens than one shingle, and more than a
// chunk (Shingler::kChunk) of shingles.
#include "minhash/internal/shingles.h"
#include "minhash/internal/shingle_hash.h"

#include "luminamoon/data/common/xxh3.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
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
      "\xC3\x84RGER",              // "ÄRGER": a 2-byte capital, same length lowercased
      "\xD0\x9C\xD0\xBE\xD1\x81",  // "Мос": Cyrillic
      "\xE2\x84\xAA",              // KELVIN SIGN: lowercases to 1 byte
      "\xE1\xBA\x9E",              // CAPITAL SHARP S: lowercases to 2 bytes
      "\xF0\x90\x90\x80",          // DESERET CAPITAL LONG I: 4 bytes, lowercased in place
      "\xF0\x9F\x98\x80",          // an emoji: a 4-byte separator
      "\xE2\x80\x99",              // a right quote: a separator inside a word
      "\xFF",
      "\x80",
      "\xC3",
      "\xE2\x80",
      "\xF0\x9F\x98",  // invalid bytes and cut sequences: separators
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

// The block paths this CPU can run.
std::vector<AsciiPath> block_paths() {
  std::vector<AsciiPath> paths;
  for (const AsciiPath path : kAsciiPaths) {
    if (path != AsciiPath::kScalar && ascii_path_supported(path)) paths.push_back(path);
  }
  return paths;
}

void expect_same_as_scalar(const std::vector<std::string>& docs,
                           std::initializer_list<std::uint32_t> ngrams) {
  for (const std::uint32_t ngram : ngrams) {
    Shingler scalar(ShingleKind::kWord, ngram, AsciiPath::kScalar);
    for (const AsciiPath path : block_paths()) {
      Shingler blocks(ShingleKind::kWord, ngram, path);
      for (std::size_t d = 0; d < docs.size(); ++d) {
        const Shingled expected = shingle(scalar, docs[d]);
        const Shingled got = shingle(blocks, docs[d]);
        ASSERT_EQ(got.normalized, expected.normalized)
            << ascii_path_name(path) << ", ngram " << ngram << ", doc " << d;
        ASSERT_EQ(got.hashes, expected.hashes)
            << ascii_path_name(path) << ", ngram " << ngram << ", doc " << d;
        ASSERT_EQ(got.count, expected.hashes.size());
        ASSERT_EQ(expected.count, expected.hashes.size());
      }
    }
  }
}

// Every multibyte piece, valid or not, at every offset of the first three blocks, after word
// bytes and after separators, followed by text that ends the document at every distance from a
// block's end: each sequence lands inside a block, across a block's end, and in the padded last
// block.
TEST(ShinglerAsciiPath, MultibyteAtEveryOffsetMatchesScalar) {
  const std::vector<std::string> pieces = {
      "\xC3\xA9",         "\xC3\x89t\xC3\xA9",
      "\xE6\x97\xA5",     "\xE2\x80\x94",
      "\xE2\x80\x99s",    "\xC4\xB0",
      "\xE2\x84\xAA",     "\xE1\xBA\x9E",
      "\xF0\x90\x90\x80", "\xF0\x9F\x98\x80",
      "\xD0\x9C",         "\xFF",
      "\x80\x80",         "\xC3",
      "\xE2\x80",         "\xED\xA0\x80",
      "\xE0\x80\x80",     "\xE0\xA0\x80",
      "\xEF\xBF\xBF",     "\xC2\x80",
      "\xDF\xBF",         "\xC1\xBF",
      "\xED\x9F\xBF",     "\xEE\x80\x80",
      "\xE1\x80\xC0",     "\xC2\xC0",
      "\xF4\x90\x80\x80", "\xE0\x82\xAA",
      "\xC0\xAA"};  // overlong forms of a word character: separators
  std::vector<std::string> docs;
  for (const std::string& piece : pieces) {
    for (std::size_t offset = 0; offset < 140; ++offset) {
      for (const char filler : {'w', ' '}) {
        std::string doc(offset, filler);
        doc += piece;
        docs.push_back(doc);                        // the piece ends the document
        docs.push_back(doc + "Ab " + piece + "c");  // and again further on
      }
    }
  }
  expect_same_as_scalar(docs, {1U, 5U});
}

// With 1-grams every token is a shingle, hashed by the inline XXH3 branch (shingles.cc,
// shingle_hash) at 17-128 bytes and by XXH3_64bits elsewhere: both are XXH3-64 of the token.
TEST(ShinglerAsciiPath, ShingleHashIsXxh3AtEveryLength) {
  Shingler one(ShingleKind::kWord, 1, AsciiPath::kScalar);
  std::string token;
  for (std::size_t length = 1; length <= 300; ++length) {
    token += "abcdefghijklmnopqrstuvwxyz0123456789"[(length * 7) % 36];
    const Shingled run = shingle(one, token);
    ASSERT_EQ(run.hashes.size(), 1U);
    ASSERT_EQ(run.hashes[0], xxh3_64(token)) << "length " << length;
    ASSERT_EQ(shingle_hash(token.data(), length), xxh3_64(token)) << "length " << length;
    if (length >= 17 && length <= 32) {
      ASSERT_EQ(shingle_hash_17to32(token.data(), length), xxh3_64(token)) << "length " << length;
    }
    if (length >= 33 && length <= 64) {
      ASSERT_EQ(shingle_hash_33to64(token.data(), length), xxh3_64(token)) << "length " << length;
    }
  }
}

TEST(ShinglerAsciiPath, BlockPathsMatchScalar) {
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
  expect_same_as_scalar(docs, {1U, 2U, 3U, 5U, 9U});
}

// Blocks of one-letter tokens (up to 32 token starts in one block, the most there can be), and
// text of 2- and 3-byte word characters, whose sequences keep running past blocks' ends (the
// compress path then ends the block before the sequence), capitals and a lowercase mapping that
// grows among them, each behind every shift 0-63 of the block grid, long enough for several
// chunks of shingles.
TEST(ShinglerAsciiPath, DenseTokensAndCutSequencesMatchScalar) {
  const std::vector<std::string> texts = {
      "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 ",
      "A,b;C.d e\nF G-h ",
      "\xD0\x9C\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0 "
      "\xD0\x9F\xD0\xA0\xD0\x98\xD0\x92\xD0\x95\xD0\xA2 ",
      "\xC3\xA9t\xC3\xA9 \xC3\x84RGER\xE2\x80\x94\xC3\x9F ",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x80\x82\xE6\x97\xA5 ",
      "\xD0\xB6\xD0\x96\xC4\xB0x \xD1\x8F",  // a capital I with dot (grows) among Cyrillic
  };
  std::vector<std::string> docs;
  for (const std::string& text : texts) {
    for (std::size_t shift = 0; shift < 64; ++shift) {
      std::string doc(shift, shift % 2 == 0 ? 'w' : ' ');
      while (doc.size() < 9000) doc += text;
      docs.push_back(doc);
    }
  }
  // All of them in one document too: the block paths switch between kinds of blocks.
  std::string mixed;
  for (int i = 0; i < 400; ++i) mixed += texts[static_cast<std::size_t>(i * 7 % 6)];
  docs.push_back(mixed);
  expect_same_as_scalar(docs, {1U, 5U});
}

// Every 2-byte character (the block paths read them from a table of their own, shingles.cc
// two_byte_chars), inside a word, alone and next to a capital, inside a block and across a
// block's end.
TEST(ShinglerAsciiPath, EveryTwoByteCharacterMatchesScalar) {
  std::vector<std::string> docs;
  for (std::uint32_t cp = 0x80; cp < 0x800; ++cp) {
    const std::string c{static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    for (const std::size_t offset : {std::size_t{3}, std::size_t{62}, std::size_t{63}}) {
      docs.push_back(std::string(offset, 'x') + c + "Ab " + c + " Q" + c + c + "z");
    }
  }
  expect_same_as_scalar(docs, {1U, 2U});
}

TEST(ShinglerAsciiPath, NormalisedTextHasSingleSpacesOnly) {
  for (const AsciiPath path : kAsciiPaths) {
    if (!ascii_path_supported(path)) continue;
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
  for (const AsciiPath path : kAsciiPaths) {
    if (!ascii_path_supported(path)) continue;
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
