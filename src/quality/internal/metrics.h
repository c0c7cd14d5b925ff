// The QualityFilter's metrics, one function per preset; docs/quality.md defines each one and
// fallbacks/quality.py computes the same values in the same order (to the bit).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quality/internal/key_tables.h"
#include "quality/internal/probe_table.h"
#include "quality/internal/text.h"
#include "quality/internal/words.h"

namespace luminamoon::data::quality_internal {

enum Metric : std::uint8_t {
  kChars,
  kWords,
  kCharEntropy,
  kAdjustedCharEntropy,
  kNgramRepetition,
  kSymbolRatio,
  kCapitalizedWordRatio,
  kCapitalizedWordShare,
  kGopherWords,
  kGopherMeanWordLength,
  kGopherHashRatio,
  kGopherEllipsisRatio,
  kGopherBulletLinesRatio,
  kGopherEllipsisLinesRatio,
  kGopherAlphaWordsRatio,
  kGopherStopWords,
  kGopherDupParaRatio,
  kGopherDupParaCharRatio,
  kGopherDupLineRatio,
  kGopherDupLineCharRatio,
  kGopherTop2gramCharRatio,
  kGopherTop3gramCharRatio,
  kGopherTop4gramCharRatio,
  kGopherDup5gramCharRatio,
  kGopherDup6gramCharRatio,
  kGopherDup7gramCharRatio,
  kGopherDup8gramCharRatio,
  kGopherDup9gramCharRatio,
  kGopherDup10gramCharRatio,
  kC4Lines,
  kC4KeptLines,
  kC4Sentences,
  kC4LoremIpsumLines,
  kC4CurlyBracketLines,
  kC4LinesTooLongWord,
  kC4LinesNoTerminalPunct,
  kC4LinesTooFewWords,
  kC4LinesJavascript,
  kC4LinesPolicy,
  kFinewebLines,
  kFinewebLinePunctRatio,
  kFinewebShortLineRatio,
  kFinewebDupLineCharRatio,
  kFinewebNewlineWordRatio,
  kMetricCount,
};

extern const std::array<std::string_view, kMetricCount> kMetricNames;
using Metrics = std::array<double, kMetricCount>;

// One document (valid UTF-8) and its word tokens, computed on first use. Reused across
// documents by one thread so that its buffers are allocated once.
class Document {
 public:
  void reset(std::string_view text);
  std::string_view text() const { return text_; }
  // datatrove's split_into_words: spaCy tokens without the whitespace ones.
  const std::vector<std::string_view>& tokens();
  // Tokens with a letter: the words of the core metrics.
  const std::vector<std::string_view>& words();
  // Whether the text is all ASCII (then code points are bytes), and len() of a piece of it.
  bool ascii() {
    if (ascii_ < 0) ascii_ = compute_ascii() ? 1 : 0;
    return ascii_ == 1;
  }
  std::size_t chars(std::string_view piece) {
    return ascii() ? piece.size() : count_code_points(piece);
  }
  // The hash table the metrics share (one pass at a time).
  ProbeTable& table() { return table_; }

  // Buffers the metrics reuse from document to document (one thread owns a Document), so that
  // a document costs no allocation once they have grown. Contents are the current metric's.
  struct Scratch {
    std::vector<std::string_view> pieces;    // lines or paragraphs
    std::vector<std::uint32_t> first_of;     // per word: the position of its first occurrence
    std::vector<std::uint64_t> key_hash;     // per word: the interning hash of its key
    std::vector<std::uint32_t> counts;       // per key: occurrences
    std::vector<std::uint32_t> gram_class;   // per position: first position of its n-gram
    std::vector<std::uint32_t> next_class;   // the same for n + 1, being built
    std::vector<std::uint8_t> repeated;      // per position: its n-gram occurs twice or more
    std::vector<std::size_t> prefix_chars;   // per word boundary: code points before it
    std::string joined;                      // the words without separators, then 16 bytes
    std::vector<std::size_t> offsets;        // per word boundary: byte offset in `joined`
    std::vector<std::uint64_t> prefix_hash;  // per word boundary: polynomial hash of `joined`
    std::vector<std::uint64_t> word_hash;    // per first occurrence: polynomial hash of the word
    std::vector<std::uint8_t> live;          // per position: may take part in a repeat
    std::vector<std::uint32_t> live_list;    // the live positions, ascending
    std::vector<std::size_t> bound_from;     // per live position and n: a bound on the rest
    std::vector<std::uint64_t> window;       // per position: 8 bytes of `joined`
    std::vector<std::uint64_t> window_high;  // per position: the next 8 bytes of `joined`
    std::vector<std::uint64_t> window_hash;  // per position: the hash of its window
    std::vector<std::uint32_t> bucket;       // per position: first one with the same window
    std::vector<std::uint32_t> chain;        // per position: previous one with the same window
    std::vector<std::uint32_t> bucket_last;  // per bucket: its last position
    std::vector<std::uint32_t> bucket_size;  // per bucket: its positions
    // The '\n' bytes of the text and their runs (gopher_repetition's lines and paragraphs).
    std::vector<std::size_t> newline_positions;
    std::vector<std::pair<std::size_t, std::size_t>> newline_runs;
    // The live positions' filters (seen once / seen twice, per hash of the first 8 or 16 bytes
    // of a position) and the positions whose bucket is searched (live_positions).
    std::vector<std::uint64_t> twin_filter8;
    std::vector<std::uint64_t> twin_filter16;
    std::vector<std::uint32_t> compare;
    // The 5..10-gram stage (dup_ngram_char_ratios).
    std::vector<std::uint32_t> firsts;     // the words' first occurrences, in order
    std::vector<std::uint32_t> by_length;  // the same, by length
    // gopher_repetition's top 2-4-gram passes and word interning (key_tables.h)
    std::vector<std::uint32_t> word_count;  // per first occurrence: the word's occurrences
    IntKeyTable gram_table;
    std::vector<std::uint64_t> word_keys;  // per word: two integers (see the key loop)
  };
  Scratch& scratch() { return scratch_; }

 private:
  bool compute_ascii() const;
  std::string_view text_;
  bool have_tokens_ = false;
  bool have_words_ = false;
  int ascii_ = -1;  // unknown
  ProbeTable table_;
  Scratch scratch_;
  std::vector<Token> raw_;
  std::vector<std::string_view> tokens_;
  std::vector<std::string_view> words_;
};

// Called after each group of metrics is computed, with the group's last metric (metrics come in
// the order of their preset's rules); returning true (a rule failed) stops the computation, the
// way datatrove returns at the first failing rule. Null: compute every metric.
using StopAfter = const std::function<bool(Metric)>*;

// numerator / denominator, 0.0 when the denominator is 0 (docs/quality.md, "Bad input").
inline double ratio(std::size_t numerator, std::size_t denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
}

// datatrove's find_duplicates over `items`: (repeated elements, their code points).
std::pair<std::size_t, std::size_t> find_duplicates(ProbeTable& table,
                                                    const std::vector<std::string_view>& items,
                                                    bool ascii);

void core_metrics(Document& doc, std::int64_t ngram_n, std::int64_t ngram_window, Metrics& out,
                  StopAfter stop = nullptr);
void gopher_quality_metrics(Document& doc, Metrics& out);
// `ngram_passes_at[n - 2]` (n = 2..10): when the caller only needs to know whether the top
// n-gram char ratio (n = 2..4) or the dup n-gram char ratio (n = 5..10) is at most this (a filter
// whose gopher_max_top_{n}gram_char_ratio or gopher_max_dup_{n}gram_char_ratio rule has this
// threshold: a rule that fails above it), a document whose ratio is bounded at or below it skips
// that n-gram pass, and the metric holds the bound instead of the exact ratio. The top n-grams are
// bounded from the words' counts, the dup n-grams from the positions that may repeat an earlier
// n-gram. -inf (or null, the default): always the exact ratio.
using NgramPassesAt = std::array<double, 9>;
void gopher_repetition_metrics(Document& doc, Metrics& out, StopAfter stop = nullptr,
                               const NgramPassesAt* ngram_passes_at = nullptr);
// `newline_word_ratio_passes_at`: when the caller only needs to know whether the newline/word
// ratio is at most this (a filter whose rule has this threshold), a document whose ratio is
// bounded below it from a lower bound on the word count is not tokenized, and the metric holds
// that bound instead of the exact ratio. -inf (the default): always the exact ratio.
void fineweb_metrics(
    Document& doc, std::int64_t short_line_length, Metrics& out, StopAfter stop = nullptr,
    double newline_word_ratio_passes_at = -std::numeric_limits<double>::infinity());

// A lower bound on the number of non-whitespace tokens of `text` (Document::tokens): the printable
// ASCII bytes that start the text or follow an ASCII whitespace byte. Each starts a different
// whitespace-delimited word, and the tokenizer gives every word at least one token.
std::size_t word_count_lower_bound(std::string_view text);

struct C4Options {
  std::optional<std::int64_t> max_word_length;     // nullopt: no limit
  std::optional<std::int64_t> min_words_per_line;  // nullopt: no minimum
  bool terminal_punct = true;
  bool remove_citations = true;
  bool lorem_ipsum = true;
  bool javascript = true;
  bool curly_bracket = true;
  bool policy = true;
};

// One pass of datatrove's C4QualityFilter over the lines, without its early exits. Sentences
// are counted line by line while the count is below `sentence_cap` (0: not at all; infinity:
// every kept line): once it reaches the c4_min_sentences threshold that rule cannot fail, so the
// rest (a third of the pass on real text) is skipped and `sentences` is then only a lower bound.
struct C4Pass {
  enum class Drop : std::uint8_t { kNone, kLoremIpsum, kCurlyBracket };
  std::size_t lines = 0;
  std::size_t kept = 0;
  std::size_t sentences = 0;
  std::size_t lorem_ipsum = 0;
  std::size_t curly_bracket = 0;
  std::size_t too_long_word = 0;
  std::size_t no_terminal_punct = 0;
  std::size_t too_few_words = 0;
  std::size_t javascript = 0;
  std::size_t policy = 0;
  Drop first_drop = Drop::kNone;        // the event datatrove stops at
  std::vector<std::string> kept_lines;  // filled when asked for
};

void c4_pass(std::string_view text, const C4Options& options, double sentence_cap, bool keep_lines,
             C4Pass& out, std::vector<Token>& scratch);
void c4_metrics(const C4Pass& pass, Metrics& out);
// "\n".join(kept_lines).strip()
std::string join_kept_lines(const std::vector<std::string>& kept_lines);

}  // namespace luminamoon::data::quality_internal
