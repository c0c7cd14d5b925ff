#include "luminamoon/data/minhash/minhash_signature.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/internal/utf8_encode_kernels.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/xxh3.h"

namespace luminamoon::data {
namespace {

// The definition, written out independently of the kernels: min over the shingle hashes.
std::vector<std::uint32_t> reference_signature(const MinHasher& h, std::string_view text) {
  std::vector<std::uint32_t> out(h.num_perm(), 0xFFFFFFFFU);
  for (const std::uint64_t x : h.shingle_hashes(text)) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto v = static_cast<std::uint32_t>((h.multipliers()[i] * x + h.increments()[i]) >> 32);
      out[i] = std::min(out[i], v);
    }
  }
  return out;
}

TEST(SplitMix64, KnownOutputs) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64_next(state), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(splitmix64_next(state), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(splitmix64_next(state), 0x06C45D188009454FULL);
}

TEST(MinHasher, PermutationsAreOddMultipliersFromSplitMix) {
  MinHasher h(MinHashConfig{4, ShingleKind::kWord, 5, 7});
  std::uint64_t state = 7;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(h.multipliers()[i], splitmix64_next(state) | 1U);
    EXPECT_EQ(h.increments()[i], splitmix64_next(state));
  }
}

TEST(MinHasher, GoldenSignatures) {
  // Also pinned by tests/test_minhash.py (both backends) from an independent Python reference.
  MinHasher words(MinHashConfig{8, ShingleKind::kWord, 5, 1});
  EXPECT_EQ(words.signature("The quick brown fox jumps over the lazy dog."),
            (std::vector<std::uint32_t>{402882063, 580773768, 402428786, 53197566, 548217054,
                                        392974488, 536505173, 772047726}));
  MinHasher chars(MinHashConfig{8, ShingleKind::kChar, 3, 1});
  EXPECT_EQ(chars.signature("Hello, World!"),
            (std::vector<std::uint32_t>{315290559, 521958292, 955888252, 397391775, 35471941,
                                        824756023, 462249446, 145815397}));
}

TEST(Shingles, Normalisation) {
  EXPECT_EQ(normalize_for_shingles("Hello,   WORLD! \xC3\x9Cn\xC3\xAF  --  x"),
            "hello world \xC3\xBCn\xC3\xAF x");
  EXPECT_EQ(normalize_for_shingles(""), "");
  EXPECT_EQ(normalize_for_shingles(" ,.;!? \t\n"), "");
  // U+0130 lowercases to 'i' (its simple mapping); U+01C5 (title case) to U+01C6.
  EXPECT_EQ(normalize_for_shingles("\xC4\xB0stanbul \xC7\x85"), "istanbul \xC7\x86");
  // Invalid UTF-8 separates words, like U+FFFD would; so does a valid U+FFFD.
  EXPECT_EQ(normalize_for_shingles("ab\xFF"
                                   "cd\xE2\x82"
                                   "ef\xEF\xBF\xBDgh"),
            "ab cd ef gh");
  // Marks and numbers are word characters; punctuation and symbols are not.
  EXPECT_EQ(normalize_for_shingles("e\xCC\x81t\xC3\xA9 \xC2\xB2 a\xE2\x80\x94"
                                   "b"),
            "e\xCC\x81t\xC3\xA9 \xC2\xB2 a b");
  EXPECT_EQ(normalize_for_shingles("\xE6\x97\xA5\xE6\x9C\xAC\xE3\x80\x82x"),
            "\xE6\x97\xA5\xE6\x9C\xAC x");
}

TEST(Shingles, WordAndCharWindows) {
  MinHasher w3(MinHashConfig{4, ShingleKind::kWord, 3, 1});
  EXPECT_EQ(w3.shingle_hashes("A b, c d"),
            (std::vector<std::uint64_t>{xxh3_64("a b c"), xxh3_64("b c d")}));
  // Shorter than one shingle: the whole normalised text is one shingle.
  EXPECT_EQ(w3.shingle_hashes("A b"), (std::vector<std::uint64_t>{xxh3_64("a b")}));
  EXPECT_TRUE(w3.shingle_hashes("!!").empty());
  MinHasher c3(MinHashConfig{4, ShingleKind::kChar, 3, 1});
  EXPECT_EQ(c3.shingle_hashes("Ab, c"),
            (std::vector<std::uint64_t>{xxh3_64("ab "), xxh3_64("b c")}));
  EXPECT_EQ(c3.shingle_hashes("\xC3\xA9\xC3\xA9"),
            (std::vector<std::uint64_t>{xxh3_64("\xC3\xA9\xC3\xA9")}));
  EXPECT_EQ(c3.shingle_hashes("\xC3\xA9\xC3\xA9x"),
            (std::vector<std::uint64_t>{xxh3_64("\xC3\xA9\xC3\xA9x")}));
}

TEST(MinHasher, EmptyDocumentHasTheEmptySignature) {
  MinHasher h;
  EXPECT_EQ(h.signature(""), std::vector<std::uint32_t>(64, 0xFFFFFFFFU));
  EXPECT_EQ(h.signature("  ...  "), std::vector<std::uint32_t>(64, 0xFFFFFFFFU));
  EXPECT_DOUBLE_EQ(shingle_jaccard(h, "", "..."), 1.0);
  EXPECT_DOUBLE_EQ(shingle_jaccard(h, "", "a b c d e"), 0.0);
}

TEST(MinHasher, MatchesTheDefinitionOnRandomText) {
  std::mt19937_64 rng(3);
  const char* words[] = {"alpha", "Beta", "gamma", "\xC3\xA9t\xC3\xA9", "42", "x", "\xFF", "--"};
  for (const std::uint32_t p : {1U, 3U, 8U, 63U, 64U, 65U, 200U}) {
    for (const auto kind : {ShingleKind::kWord, ShingleKind::kChar}) {
      MinHasher h(MinHashConfig{p, kind, 1 + static_cast<std::uint32_t>(rng() % 6), rng()});
      for (int doc = 0; doc < 20; ++doc) {
        std::string text;
        const std::size_t n = rng() % 3000;  // crosses the 512-hash chunk boundary
        for (std::size_t k = 0; k < n; ++k) {
          text += words[rng() % 8];
          text += ' ';
        }
        EXPECT_EQ(h.signature(text), reference_signature(h, text));
      }
    }
  }
}

TEST(MinHasher, BatchSignaturesDoNotDependOnThreads) {
  MinHasher h;
  std::vector<std::string> texts;
  for (int i = 0; i < 500; ++i)
    texts.push_back("document number " + std::to_string(i * 7919) + " of many");
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::uint32_t> one(views.size() * 64);
  std::vector<std::uint32_t> four(views.size() * 64);
  h.signatures(views, one, 1);
  h.signatures(views, four, 4);
  EXPECT_EQ(one, four);
  for (std::size_t i = 0; i < views.size(); i += 97) {
    EXPECT_EQ(std::vector<std::uint32_t>(one.begin() + static_cast<std::ptrdiff_t>(i * 64),
                                         one.begin() + static_cast<std::ptrdiff_t>(i * 64 + 64)),
              h.signature(views[i]));
  }
}

// The word tokenizer reads pure-ASCII 64-byte blocks by bit masks and everything else one code
// point at a time; tokens cross between the two. Reference: a byte loop that knows the three
// non-ASCII sequences the generator uses (é a word character, an em dash and an invalid byte
// separators).
std::string reference_words(std::string_view text) {
  std::string out;
  bool in_token = false;
  const auto word_byte = [&](std::string_view bytes) {
    if (!in_token && !out.empty()) out += ' ';
    in_token = true;
    out += bytes;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (text.substr(i, 2) == "\xC3\xA9") {
      word_byte("\xC3\xA9");
      i += 2;
    } else if (text.substr(i, 2) == "\xC3\x89") {  // É lowercases to é
      word_byte("\xC3\xA9");
      i += 2;
    } else if (c < 0x80 && std::isalnum(c) != 0) {
      word_byte(std::string(1, static_cast<char>(std::tolower(c))));
      ++i;
    } else {
      in_token = false;
      i += text.substr(i, 3) == "\xE2\x80\x94" ? std::size_t{3} : std::size_t{1};
    }
  }
  return out;
}

TEST(Shingles, AsciiBlocksAndCodePointsMakeTheSameTokens) {
  std::mt19937_64 rng(17);
  const char* pieces[] = {" ", "  ", "\n\n", ", ", "\xC3\xA9", "\xC3\x89", "\xE2\x80\x94", "\xFF"};
  MinHasher w5(MinHashConfig{8, ShingleKind::kWord, 5, 1});
  for (int doc = 0; doc < 300; ++doc) {
    std::string text;
    const std::size_t parts = rng() % 200;
    const bool ascii_only = doc % 3 == 0;
    for (std::size_t k = 0; k < parts; ++k) {
      if (rng() % 4 != 0 || ascii_only) {
        // A word of 1..100 characters (long ones outlast a 64-byte block), then a separator.
        const std::size_t len = 1 + (rng() % 8 == 0 ? rng() % 100 : rng() % 9);
        for (std::size_t j = 0; j < len; ++j) {
          const char* alnum = "abcXYZ0189qQ";
          text += alnum[rng() % 12];
        }
        text += ascii_only ? pieces[rng() % 4] : pieces[rng() % 8];
      } else {
        text += pieces[4 + rng() % 4];  // may land inside a word: it extends or splits it
      }
    }
    const std::string expected = reference_words(text);
    ASSERT_EQ(normalize_for_shingles(text), expected) << "doc " << doc;
    // The shingles are the XXH3 of 5-token windows of that text.
    std::vector<std::string_view> tokens;
    for (std::size_t start = 0; start < expected.size();) {
      std::size_t stop = expected.find(' ', start);
      if (stop == std::string::npos) stop = expected.size();
      tokens.push_back(std::string_view(expected).substr(start, stop - start));
      start = stop + 1;
    }
    std::vector<std::uint64_t> want;
    if (!tokens.empty() && tokens.size() < 5) want.push_back(xxh3_64(expected));
    for (std::size_t t = 0; t + 5 <= tokens.size(); ++t) {
      const char* begin = tokens[t].data();
      const char* end = tokens[t + 4].data() + tokens[t + 4].size();
      want.push_back(xxh3_64(begin, static_cast<std::size_t>(end - begin)));
    }
    ASSERT_EQ(w5.shingle_hashes(text), want) << "doc " << doc;
  }
}

TEST(MinHasher, ConsumerGetsEveryRangeInOrderOnce) {
  MinHasher h;
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) {
    texts.push_back("doc " + std::to_string(i) +
                    std::string(static_cast<std::size_t>(i % 37), 'x') +
                    " shared words for every document");
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  for (const unsigned threads : {1U, 2U, 4U}) {
    std::vector<std::uint32_t> out(views.size() * 64);
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    std::atomic<int> inside{0};
    bool overlapped = false;
    bool ready = true;
    h.signatures(views, out, threads, [&](std::size_t begin, std::size_t end) {
      if (inside.fetch_add(1) != 0) overlapped = true;
      ranges.emplace_back(begin, end);
      // The range's signatures are written when it is handed over.
      for (std::size_t i = begin; i < end; i += 7) {
        ready = ready && std::equal(out.begin() + static_cast<std::ptrdiff_t>(i * 64),
                                    out.begin() + static_cast<std::ptrdiff_t>(i * 64 + 64),
                                    h.signature(views[i]).begin());
      }
      inside.fetch_sub(1);
    });
    EXPECT_FALSE(overlapped) << threads;
    EXPECT_TRUE(ready) << threads;
    ASSERT_FALSE(ranges.empty());
    EXPECT_EQ(ranges.front().first, 0U);
    EXPECT_EQ(ranges.back().second, views.size());
    for (std::size_t k = 1; k < ranges.size(); ++k) {
      EXPECT_EQ(ranges[k].first, ranges[k - 1].second) << threads;
    }
    std::vector<std::uint32_t> plain(views.size() * 64);
    h.signatures(views, plain, threads);
    EXPECT_EQ(out, plain);
  }
}

TEST(MinHasher, ConsumerExceptionReachesTheCaller) {
  MinHasher h;
  std::vector<std::string> texts(500, "some words in a document");
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::uint32_t> out(views.size() * 64);
  std::size_t consumed = 0;
  EXPECT_THROW(h.signatures(views, out, 2,
                            [&](std::size_t begin, std::size_t end) {
                              if (begin >= 100) throw std::runtime_error("stop");
                              consumed += end - begin;
                            }),
               std::runtime_error);
  EXPECT_LE(consumed, 112U);  // nothing after the failing range
}

// A text as CPython would hold it: code points in the narrowest of 1, 2 or 4 bytes a unit.
struct StrUnits {
  std::vector<std::uint8_t> bytes;
  CodeUnits units;
  explicit StrUnits(const std::u32string& text) {
    const std::uint32_t most = text.empty() ? 0 : *std::max_element(text.begin(), text.end());
    const unsigned width = most < 0x100 ? 1 : most < 0x10000 ? 2 : 4;
    bytes.resize(text.size() * width);
    for (std::size_t i = 0; i < text.size(); ++i) {
      for (unsigned b = 0; b < width; ++b) {
        bytes[i * width + b] = static_cast<std::uint8_t>(text[i] >> (8 * b));  // little-endian
      }
    }
    units = {bytes.data(), text.size(), width};
  }
};

// UTF-8 of code points (the shared reference encoder): a surrogate in its 3-byte
// ('surrogatepass') form.
std::string utf8_of(const std::u32string& text) {
  std::size_t first_invalid = 0;
  return internal::utf8_encode::reference_encode(
      reinterpret_cast<const unsigned char*>(text.data()), text.size(), 4, first_invalid);
}

TEST(MinHasher, PendingDocumentsAreEncodedWhereTheyAreHashed) {
  // 2,000 documents of every width; two of every three are given as code units (their views
  // hold other text, which must not be read), with a 3 MB one among them (over the kept buffer).
  const std::u32string wide[] = {U"caf\u00e9", U"\u20ac\u0416\u0443\u0440", U"\U0001F600 emoji",
                                 U"plain"};
  std::vector<std::u32string> texts;
  for (int i = 0; i < 2000; ++i) {
    std::u32string t;
    for (int w = 0; w < 40 + i % 13; ++w) {
      t += wide[(i + w) % 4];
      t += U' ';
      for (const char c : std::to_string((i * 31 + w) % 97)) t += static_cast<char32_t>(c);
      t += U' ';
    }
    texts.push_back(i == 1000 ? std::u32string(1'000'000, U'\u20ac') + t : t);
  }
  for (const MinHashConfig config :
       {MinHashConfig{64, ShingleKind::kWord, 5, 1}, MinHashConfig{32, ShingleKind::kChar, 4, 7}}) {
    const MinHasher h(config);
    std::vector<std::string> utf8;
    for (const auto& t : texts) utf8.push_back(utf8_of(t));
    const std::vector<std::string_view> views(utf8.begin(), utf8.end());
    std::vector<std::uint32_t> expected(views.size() * config.num_perm);
    h.signatures(views, expected, 1);

    std::vector<StrUnits> units;
    std::vector<PendingUtf8> pending;
    std::vector<std::string_view> given(views.begin(), views.end());
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (i % 3 == 0) continue;
      units.emplace_back(texts[i]);
      given[i] = "not this text";
    }
    for (std::size_t i = 0, k = 0; i < texts.size(); ++i) {
      if (i % 3 != 0) pending.push_back({i, units[k++].units});
    }
    for (const unsigned threads : {1U, 2U, 4U}) {
      std::vector<std::uint32_t> out(views.size() * config.num_perm);
      std::size_t consumed = 0;
      EXPECT_EQ(h.signatures(given, pending, out, threads,
                             [&](std::size_t begin, std::size_t end) { consumed += end - begin; }),
                Utf8Encoded::npos);
      EXPECT_EQ(out, expected) << threads;
      EXPECT_EQ(consumed, views.size());
      std::fill(out.begin(), out.end(), 0U);
      EXPECT_EQ(h.signatures(given, pending, out, threads, {}), Utf8Encoded::npos);
      EXPECT_EQ(out, expected) << threads;
    }
  }
}

TEST(MinHasher, PendingLoneSurrogatesAreReportedInOrder) {
  const MinHasher h;
  std::vector<std::u32string> texts(600, U"some \u20ac words in a document here");
  texts[450] = U"late \xDC80 one " + texts[450];
  texts[200] = U"lone \xD800 surrogate " + texts[200];
  std::vector<StrUnits> units(texts.begin(), texts.end());
  std::vector<PendingUtf8> pending;
  for (std::size_t i = 100; i < texts.size(); ++i) pending.push_back({i, units[i].units});
  std::vector<std::string> utf8;
  for (const auto& t : texts) utf8.push_back(utf8_of(t));
  const std::vector<std::string_view> views(utf8.begin(), utf8.end());
  for (const unsigned threads : {1U, 2U, 4U}) {
    std::vector<std::uint32_t> out(views.size() * 64);
    EXPECT_EQ(h.signatures(views, pending, out, threads, {}), 100U) << threads;  // texts[200]
    // Its signature: that of its 'surrogatepass' bytes.
    EXPECT_TRUE(std::equal(out.begin() + 200 * 64, out.begin() + 201 * 64,
                           h.signature(views[200]).begin()));
  }
  std::vector<std::uint32_t> out(views.size() * 64);
  const std::vector<PendingUtf8> unsorted{pending[1], pending[0]};
  EXPECT_THROW(h.signatures(views, unsorted, out, 1, {}), InvalidArgument);
  const std::vector<PendingUtf8> past{{600, units[0].units}};
  EXPECT_THROW(h.signatures(views, past, out, 1, {}), InvalidArgument);
}

TEST(MinHasher, RejectsBadConfigs) {
  EXPECT_THROW(MinHasher(MinHashConfig{0, ShingleKind::kWord, 5, 1}), InvalidArgument);
  EXPECT_THROW(MinHasher(MinHashConfig{513, ShingleKind::kWord, 5, 1}), InvalidArgument);
  EXPECT_THROW(MinHasher(MinHashConfig{64, ShingleKind::kWord, 0, 1}), InvalidArgument);
  EXPECT_THROW(MinHasher(MinHashConfig{64, ShingleKind::kWord, 257, 1}), InvalidArgument);
}

TEST(Similarity, EstimateAndJaccard) {
  MinHasher h(MinHashConfig{128, ShingleKind::kWord, 1, 1});
  EXPECT_DOUBLE_EQ(shingle_jaccard(h, "a b c d", "c d e f"), 2.0 / 6.0);
  const auto sa = h.signature("a b c d");
  EXPECT_DOUBLE_EQ(estimate_similarity(sa, sa), 1.0);
  EXPECT_THROW(estimate_similarity(sa, std::vector<std::uint32_t>(3)), InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
