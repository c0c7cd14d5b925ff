// gopher_repetition's n-gram metrics against a direct transcription of datatrove's definitions
// (a std::map of word tuples for the top 2-4-grams, a std::set of joined strings for the 5-10-gram
// find_all_duplicate), on documents built to reach every shortcut of the fast path:
// - different word splits that join to the same characters ("ab c" and "a bc"), which the word
//   ids tell apart but the 5-10-gram metrics must treat as equal (byte comparison after a
//   "same words?" miss);
// - 8-byte windows shared by many positions (buckets over the compared limit) and by few;
// - near misses that differ only after byte 8, after byte 16, or only in the middle of a word
//   (the interning hash's loads), at every word length up to 24.
// - words whose last bytes are the text's last ones (read by a copy, not by 16-byte loads) and
//   words of multibyte characters (code points counted from the bytes of the word's key).
// Every metric must be equal to the last bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quality/internal/key_tables.h"
#include "quality/internal/metrics.h"
#include "quality/internal/text.h"

namespace luminamoon::data::quality_internal {
namespace {

// len() of a piece of valid UTF-8: its bytes that do not continue a character.
std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// datatrove's top n-gram character ratio numerator: the most frequent n-gram (ties to the one
// seen first), its words' characters plus n - 1 spaces, times its count.
std::size_t top_ngram_chars(const std::vector<std::string_view>& words, std::size_t n) {
  if (words.size() < n) return 0;
  std::map<std::vector<std::string_view>, std::pair<std::size_t, std::size_t>>
      seen;  // count, first
  std::size_t best_count = 0;
  std::size_t best_first = 0;
  for (std::size_t i = 0; i + n <= words.size(); ++i) {
    const std::vector<std::string_view> key(words.begin() + static_cast<std::ptrdiff_t>(i),
                                            words.begin() + static_cast<std::ptrdiff_t>(i + n));
    auto [it, inserted] = seen.try_emplace(key, 0, i);
    const std::size_t count = ++it->second.first;
    const std::size_t first = it->second.second;
    if (count > best_count || (count == best_count && first < best_first)) {
      best_count = count;
      best_first = first;
    }
  }
  std::size_t chars = n - 1;
  for (std::size_t k = 0; k < n; ++k) chars += code_points(words[best_first + k]);
  return chars * best_count;
}

// datatrove's find_all_duplicate: n-grams joined without separator, n words skipped after a
// repeat.
std::size_t find_all_duplicate(const std::vector<std::string_view>& words, std::size_t n) {
  std::set<std::string> unique;
  std::size_t repeated = 0;
  std::size_t i = 0;
  while (i + n <= words.size()) {
    std::string gram;
    for (std::size_t k = 0; k < n; ++k) gram += words[i + k];
    if (unique.count(gram) != 0) {
      repeated += code_points(gram);
      i += n;
    } else {
      unique.insert(std::move(gram));
      ++i;
    }
  }
  return repeated;
}

// Computes the metrics for `text` and checks every n-gram one against the reference.
void expect_reference(Document& doc, const std::string& text) {
  doc.reset(text);
  Metrics out{};
  gopher_repetition_metrics(doc, out);
  const std::vector<std::string_view>& words = doc.tokens();
  const std::size_t chars = code_points(text);
  ASSERT_EQ(out[kChars], static_cast<double>(chars));
  NgramPassesAt exact{};  // (n = 2..10 at n - 2)
  for (std::size_t n = 2; n <= 4; ++n) {
    const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
    exact[n - 2] = ratio(top_ngram_chars(words, n), chars);
    ASSERT_EQ(out[metric], exact[n - 2]) << "top " << n << "-gram of: " << text;
  }
  for (std::size_t n = 5; n <= 10; ++n) {
    const auto metric = static_cast<Metric>(kGopherDup5gramCharRatio + (n - 5));
    exact[n - 2] = ratio(find_all_duplicate(words, n), chars);
    ASSERT_EQ(out[metric], exact[n - 2]) << "duplicate " << n << "-grams of: " << text;
  }
  // A filter's pass/fail mode (ngram_passes_at): a metric is either exact or a bound that is at
  // least the exact ratio and passes its threshold (so the exact one passes it too). Thresholds
  // at the exact ratios (a pass may be skipped only when its bound is exact), just below them
  // (never skipped), and fixed ones.
  // And thresholds a little above them: a pass may then end early, once its count so far and
  // the bound on the rest pass (the value is that sum).
  std::vector<NgramPassesAt> thresholds = {exact, exact, exact, exact};
  for (double& t : thresholds[1]) t = std::nextafter(t, -1.0);
  for (double& t : thresholds[2]) t += 0.01;
  for (double& t : thresholds[3]) t *= 1.25;
  for (const double t : {0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0}) {
    thresholds.emplace_back();
    thresholds.back().fill(t);
  }
  for (const NgramPassesAt& at : thresholds) {
    doc.reset(text);
    Metrics bounded{};
    gopher_repetition_metrics(doc, bounded, nullptr, &at);
    for (std::size_t n = 2; n <= 10; ++n) {
      const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
      const double value = bounded[metric];
      ASSERT_TRUE(value == exact[n - 2] || (value > exact[n - 2] && value <= at[n - 2]))
          << "n-gram " << n << " at most " << at[n - 2] << ": " << value << " for " << exact[n - 2]
          << " of: " << text;
    }
  }
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

TEST(GopherRepetition, SplitsThatJoinToTheSameCharacters) {
  Document doc;
  // Hand-made: "x y ab c d e f" and "x y a bc d e f" are different words but one 7-gram of
  // characters; the second occurrence is a repeat for n = 5..7 only through the bytes.
  expect_reference(doc, "x y ab c d e f g h i j k l x y a bc d e f g h i j k l");
  expect_reference(doc,
                   "one two three four five six seven eight nine ten elevenfold one two "
                   "three four five six seven eight nine ten eleven fold");
  // A long word split at every point, after a shared run that fills the 8-byte window.
  const std::string word = "abcdefghijklmnopqrstuvw";
  for (std::size_t cut = 1; cut < word.size(); ++cut) {
    expect_reference(doc, "lead in run of words " + word + " tail end of it here and " +
                              "lead in run of words " + word.substr(0, cut) + " " +
                              word.substr(cut) + " end of it here and");
  }
}

TEST(GopherRepetition, RandomTinyWordsManySplits) {
  // Words over {a, b} of 1-3 letters: most n-grams repeat, many only as characters, and 5-grams
  // are often under 8 bytes or in buckets over the compared limit.
  const char* kWords[] = {"a", "b", "ab", "ba", "aa", "bb", "aab", "abb", "bab", "bba"};
  std::mt19937 rng(15);
  Document doc;
  for (int d = 0; d < 150; ++d) {
    std::vector<std::string> words;
    const std::size_t count = 5 + rng() % 120;
    const std::size_t alphabet = 2 + rng() % 9;
    for (std::size_t i = 0; i < count; ++i) words.emplace_back(kWords[rng() % alphabet]);
    expect_reference(doc, join(words));
  }
}

TEST(GopherRepetition, RandomLongWordsNearMisses) {
  // Words of 1-24 letters over a small alphabet, drawn from a pool where many share their
  // first 8 or 16 bytes and differ after, or differ only in one middle byte; runs of the
  // document are copied with one word re-split, so repeats come with and without equal words.
  std::mt19937 rng(1515);
  Document doc;
  for (int d = 0; d < 120; ++d) {
    std::vector<std::string> pool;
    const std::string stem = "qrstuvwxyzqrstuvwxyz";
    for (int k = 0; k < 12; ++k) {
      std::string w;
      const std::size_t len = 1 + rng() % 24;
      for (std::size_t i = 0; i < len; ++i) w += static_cast<char>('p' + rng() % 3);
      pool.push_back(w);
      pool.push_back(stem.substr(0, 1 + rng() % stem.size()) + static_cast<char>('a' + rng() % 3));
      std::string middle = w;
      middle[middle.size() / 2] = 'z';
      pool.push_back(middle);
    }
    std::vector<std::string> words;
    const std::size_t count = 10 + rng() % 200;
    for (std::size_t i = 0; i < count; ++i) words.push_back(pool[rng() % pool.size()]);
    // Copy a run of words to the end, re-splitting one of them (or joining two) on the way.
    const std::size_t from = rng() % words.size();
    const std::size_t len = std::min<std::size_t>(words.size() - from, 4 + rng() % 12);
    std::vector<std::string> copy(words.begin() + static_cast<std::ptrdiff_t>(from),
                                  words.begin() + static_cast<std::ptrdiff_t>(from + len));
    const std::size_t at = rng() % copy.size();
    if (copy[at].size() > 1 && rng() % 2 == 0) {
      const std::size_t cut = 1 + rng() % (copy[at].size() - 1);
      const std::string tail = copy[at].substr(cut);
      copy[at].resize(cut);
      copy.insert(copy.begin() + static_cast<std::ptrdiff_t>(at + 1), tail);
    } else if (at + 1 < copy.size()) {
      copy[at] += copy[at + 1];
      copy.erase(copy.begin() + static_cast<std::ptrdiff_t>(at + 1));
    }
    words.insert(words.end(), copy.begin(), copy.end());
    words.insert(words.end(), copy.begin(), copy.end());
    expect_reference(doc, join(words));
  }
}

TEST(GopherRepetition, ManyNgramsSharingTheirFirstWords) {
  // Thousands of distinct 5-10-grams that share their first 4 (or 8) words and differ after:
  // some of them meet in the hash table with equal tags, where only a full comparison of their
  // words may answer (a check of the shared words alone would merge them). The document is
  // written twice, so every position takes part in the passes.
  Document doc;
  for (const std::size_t shared : {std::size_t{4}, std::size_t{8}}) {
    std::vector<std::string> words;
    for (int k = 0; k < 1500; ++k) {
      for (std::size_t s = 0; s < shared; ++s)
        words.push_back(std::string(1, static_cast<char>('a' + s % 4)));
      words.push_back("w" + std::to_string(k));
      words.push_back("v" + std::to_string(k % 7));
    }
    const std::string once = join(words);
    expect_reference(doc, once + " " + once);
  }
}

TEST(GopherRepetition, ThousandsOfWordsSharingTheirFirstBytes) {
  // Documents of 17,000 words of 12 (or of 7) bytes that share their first 8 (4) bytes, each three
  // times in a row: a few of the 51,000 lookups meet another word in the interning table with an
  // equal tag (whatever the seed), where only a comparison of every byte may answer. Every "w w"
  // 2-gram occurs twice, so the top one is the first; a wrong merge of two words would make one
  // occur four times.
  Document doc;
  for (const std::string& stem :
       {std::string("mmmmmmmm"), std::string("nnnnnnnn"), std::string("mmmm"), std::string("nnnn"),
        std::string("pppp"), std::string("qqqq")}) {
    std::string text;
    const int letters = stem.size() == 8 ? 4 : 3;  // words of 12 and of 7 bytes
    for (int k = 0; k < 17000; ++k) {
      std::string word = stem;
      for (int v = k, l = 0; l < letters; ++l, v /= 26) word += static_cast<char>('a' + v % 26);
      text += word + " " + word + " " + word + " ";
    }
    doc.reset(text);
    Metrics out{};
    gopher_repetition_metrics(doc, out);
    ASSERT_EQ(doc.tokens().size(), 51000u);
    const std::size_t word = stem.size() == 8 ? 12 : 7;
    EXPECT_EQ(out[kGopherTop2gramCharRatio], ratio((2 * word + 1) * 2, text.size())) << stem;
  }
}

TEST(GopherRepetition, WordsDifferingInOneByteAtEveryLength) {
  // Interning: two words of the same length that differ in one byte are different words, at
  // every length and every byte (the short-word hash reads each byte through some load).
  Document doc;
  for (std::size_t len = 1; len <= 24; ++len) {
    for (std::size_t at = 0; at < len; ++at) {
      std::string a(len, 'm');
      std::string b = a;
      b[at] = 'n';
      // Top 2-gram: "a a" would be the top one if b were taken for a.
      expect_reference(doc, a + " " + a + " " + b + " " + a + " " + b + " " + a + " x " + b);
    }
  }
}

TEST(GopherRepetition, WordsThatDifferOnlyInLengthOrTheirSixteenthByte) {
  // Interning keeps a word's first 16 bytes (zero past its end) and, below 16 bytes, its length
  // in the last byte: words padded with NUL bytes, or 16-byte words whose last byte equals a
  // shorter word's length over the same zero-padded bytes, must stay different words.
  Document doc;
  for (std::size_t len = 1; len <= 15; ++len) {
    const std::string x = "p" + std::string(len - 1, '\0');
    const std::string longer = x + '\0';  // len + 1
    const std::string sixteen = x + std::string(15 - len, '\0') + static_cast<char>(len);  // 16
    const std::string mark = "q" + std::string(15, '\0');  // 16 bytes, last byte 0
    for (const std::string& y : {longer, sixteen, mark}) {
      expect_reference(doc, x + " " + y + " " + x + " " + y + " " + x + " z " + y + " " + x);
      expect_reference(doc, y + " " + x + " " + y + " " + y + " " + x + " " + x);
    }
  }
}

// The interning key alone (no hash, no table): the interning's branch-free first probe
// (ProbeTable::find_or_insert_first_probe) takes two words with equal keys for the same word
// whenever the current one is below 16 bytes, so those keys must be equal only for equal words,
// also against every longer word (a 16-byte word whose last byte is a shorter word's length,
// over the same zero-padded bytes, is the case a hash collision would otherwise turn into a wrong
// answer). Words of 16 bytes or more are compared in full.
TEST(GopherRepetition, InterningKeysOfShortWordsAreTheWords) {
  auto key = [](const std::string& word) {
    unsigned char block[16] = {};
    for (std::size_t k = 0; k < word.size() && k < 16; ++k) {
      block[k] = static_cast<unsigned char>(word[k]);
    }
    std::uint64_t low = 0;
    std::uint64_t high = 0;
    for (int k = 7; k >= 0; --k) {
      low = low << 8 | block[k];
      high = high << 8 | block[k + 8];
    }
    return std::pair{low, interning_high(high, word.size())};
  };
  std::vector<std::string> words;
  for (std::size_t len = 0; len <= 20; ++len) {
    const std::string padded = "p" + std::string(len > 0 ? len - 1 : 0, '\0');
    words.push_back(len == 0 ? std::string() : padded);
    for (unsigned last : {0u, 1u, 15u, 16u, 0x80u, 0xFFu}) {
      if (len == 0) continue;
      std::string w = padded;
      w.back() = static_cast<char>(last);
      words.push_back(w);
    }
    if (len < 16) {  // 16 bytes: these bytes, then this length (or 0xFF) as the last one
      for (unsigned last : {static_cast<unsigned>(len), 0xFFu}) {
        std::string w = padded + std::string(15 - len, '\0');
        w.push_back(static_cast<char>(last));
        words.push_back(w);
      }
    }
  }
  std::size_t short_pairs = 0;
  for (const std::string& a : words) {
    for (const std::string& b : words) {
      if (a.size() >= 16) continue;  // (the current word: long ones take the full comparison)
      ++short_pairs;
      EXPECT_EQ(key(a) == key(b), a == b) << "lengths " << a.size() << " and " << b.size();
    }
  }
  EXPECT_GT(short_pairs, 1000u);
}

TEST(GopherRepetition, WordsEndingTheText) {
  // Interning and `joined` read a word of up to 16 bytes with two 8-byte loads when 16 bytes
  // follow its start in the text, and copy it otherwise: the same word must get the same key
  // either way. "a b" occurs twice (its second time within the last 16 bytes), at every length
  // of a and b up to 20 bytes, so a wrong key changes the top 2-gram.
  Document doc;
  for (std::size_t la = 1; la <= 20; ++la) {
    for (std::size_t lb = 1; lb <= 20; lb += 3) {
      const std::string a(la, 'k');
      const std::string b = std::string(lb - 1, 'q') + "z";
      expect_reference(doc, "lead words here " + a + " " + b + " mid " + a + " " + b);
      expect_reference(doc, a + " " + b + " " + a + " " + b);
    }
  }
}

TEST(GopherRepetition, MultibyteWords) {
  // Code points of words of 2-, 3- and 4-byte characters (and ASCII), of 1 to 40 bytes, in
  // random documents with repeats and re-splits, and ending the text: every metric counts code
  // points (the words' counts come from their keys' continuation bytes up to 16 bytes).
  const char* kPieces[] = {"a", "é", "€", "😀", "ß", "中", "x", "ø", "👍🏽"};
  std::mt19937 rng(2121);
  Document doc;
  for (int d = 0; d < 200; ++d) {
    std::vector<std::string> pool;
    for (int k = 0; k < 6 + static_cast<int>(rng() % 10); ++k) {
      std::string w;
      const std::size_t pieces = 1 + rng() % 12;
      for (std::size_t i = 0; i < pieces; ++i) w += kPieces[rng() % std::size(kPieces)];
      pool.push_back(w);
    }
    std::vector<std::string> words;
    const std::size_t count = 5 + rng() % 150;
    for (std::size_t i = 0; i < count; ++i) words.push_back(pool[rng() % pool.size()]);
    // A re-split copy of a run at the end (a word cut between two characters).
    const std::size_t from = rng() % words.size();
    std::vector<std::string> copy(words.begin() + static_cast<std::ptrdiff_t>(from), words.end());
    std::string& cut = copy.front();
    std::size_t at = cut.size() / 2;
    while (at > 0 && (static_cast<unsigned char>(cut[at]) & 0xC0) == 0x80) --at;
    if (at > 0) {
      const std::string tail = cut.substr(at);
      cut.resize(at);
      copy.insert(copy.begin() + 1, tail);
    }
    words.insert(words.end(), copy.begin(), copy.end());
    expect_reference(doc, join(words));
  }
}

TEST(GopherRepetition, ResplitLongWordsAfterOtherDocuments) {
  // `joined` is built from 16-byte copies of words up to 16 bytes (longer ones are copied
  // whole) into a buffer reused from document to document: every byte of a run of words of
  // 12-24 bytes, repeated with its word boundaries moved, must be its own, whatever the
  // previous document left there.
  std::mt19937 rng(1717);
  Document doc;
  for (int d = 0; d < 300; ++d) {
    std::vector<std::string> words;
    const std::size_t count = 6 + rng() % 10;
    const std::uint32_t base = 'c' + static_cast<std::uint32_t>(d % 5);
    for (std::size_t i = 0; i < count; ++i) {
      std::string w;
      const std::size_t len = 12 + rng() % 13;
      for (std::size_t k = 0; k < len; ++k) w += static_cast<char>(base + rng() % 2u);
      words.push_back(w);
    }
    // The same characters with the boundary between words 2k and 2k+1 moved (as many words).
    std::vector<std::string> copy = words;
    for (std::size_t at = 0; at + 1 < copy.size(); at += 2) {
      const std::string both = copy[at] + copy[at + 1];
      const std::size_t cut = 1 + rng() % (both.size() - 1);
      copy[at] = both.substr(0, cut);
      copy[at + 1] = both.substr(cut);
    }
    words.push_back("sep");
    words.insert(words.end(), copy.begin(), copy.end());
    expect_reference(doc, join(words));
  }
}

// datatrove's paragraph and line split (re.split of runs of at least min_run '\n'), byte by byte.
std::vector<std::string> split_runs(std::string_view text, std::size_t min_run) {
  std::vector<std::string> out;
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\n') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && text[j] == '\n') ++j;
    if (j - i >= min_run) {
      out.emplace_back(text.substr(start, i - start));
      start = j;
    }
    i = j;
  }
  out.emplace_back(text.substr(start));
  return out;
}

// datatrove's find_duplicates: (repeated elements, their characters).
std::pair<std::size_t, std::size_t> duplicates(const std::vector<std::string>& items) {
  std::set<std::string> unique;
  std::size_t elements = 0;
  std::size_t chars = 0;
  for (const std::string& item : items) {
    if (!unique.insert(item).second) {
      ++elements;
      chars += code_points(item);
    }
  }
  return {elements, chars};
}

TEST(GopherRepetition, LinesAndParagraphsAgainstTheReference) {
  // The runs of '\n' are found 16 bytes at a time (two positions per block written without a
  // branch, a loop for blocks with more) and shared by both splits; the paragraphs are split
  // within strip(text). Random texts of 0 to 80 bytes (and a few long ones) of '\n' runs, spaces,
  // tabs, '\r', Unicode whitespace (U+00A0, U+2028: stripped, never a separator) and short
  // words, so that runs cross the blocks' edges, start and end the text, and blocks hold 0 to 16
  // newlines.
  const std::vector<std::string> pieces = {"\n", "\n", "\n\n",     "\n\n\n",       " ",
                                           "\t", "\r", "\xC2\xA0", "\xE2\x80\xA8", "a",
                                           "b",  "ab", "abc",      "\xC3\xA9",     "x y"};
  std::mt19937 rng(20261202);
  Document doc;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const std::size_t length = round % 100 == 0 ? 2000 : rng() % 81;
    while (text.size() < length) text += pieces[rng() % pieces.size()];
    doc.reset(text);
    Metrics out{};
    gopher_repetition_metrics(doc, out);
    const std::size_t chars = code_points(text);
    const std::vector<std::string> paragraphs = split_runs(strip(text), 2);
    const std::vector<std::string> lines = split_runs(text, 1);
    const auto [para_dups, para_chars] = duplicates(paragraphs);
    const auto [line_dups, line_chars] = duplicates(lines);
    ASSERT_EQ(out[kGopherDupParaRatio], ratio(para_dups, paragraphs.size())) << text;
    ASSERT_EQ(out[kGopherDupParaCharRatio], ratio(para_chars, chars)) << text;
    ASSERT_EQ(out[kGopherDupLineRatio], ratio(line_dups, lines.size())) << text;
    ASSERT_EQ(out[kGopherDupLineCharRatio], ratio(line_chars, chars)) << text;
  }
}

TEST(GopherRepetition, FivegramsSharingTheirFirstBytesInBucketsOfEverySize) {
  // live_positions settles a position from two filters before any bucket: one of the hashes of
  // every position's first 8 bytes, one of the first 16 bytes of the bucketed ones. Here many
  // positions share their first 8 bytes (buckets of 2 to 80, over the compared limit of 32 too),
  // and among them some share their first 16 bytes, others differ from byte 9 to byte 24 on,
  // and a third of the words is copied once (whole n-grams twice): every n-gram metric must
  // still equal the reference.
  std::mt19937 rng(7);
  Document doc;
  for (int round = 0; round < 60; ++round) {
    const std::size_t members = 2 + static_cast<std::size_t>(round) * 4 / 3;
    std::vector<std::string> words;
    for (std::size_t m = 0; m < members; ++m) {
      // "stemstem" + a tail: 8 shared bytes, then bytes that repeat among a few members only.
      std::string word = "stemstem";
      const std::size_t tail = rng() % 12;
      for (std::size_t k = 0; k < tail; ++k) word += static_cast<char>('a' + rng() % 2);
      words.push_back(word);
      const std::size_t after = 4 + rng() % 3;
      for (std::size_t k = 0; k < after; ++k)
        words.push_back(std::string(1 + rng() % 3, static_cast<char>('p' + rng() % 3)));
    }
    // A copy of a third of the words: their n-grams occur twice, in buckets of every size.
    const std::size_t from = rng() % (words.size() - words.size() / 3);
    const std::vector<std::string> copy(
        words.begin() + static_cast<std::ptrdiff_t>(from),
        words.begin() + static_cast<std::ptrdiff_t>(from + words.size() / 3));
    words.push_back("sep");
    words.insert(words.end(), copy.begin(), copy.end());
    expect_reference(doc, join(words));
  }
}

// The metrics of `text`: exact (no thresholds), and in a filter's pass/fail mode with every
// n-gram threshold at `threshold`.
std::pair<Metrics, Metrics> exact_and_bounded(Document& doc, const std::string& text,
                                              double threshold) {
  std::pair<Metrics, Metrics> out{};
  doc.reset(text);
  gopher_repetition_metrics(doc, out.first);
  NgramPassesAt at{};
  at.fill(threshold);
  doc.reset(text);
  gopher_repetition_metrics(doc, out.second, nullptr, &at);
  return out;
}

TEST(GopherRepetition, NgramBoundsOnProseWithRepeatedPhrases) {
  // Prose-like text (words of a small vocabulary, punctuation, phrases of 3 to 14 words copied
  // from earlier in the document, some with a word re-split) in a filter's pass/fail mode:
  // expect_reference checks every bound; here the bounds must also have skipped some top and
  // some dup n-gram passes (a bound above the exact ratio), so that the skipping is exercised.
  const std::vector<std::string> vocabulary = {
      "the",  "of",     "and",   "a",       "to",    "in",     "is",    "it",    "that", "was",
      "for",  "on",     "are",   "with",    "as",    "his",    "they",  "be",    "at",   "one",
      "have", "this",   "from",  "by",      "hot",   "word",   "but",   "what",  "some", "we",
      "can",  "out",    "other", "were",    "all",   "there",  "when",  "up",    "use",  "your",
      "how",  "said",   "an",    "each",    "she",   "which",  "do",    "their", ",",    ".",
      "time", "people", "water", "between", "under", "during", "while", "house"};
  std::mt19937 rng(2024);
  Document doc;
  std::size_t above = 0;      // dup n-gram passes skipped with a bound above the exact ratio
  std::size_t above_top = 0;  // top n-gram ones
  for (int d = 0; d < 300; ++d) {
    std::vector<std::string> words;
    const std::size_t count = 20 + rng() % 400;
    while (words.size() < count) {
      if (words.size() > 20 && rng() % 6 == 0) {
        const std::size_t len = 3 + rng() % 12;
        const std::size_t from = rng() % (words.size() - len);
        std::vector<std::string> copy(words.begin() + static_cast<std::ptrdiff_t>(from),
                                      words.begin() + static_cast<std::ptrdiff_t>(from + len));
        const std::size_t at = rng() % copy.size();
        if (copy[at].size() > 1 && rng() % 4 == 0) {  // re-split: the same characters
          const std::string tail = copy[at].substr(1);
          copy[at].resize(1);
          copy.insert(copy.begin() + static_cast<std::ptrdiff_t>(at + 1), tail);
        }
        words.insert(words.end(), copy.begin(), copy.end());
      } else {
        words.push_back(vocabulary[rng() % vocabulary.size()]);
      }
    }
    const std::string text = join(words);
    expect_reference(doc, text);
    const auto [out, bounded] = exact_and_bounded(doc, text, 0.3);
    for (std::size_t n = 2; n <= 10; ++n) {
      const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
      (n <= 4 ? above_top : above) += bounded[metric] > out[metric] ? 1u : 0u;
    }
  }
  EXPECT_GT(above_top, 50u);
  EXPECT_GT(above, 50u);
}

TEST(GopherRepetition, TopNgramPassesSkippedWhenAFrequentWordNeverRepeatsAPhrase) {
  // "the" before every other word, each other word once: no 2-4-gram repeats, though "the" is
  // half of the words. The bound from each position's rarest word (1 here) skips the three
  // passes; one from the most frequent word alone could not (for 2-grams 2 * 3 * 300 + 300 =
  // 2,100 of the text's ~2,600 code points).
  std::string text;
  for (int k = 0; k < 300; ++k) {
    if (!text.empty()) text += ' ';
    text += "the w" + std::to_string(k);  // (lengths differ: a bound above the exact ratio)
  }
  Document doc;
  expect_reference(doc, text);
  const auto [out, bounded] = exact_and_bounded(doc, text, 0.05);
  for (std::size_t n = 2; n <= 4; ++n) {
    const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
    EXPECT_GT(bounded[metric], out[metric]) << n << "-gram pass not skipped";
    EXPECT_LE(bounded[metric], 0.05) << n;
  }
}

}  // namespace
}  // namespace luminamoon::data::quality_internal
