// Metric computations of the QualityFilter. The Gopher, C4 and FineWeb ones transcribe datatrove
// 0.10.1's filters (Python string semantics over code points); the core ones are ours. Every
// ratio is an integer division; the entropy is summed in ascending code point order.
#include "quality/internal/metrics.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/bits.h"
#include "quality/internal/probe_table.h"
#include "quality/internal/tables.h"
#include "quality/internal/text.h"

namespace luminamoon::data::quality_internal {

const std::array<std::string_view, kMetricCount> kMetricNames = {
    "chars",
    "words",
    "char_entropy",
    "adjusted_char_entropy",
    "ngram_repetition",
    "symbol_ratio",
    "capitalized_word_ratio",
    "capitalized_word_share",
    "gopher_words",
    "gopher_mean_word_length",
    "gopher_hash_ratio",
    "gopher_ellipsis_ratio",
    "gopher_bullet_lines_ratio",
    "gopher_ellipsis_lines_ratio",
    "gopher_alpha_words_ratio",
    "gopher_stop_words",
    "gopher_dup_para_ratio",
    "gopher_dup_para_char_ratio",
    "gopher_dup_line_ratio",
    "gopher_dup_line_char_ratio",
    "gopher_top_2gram_char_ratio",
    "gopher_top_3gram_char_ratio",
    "gopher_top_4gram_char_ratio",
    "gopher_dup_5gram_char_ratio",
    "gopher_dup_6gram_char_ratio",
    "gopher_dup_7gram_char_ratio",
    "gopher_dup_8gram_char_ratio",
    "gopher_dup_9gram_char_ratio",
    "gopher_dup_10gram_char_ratio",
    "c4_lines",
    "c4_kept_lines",
    "c4_sentences",
    "c4_lorem_ipsum_lines",
    "c4_curly_bracket_lines",
    "c4_lines_too_long_word",
    "c4_lines_no_terminal_punct",
    "c4_lines_too_few_words",
    "c4_lines_javascript",
    "c4_lines_policy",
    "fineweb_lines",
    "fineweb_line_punct_ratio",
    "fineweb_short_line_ratio",
    "fineweb_dup_line_char_ratio",
    "fineweb_newline_word_ratio",
};

const std::uint64_t kHashSeed = [] {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}();

namespace {

bool has_letter(std::string_view token) {
  for (std::size_t i = 0, length = 0; i < token.size(); i += length) {
    const auto b = static_cast<unsigned char>(token[i]);
    if (b < 0x80) {
      length = 1;
      if ((b | 0x20) >= 'a' && (b | 0x20) <= 'z') return true;
      continue;
    }
    if (flags(decode_at(token, i, length)) & kAlpha) return true;
  }
  return false;
}

bool all_flag(std::string_view token, std::uint32_t flag) {
  for (std::size_t i = 0, length = 0; i < token.size(); i += length) {
    if (!(flags(decode_at(token, i, length)) & flag)) return false;
  }
  return true;
}

// Eight bytes at a time, OR-ed over blocks of 64 so that the compiler vectorises the block.
bool is_ascii(std::string_view text) {
  const char* p = text.data();
  std::size_t n = text.size();
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  for (; n >= 64; p += 64, n -= 64) {
    std::uint64_t block[8];
    std::memcpy(block, p, 64);
    std::uint64_t any = 0;
    for (const std::uint64_t word : block) any |= word;
    if (any & kHigh) return false;
  }
  for (; n > 0; ++p, --n) {
    if (static_cast<unsigned char>(*p) >= 0x80) return false;
  }
  return true;
}

// A hash per word (equal words, equal hashes): n-grams are hashed from these and confirmed by
// comparing the words themselves.
void word_hashes(const std::vector<std::string_view>& words, std::vector<std::uint64_t>& out) {
  out.resize(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) out[i] = hash_bytes(words[i]);
}

bool same_words(const std::vector<std::string_view>& words, std::size_t a, std::size_t b,
                std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    if (words[a + k] != words[b + k]) return false;
  }
  return true;
}

// Hash of the n words whose hashes start at `hashes`.
std::uint64_t ngram_hash(const std::uint64_t* hashes, std::size_t n) {
  std::uint64_t h = n;
  for (std::size_t k = 0; k < n; ++k) h = (h ^ hashes[k]) * 0x9E3779B97F4A7C15ULL;
  return mix64(h);
}

}  // namespace

std::pair<std::size_t, std::size_t> find_duplicates(ProbeTable& table,
                                                    const std::vector<std::string_view>& items,
                                                    bool ascii) {
  table.reset(items.size());
  std::size_t elements = 0;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string_view item = items[i];
    const std::uint32_t first =
        table.find_or_insert(hash_bytes(item), static_cast<std::uint32_t>(i),
                             [&](std::uint32_t stored) { return items[stored] == item; });
    if (first != i) {
      ++elements;
      chars += ascii ? item.size() : count_code_points(item);
    }
  }
  return {elements, chars};
}

void Document::reset(std::string_view text) {
  text_ = text;
  have_tokens_ = false;
  have_words_ = false;
  ascii_ = -1;
  table_.trim();
  // A huge document's buffers are not kept for the next ones (as ProbeTable::trim).
  if (scratch_.joined.capacity() > (std::size_t{1} << 24) ||
      scratch_.offsets.capacity() > (std::size_t{1} << 22)) {
    scratch_ = Scratch();
  }
}

bool Document::compute_ascii() const { return is_ascii(text_); }

const std::vector<std::string_view>& Document::tokens() {
  if (!have_tokens_) {
    tokenize_document(text_, raw_);
    // Every token is written and the whitespace ones are overwritten by the next (no branch on
    // the kind, which real text's newlines make a coin toss; no capacity check per token).
    tokens_.resize(raw_.size());
    std::string_view* out = tokens_.data();
    std::size_t kept = 0;
    for (const Token& t : raw_) {
      out[kept] = std::string_view(text_.data() + t.begin, t.end - t.begin);
      kept += static_cast<std::size_t>(t.kind != TokenKind::kWhitespace);
    }
    tokens_.resize(kept);
    have_tokens_ = true;
  }
  return tokens_;
}

const std::vector<std::string_view>& Document::words() {
  if (!have_words_) {
    words_.clear();
    for (const std::string_view t : tokens()) {
      if (has_letter(t)) words_.push_back(t);
    }
    have_words_ = true;
  }
  return words_;
}

// -- core -----------------------------------------------------------------------------------

namespace {

double char_entropy(std::string_view text) {
  std::array<std::uint64_t, 128> ascii{};
  absl::flat_hash_map<char32_t, std::uint64_t> other;
  std::size_t n = 0;
  for (std::size_t i = 0, length = 0; i < text.size(); i += length) {
    const char32_t cp = decode_at(text, i, length);
    ++n;
    if (cp < 128) {
      ++ascii[cp];
    } else {
      ++other[cp];
    }
  }
  if (n == 0) return 0.0;
  std::vector<std::pair<char32_t, std::uint64_t>> counts(other.begin(), other.end());
  std::sort(counts.begin(), counts.end());
  double total = 0.0;  // sum of c * log2(c), ascending code points (ASCII first)
  for (const std::uint64_t c : ascii) {
    if (c == 0) continue;
    const auto x = static_cast<double>(c);
    total += x * std::log2(x);
  }
  for (const auto& [cp, c] : counts) {
    const auto x = static_cast<double>(c);
    total += x * std::log2(x);
  }
  const auto nd = static_cast<double>(n);
  return std::max(0.0, std::log2(nd) - total / nd);
}

// Han, Kana and Hangul: scripts of thousands of symbols, whose prose has 6-9 bits per character.
bool large_alphabet(char32_t cp) {
  return (cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0x3040 && cp <= 0x30FF) ||
         (cp >= 0x3130 && cp <= 0x318F) || (cp >= 0x31F0 && cp <= 0x31FF) ||
         (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
         (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xFF66 && cp <= 0xFF9F) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

// char_entropy minus what the text's scripts allow above the Latin threshold, at least 0
// (docs/quality.md):
// 4.5 bits times the share of large-alphabet code points, plus up to 1 bit for a second
// alphabet (4 times the share of non-ASCII code points, capped at 1).
double adjusted_char_entropy(std::string_view text, double entropy) {
  std::size_t n = 0, large = 0, non_ascii = 0;
  for (std::size_t i = 0, length = 0; i < text.size(); i += length) {
    const char32_t cp = decode_at(text, i, length);
    ++n;
    if (cp >= 128) {
      ++non_ascii;
      if (large_alphabet(cp)) ++large;
    }
  }
  if (n == 0) return entropy;
  const auto nd = static_cast<double>(n);
  const double allowance = 4.5 * (static_cast<double>(large) / nd) +
                           std::min(1.0, 4.0 * (static_cast<double>(non_ascii) / nd));
  return std::max(0.0, entropy - allowance);
}

double ngram_repetition(ProbeTable& table, const std::vector<std::string_view>& words,
                        std::int64_t n_signed, std::int64_t window) {
  const auto n = static_cast<std::size_t>(n_signed);
  std::vector<std::uint64_t> ids;  // word hashes: equal words, equal hashes
  word_hashes(words, ids);
  const std::size_t total = ids.size();
  const std::size_t step =
      window > 0 ? static_cast<std::size_t>(window) : std::max<std::size_t>(1, total);
  std::size_t grams = 0;
  std::size_t repeats = 0;
  for (std::size_t start = 0; start < total; start += step) {
    const std::size_t block = std::min(step, total - start);
    if (block < n) continue;
    const std::size_t count = block - n + 1;
    table.reset(count);
    for (std::size_t i = start; i < start + count; ++i) {
      const std::uint32_t first = table.find_or_insert(
          ngram_hash(ids.data() + i, n), static_cast<std::uint32_t>(i),
          [&](std::uint32_t stored) { return same_words(words, i, stored, n); });
      if (first != i) ++repeats;
    }
    grams += count;
  }
  return ratio(repeats, grams);
}

}  // namespace

void core_metrics(Document& doc, std::int64_t ngram_n, std::int64_t ngram_window, Metrics& out,
                  StopAfter stop) {
  auto stop_after = [&](Metric last) { return stop != nullptr && (*stop)(last); };
  const std::string_view text = doc.text();
  const std::vector<std::string_view>& words = doc.words();
  out[kWords] = static_cast<double>(words.size());
  if (stop_after(kWords)) return;
  out[kCharEntropy] = char_entropy(text);
  if (stop_after(kCharEntropy)) return;
  out[kAdjustedCharEntropy] = adjusted_char_entropy(text, out[kCharEntropy]);
  if (stop_after(kAdjustedCharEntropy)) return;
  out[kNgramRepetition] = ngram_repetition(doc.table(), words, ngram_n, ngram_window);
  if (stop_after(kNgramRepetition)) return;
  std::size_t chars = 0;
  std::size_t visible = 0;
  std::size_t symbols = 0;
  for (std::size_t i = 0, length = 0; i < text.size(); i += length) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {  // ASCII: space, letter or symbol without the table
      length = 1;
      ++chars;
      if (b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F)) continue;
      ++visible;
      if ((b | 0x20) < 'a' || (b | 0x20) > 'z') ++symbols;
      continue;
    }
    const std::uint32_t f = flags(decode_at(text, i, length));
    ++chars;
    if (f & kSpace) continue;
    ++visible;
    if (!(f & (kAlpha | kMark))) ++symbols;
  }
  std::size_t cased = 0;
  std::size_t capitalized = 0;
  for (const std::string_view w : words) {
    const std::uint32_t f = flags(decode_at(w, 0));
    if (f & kUpper) {
      ++cased;
      ++capitalized;
    } else if (f & kLower) {
      ++cased;
    }
  }
  out[kChars] = static_cast<double>(chars);
  out[kSymbolRatio] = ratio(symbols, visible);
  out[kCapitalizedWordRatio] = ratio(capitalized, cased);
  // Over every word, cased or not: in text whose words are mostly caseless (CJK), the few
  // Latin names and headings do not make it "capitalized".
  out[kCapitalizedWordShare] = ratio(capitalized, words.size());
}

// -- Gopher quality -------------------------------------------------------------------------

void gopher_quality_metrics(Document& doc, Metrics& out) {
  static constexpr std::array<std::string_view, 8> kStopWords = {"the", "be",   "to",   "of",
                                                                 "and", "that", "have", "with"};
  const std::string_view text = doc.text();
  const std::vector<std::string_view>& tokens = doc.tokens();
  std::size_t non_symbol = 0;
  std::size_t non_symbol_chars = 0;
  std::size_t alpha = 0;
  unsigned stop_mask = 0;
  for (const std::string_view t : tokens) {
    if (!all_flag(t, kDtPunct)) {
      ++non_symbol;
      non_symbol_chars += doc.chars(t);
    }
    if (has_letter(t)) ++alpha;
    if (t.size() >= 2 && t.size() <= 4) {
      for (std::size_t k = 0; k < kStopWords.size(); ++k) {
        if (t[0] == kStopWords[k][0] && t == kStopWords[k]) stop_mask |= 1u << k;
      }
    }
  }
  std::size_t lines = 0;
  std::size_t bullets = 0;
  std::size_t ellipsis_lines = 0;
  for_each_splitline(text, [&](std::string_view line) {
    ++lines;
    const std::string_view left = lstrip(line);
    if (left.starts_with("\u2022") || left.starts_with("-")) ++bullets;
    const std::string_view right = rstrip(line);
    if (right.ends_with("...") || right.ends_with("\u2026")) ++ellipsis_lines;
  });
  const std::size_t n_words = tokens.size();
  out[kGopherWords] = static_cast<double>(non_symbol);
  out[kGopherMeanWordLength] = ratio(non_symbol_chars, non_symbol);
  out[kGopherHashRatio] = ratio(count_occurrences(text, "#"), n_words);
  out[kGopherEllipsisRatio] =
      ratio(count_occurrences(text, "...") + count_occurrences(text, "\u2026"), n_words);
  out[kGopherBulletLinesRatio] = ratio(bullets, lines);
  out[kGopherEllipsisLinesRatio] = ratio(ellipsis_lines, lines);
  out[kGopherAlphaWordsRatio] = ratio(alpha, n_words);
  out[kGopherStopWords] = static_cast<double>(internal::popcount64(stop_mask));
}

// -- Gopher repetition: gopher_repetition.cc ---------------------------------------------

// -- FineWeb --------------------------------------------------------------------------------

std::size_t word_count_lower_bound(std::string_view text) {
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t count = 0;
  bool after_space = true;  // the text's start counts as after whitespace
  std::size_t i = 0;
#if defined(__SSE2__)
  // 16 bytes at a time (SSE2 is part of every x86-64 CPU): bit k of `starts` is byte k being
  // printable ASCII (0x21-0x7E: as signed bytes, > 0x20 and not 0x7F) and bit k of `breaks` a word
  // break; a start counts when the byte before it is a break (bit 0: the previous block's last).
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    const __m128i printable = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F)),
                                               _mm_cmpgt_epi8(v, _mm_set1_epi8(0x20)));
    const __m128i breaks_v = ascii_space_bytes(v);
    const auto starts = static_cast<std::uint32_t>(_mm_movemask_epi8(printable));
    const auto breaks = static_cast<std::uint32_t>(_mm_movemask_epi8(breaks_v));
    const std::uint32_t before = ((breaks << 1) | (after_space ? 1u : 0u)) & 0xFFFFu;
    count += static_cast<std::size_t>(internal::popcount64(starts & before));
    after_space = (breaks >> 15) & 1u;
  }
#endif
  for (; i < n; ++i) {
    const unsigned char b = data[i];
    count += static_cast<std::size_t>(after_space && b > 0x20 && b < 0x7F);
    after_space = is_ascii_space(b);  // where the tokenizer splits words
  }
  return count;
}

void fineweb_metrics(Document& doc, std::int64_t short_line_length, Metrics& out, StopAfter stop,
                     double newline_word_ratio_passes_at) {
  const std::string_view text = doc.text();
  std::vector<std::string_view>& lines = doc.scratch().pieces;
  lines.clear();
  std::size_t punct = 0;
  std::size_t short_lines = 0;
  std::size_t newlines = 0;
  auto visit = [&](std::string_view line) {
    if (is_blank(line)) return;
    lines.push_back(line);
    if (flags(decode_before(line, line.size())) & kDtTerminal) ++punct;
    if (short_line_length >= 0 && doc.chars(line) <= static_cast<std::size_t>(short_line_length)) {
      ++short_lines;
    }
  };
  std::size_t start = 0;
  while (start < text.size()) {  // text.split("\n"), a memchr per line
    const void* hit = std::memchr(text.data() + start, '\n', text.size() - start);
    if (hit == nullptr) break;
    const auto i = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
    ++newlines;
    visit(text.substr(start, i - start));
    start = i + 1;
  }
  visit(text.substr(start));
  const std::size_t dup_chars = find_duplicates(doc.table(), lines, doc.ascii()).second;
  out[kFinewebLines] = static_cast<double>(lines.size());
  out[kFinewebLinePunctRatio] = ratio(punct, lines.size());
  out[kFinewebShortLineRatio] = ratio(short_lines, lines.size());
  out[kFinewebDupLineCharRatio] = ratio(dup_chars, doc.chars(text) - newlines);
  if (stop != nullptr && (*stop)(kFinewebDupLineCharRatio)) return;
  if (newlines == 0) {  // 0 / tokens, whatever the tokens
    out[kFinewebNewlineWordRatio] = 0.0;
    return;
  }
  // newlines / tokens <= newlines / bound for any 0 < bound <= tokens (division rounds
  // monotonically), so a bound that passes the rule decides it without tokenizing.
  if (newline_word_ratio_passes_at >= 0.0) {
    const std::size_t bound = word_count_lower_bound(text);
    const double at_most = ratio(newlines, bound);
    if (bound > 0 && at_most <= newline_word_ratio_passes_at) {
      out[kFinewebNewlineWordRatio] = at_most;
      return;
    }
  }
  out[kFinewebNewlineWordRatio] = ratio(newlines, doc.tokens().size());
}

// -- C4 -------------------------------------------------------------------------------------

namespace {

// re.sub(r"\[\d*]|\[edit]|\[citation needed]", "", line)
std::string remove_citations(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '[') {
      out.push_back(line[i++]);
      continue;
    }
    std::size_t j = i + 1;
    std::size_t length = 0;
    while (j < line.size() && (flags(decode_at(line, j, length)) & kReDigit)) j += length;
    if (j < line.size() && line[j] == ']') {
      i = j + 1;
    } else if (line.substr(i).starts_with("[edit]")) {
      i += 6;
    } else if (line.substr(i).starts_with("[citation needed]")) {
      i += 17;
    } else {
      out.push_back(line[i++]);
    }
  }
  return out;
}

// line.lower() projected onto ASCII: every needle is ASCII, and the only code points outside
// ASCII whose lowercase has an ASCII character are U+212A KELVIN SIGN ('k') and U+0130 ('i' +
// U+0307, which can neither end a needle nor be followed by its next character).
void ascii_lower(std::string_view line, std::string& out) {
  out.clear();
  for (std::size_t i = 0, length = 0; i < line.size(); i += length) {
    const char32_t cp = decode_at(line, i, length);
    if (cp < 0x80) {
      out.push_back(cp >= U'A' && cp <= U'Z' ? static_cast<char>(cp - U'A' + U'a')
                                             : static_cast<char>(cp));
    } else {
      out.push_back(cp == 0x212A ? 'k' : '\x80');
    }
  }
}

bool contains_any(std::string_view haystack, std::initializer_list<std::string_view> needles) {
  for (const std::string_view needle : needles) {
    if (haystack.find(needle) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

void c4_pass(std::string_view text, const C4Options& options, double sentence_cap, bool keep_lines,
             C4Pass& out, std::vector<Token>& scratch) {
  out = C4Pass{};
  std::string cited;  // buffers reused from line to line
  std::string lowered;
  for_each_splitline(text, [&](std::string_view raw) {
    ++out.lines;
    std::string_view line = strip(raw);
    std::size_t words = 0;
    bool too_long = false;
    for_each_whitespace_word(line, [&](std::string_view word) {
      ++words;
      // Bytes bound code points from above: count only words that might be too long.
      if (options.max_word_length &&
          static_cast<std::int64_t>(word.size()) > *options.max_word_length &&
          static_cast<std::int64_t>(count_code_points(word)) > *options.max_word_length) {
        too_long = true;
      }
    });
    if (too_long) {
      ++out.too_long_word;
      return;
    }
    if (options.remove_citations && line.find('[') != std::string_view::npos) {
      cited = remove_citations(line);
      line = cited;
    }
    if (options.terminal_punct) {
      const bool ends = line.ends_with('.') || line.ends_with('?') || line.ends_with('!') ||
                        line.ends_with('"') || line.ends_with('\'');
      if (!ends || line.ends_with("...")) {
        ++out.no_terminal_punct;
        return;
      }
    }
    if (options.min_words_per_line &&
        static_cast<std::int64_t>(words) < *options.min_words_per_line) {
      ++out.too_few_words;
      return;
    }
    if (options.lorem_ipsum || options.javascript || options.policy) ascii_lower(line, lowered);
    if (options.lorem_ipsum && lowered.find("lorem ipsum") != std::string::npos) {
      ++out.lorem_ipsum;
      if (out.first_drop == C4Pass::Drop::kNone) out.first_drop = C4Pass::Drop::kLoremIpsum;
      return;
    }
    if (options.javascript && lowered.find("javascript") != std::string::npos) {
      ++out.javascript;
      return;
    }
    if (options.curly_bracket && line.find('{') != std::string_view::npos) {
      ++out.curly_bracket;
      if (out.first_drop == C4Pass::Drop::kNone) out.first_drop = C4Pass::Drop::kCurlyBracket;
      return;
    }
    if (options.policy &&
        contains_any(lowered, {"terms of use", "privacy policy", "cookie policy", "uses cookies",
                               "use of cookies", "use cookies"})) {
      ++out.policy;
      return;
    }
    if (static_cast<double>(out.sentences) < sentence_cap) {
      out.sentences += count_sentences(line, scratch);
    }
    ++out.kept;
    if (keep_lines) out.kept_lines.emplace_back(line);
  });
}

void c4_metrics(const C4Pass& pass, Metrics& out) {
  out[kC4Lines] = static_cast<double>(pass.lines);
  out[kC4KeptLines] = static_cast<double>(pass.kept);
  out[kC4Sentences] = static_cast<double>(pass.sentences);
  out[kC4LoremIpsumLines] = static_cast<double>(pass.lorem_ipsum);
  out[kC4CurlyBracketLines] = static_cast<double>(pass.curly_bracket);
  out[kC4LinesTooLongWord] = static_cast<double>(pass.too_long_word);
  out[kC4LinesNoTerminalPunct] = static_cast<double>(pass.no_terminal_punct);
  out[kC4LinesTooFewWords] = static_cast<double>(pass.too_few_words);
  out[kC4LinesJavascript] = static_cast<double>(pass.javascript);
  out[kC4LinesPolicy] = static_cast<double>(pass.policy);
}

std::string join_kept_lines(const std::vector<std::string>& kept_lines) {
  std::string joined;
  for (std::size_t i = 0; i < kept_lines.size(); ++i) {
    if (i != 0) joined.push_back('\n');
    joined.append(kept_lines[i]);
  }
  return std::string(strip(joined));
}

}  // namespace luminamoon::data::quality_internal
