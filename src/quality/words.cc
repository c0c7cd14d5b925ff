// spaCy's English tokenizer without regular expressions: affix loop, infixes, URL matcher,
// exceptions and the special-case matcher; plus the Sentencizer count. Each function mirrors the
// function of the same name in fallbacks/words.py (byte offsets here, code points there).
#include "quality/internal/words.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/little_endian.h"
#include "luminamoon/data/common/xxh3.h"
#include "quality/internal/tables.h"
#include "quality/internal/text.h"

namespace luminamoon::data::quality_internal {
namespace {

using Span = std::pair<std::size_t, std::size_t>;  // [begin, end) byte offsets

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

std::uint32_t flags_at(std::string_view text, std::size_t i) { return flags(decode_at(text, i)); }

// Short keys: XXH3 is several times faster than the default string hash here.
struct ShortStringHash {
  std::size_t operator()(std::string_view s) const {
    return static_cast<std::size_t>(xxh3_64(s.data(), s.size()));
  }
};
using SpecialMap = absl::flat_hash_map<std::string_view, const SpecialCase*, ShortStringHash>;

const SpecialMap& special_cases() {
  static const SpecialMap map = [] {
    SpecialMap m;
    m.reserve(kSpecialCaseCount);
    for (std::size_t i = 0; i < kSpecialCaseCount; ++i)
      m.emplace(kSpecialCases[i].key, &kSpecialCases[i]);
    return m;
  }();
  return map;
}

// Matcher patterns by their first token; a one-byte ASCII first token (punctuation, single
// letters: the commonest candidates) is found by its byte, without hashing it.
//
// A group also keeps the first bytes of its patterns' second pieces: a token followed by a
// whitespace token, or by a token starting with any other byte, can only match the group's
// one-piece pattern (keys are unique, so there is at most one), and its other patterns (53 for
// ':', 18 for '\'') are not visited.
struct PatternGroup {
  const SpecialCase* single = nullptr;  // the pattern that is this one token, if any
  std::vector<const SpecialCase*> longer;
  std::array<std::uint64_t, 4> second_bytes{};  // bit set: first byte of a `longer` piece 2

  bool may_continue_with(unsigned char byte) const {
    return ((second_bytes[byte >> 6] >> (byte & 63)) & 1) != 0;
  }
};
using PatternMap = absl::flat_hash_map<std::string_view, PatternGroup, ShortStringHash>;

struct PatternIndex {
  PatternMap map;
  std::array<const PatternGroup*, 128> by_byte{};
  const PatternGroup* find(std::string_view first) const {
    const auto byte = static_cast<unsigned char>(first[0]);
    if (first.size() == 1 && byte < 0x80) return by_byte[byte];
    const auto it = map.find(first);
    return it == map.end() ? nullptr : &it->second;
  }
};

const PatternIndex& matcher_patterns() {
  static const PatternIndex index = [] {
    PatternIndex x;
    for (std::size_t i = 0; i < kMatcherPatternCount; ++i) {
      const SpecialCase& p = kMatcherPatterns[i];
      PatternGroup& group = x.map[std::string_view(p.key, p.pieces[0])];
      if (p.piece_count == 1) {
        group.single = &p;
      } else {
        group.longer.push_back(&p);
        const auto second = static_cast<unsigned char>(p.key[p.pieces[0]]);
        group.second_bytes[second >> 6] |= std::uint64_t{1} << (second & 63);
      }
    }
    for (const auto& [first, group] : x.map) {
      const auto byte = static_cast<unsigned char>(first[0]);
      if (first.size() == 1 && byte < 0x80) x.by_byte[byte] = &group;
    }
    return x;
  }();
  return index;
}

using internal::load_le;
using internal::load_le_prefix;

// The first min(8, size) bytes of `s` as a little-endian number, zero-extended. `limit` is
// where the readable bytes after s.data() end (the end of the text `s` lies in): with 8 of them,
// one load and a mask, without a branch on the length (this runs for every word, and word
// lengths are not predictable); otherwise byte by byte. Both give the same number.
// (Any function of the key works for its users: they hash their keys and lookups the same way.)
constexpr std::array<std::uint64_t, 9> kLowBytes = [] {  // k: the low k bytes set
  std::array<std::uint64_t, 9> t{};
  for (unsigned k = 1; k <= 8; ++k) t[k] = ~std::uint64_t{0} >> (8 * (8 - k));
  return t;
}();

std::uint64_t head(std::string_view s, const char* limit) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = std::min<std::size_t>(s.size(), 8);
  return load_le_prefix(p, static_cast<std::size_t>(limit - s.data())) & kLowBytes[n];
}

// The byte length and the first eight bytes, mixed.
std::uint64_t key_hash(std::string_view s, const char* limit) {
  return (head(s, limit) ^ (s.size() * 0x9E3779B97F4A7C15ULL)) * 0xD6E8FEB86659FD93ULL;
}

// The end of `text`'s bytes: what head() may read up to for a piece of `text`.
const char* end_of(std::string_view text) { return text.data() + text.size(); }

// A Bloom filter over the exceptions and one over the first tokens of the matcher's patterns
// (two bits per key in 2^16 each), hashed from the byte length and the first eight bytes: most
// words are rejected without computing a full hash. The two share one hash and one table, the
// bit pairs of both side by side, so one lookup answers both questions for a word.
class SpecialFilter {
 public:
  struct Hits {
    bool special;  // may be an exception (kSpecialCases)
    bool pattern;  // may start a matcher pattern (kMatcherPatterns)
  };
  static constexpr unsigned kSpecial = 0;
  static constexpr unsigned kPattern = 1;

  // A key longer than any exception is neither. `limit`: as for head().
  Hits lookup(std::string_view s, const char* limit) const {
    if (s.empty() || s.size() > kMaxSpecialKeyBytes) return Hits{false, false};
    const std::uint64_t h = key_hash(s, limit);
    const auto a = static_cast<std::uint32_t>(h >> 48);
    const auto b = static_cast<std::uint32_t>(h >> 32) & 0xFFFF;
    const std::uint64_t both =
        (bits_[a >> 5] >> (2 * (a & 31))) & (bits_[b >> 5] >> (2 * (b & 31)));
    return Hits{((both >> kSpecial) & 1) != 0, ((both >> kPattern) & 1) != 0};
  }
  bool may_be_special(std::string_view s, const char* limit) const {
    return lookup(s, limit).special;
  }
  // A one-byte ASCII token's `pattern` answer, from a table (punctuation after a word).
  bool ascii_byte_may_start_pattern(unsigned char c) const { return pattern_byte_[c]; }

  void add(std::string_view s, unsigned which) {
    const std::uint64_t h = key_hash(s, end_of(s));
    set(static_cast<std::uint32_t>(h >> 48), which);
    set(static_cast<std::uint32_t>(h >> 32) & 0xFFFF, which);
  }
  void finish() {
    for (unsigned c = 0; c < 128; ++c) {
      const char byte = static_cast<char>(c);
      pattern_byte_[c] = lookup(std::string_view(&byte, 1), &byte + 1).pattern;
    }
  }

 private:
  void set(std::uint32_t bit, unsigned which) {
    bits_[bit >> 5] |= std::uint64_t{1} << (2 * (bit & 31) + which);
  }

  // Bit pairs (exception, pattern start) for each of the 2^16 positions, 32 pairs to a word: one
  // load per position answers both.
  std::array<std::uint64_t, 2048> bits_{};
  std::array<bool, 128> pattern_byte_{};
};

SpecialFilter build_special_filter() {
  SpecialFilter f;
  for (std::size_t i = 0; i < kSpecialCaseCount; ++i) {
    f.add(kSpecialCases[i].key, SpecialFilter::kSpecial);
  }
  for (std::size_t i = 0; i < kMatcherPatternCount; ++i) {
    f.add(std::string_view(kMatcherPatterns[i].key, kMatcherPatterns[i].pieces[0]),
          SpecialFilter::kPattern);
  }
  f.finish();
  return f;
}

// Built when the library is loaded (as kFlagTable is; it reads only constant tables), so a
// lookup has no initialisation check: a function-local static's guard, tested on every word and
// token, was ~1% of the tokenizer's instructions.
const SpecialFilter kSpecialFilter = build_special_filter();

const SpecialFilter& special_filter() { return kSpecialFilter; }

// The exception of `piece` once the filter said it may be one.
const SpecialCase* find_special_in_map(std::string_view piece) {
  const SpecialMap& map = special_cases();
  const auto it = map.find(piece);
  return it == map.end() ? nullptr : it->second;
}

// `limit`: as for head().
const SpecialCase* find_special(std::string_view piece, const char* limit) {
  if (!special_filter().may_be_special(piece, limit)) return nullptr;
  return find_special_in_map(piece);
}

// Whether a[0, n) == b[0, n) for 1 <= n <= 24, from loads that overlap to cover the n bytes
// (no call: a word's bytes are compared on every cache hit).
bool equal_short(const char* a, const char* b, std::size_t n) {
  const auto* x = reinterpret_cast<const unsigned char*>(a);
  const auto* y = reinterpret_cast<const unsigned char*>(b);
  if (n >= 8) {
    const std::size_t mid = n > 16 ? 8 : 0;  // 17-24 bytes: [0, 8), [8, 16), [n - 8, n)
    return ((load_le<std::uint64_t>(x) ^ load_le<std::uint64_t>(y)) |
            (load_le<std::uint64_t>(x + mid) ^ load_le<std::uint64_t>(y + mid)) |
            (load_le<std::uint64_t>(x + n - 8) ^ load_le<std::uint64_t>(y + n - 8))) == 0;
  }
  if (n >= 4) {
    return ((load_le<std::uint32_t>(x) ^ load_le<std::uint32_t>(y)) |
            (load_le<std::uint32_t>(x + n - 4) ^ load_le<std::uint32_t>(y + n - 4))) == 0;
  }
  return x[0] == y[0] && x[n >> 1] == y[n >> 1] && x[n - 1] == y[n - 1];
}

// The tokens of words that took the general path of split_word (affixes, infixes, URLs), by the
// word's bytes, so that a word seen again is replayed instead of split again (half of those
// words repeat within a few thousand words of real text). This is exact: split_word reads only
// the word's own bytes text[b, e) (every rule is guarded at the word's edges), and its tokens'
// kinds are the emitter's (the first the word's kind, the rest glued), so the tokens, and which
// of them may start a matcher pattern, are a function of the word's bytes alone. One slot per
// hash (direct-mapped): a word replaces whatever its slot held.
class WordCache {
 public:
  static constexpr std::size_t kMaxBytes = 24;   // longer words are not kept
  static constexpr std::size_t kMaxTokens = 12;  // nor words of more tokens
  struct Slot {
    std::array<char, kMaxBytes> key{};
    std::uint8_t size = 0;       // bytes of `key`; 0: empty (a word is never empty)
    std::uint8_t count = 0;      // tokens
    std::uint16_t patterns = 0;  // bit k: token k may start a matcher pattern
    std::array<std::uint8_t, kMaxTokens> lengths{};
    bool holds(std::string_view word) const {
      return size == word.size() && equal_short(key.data(), word.data(), size);
    }
  };

  // The slot of `word`, or nullptr when the word is too long to be kept.
  Slot* slot(std::string_view word, const char* limit) {
    if (word.size() > kMaxBytes) return nullptr;
    if (slots_.empty()) slots_.resize(std::size_t{1} << kSlotBits);
    std::uint64_t h = key_hash(word, limit);
    if (word.size() > 8) {  // the last eight bytes too, for words that share their first eight
      h ^= load_le<std::uint64_t>(reinterpret_cast<const unsigned char*>(word.data()) +
                                  word.size() - 8) *
           0x9E3779B97F4A7C15ULL;
    }
    return &slots_[(h * 0xD6E8FEB86659FD93ULL) >> (64 - kSlotBits)];
  }

 private:
  static constexpr unsigned kSlotBits = 11;  // 2048 slots of 40 bytes
  std::vector<Slot> slots_;
};

// Appends a word's tokens, and notes which of them may start a matcher pattern (the filter's
// answer for the token: apply_matcher looks only at those).
class Emitter {
 public:
  Emitter(std::string_view text, std::vector<Token>& out, std::vector<std::size_t>& pattern_starts,
          TokenKind first)
      : text_(text), out_(out), pattern_starts_(pattern_starts), kind_(first) {}
  void emit(std::size_t begin, std::size_t end) {
    const auto byte = static_cast<unsigned char>(text_[begin]);
    const bool pattern =
        (end - begin == 1 && byte < 0x80)
            ? special_filter().ascii_byte_may_start_pattern(byte)
            : special_filter().lookup(text_.substr(begin, end - begin), end_of(text_)).pattern;
    emit_known(begin, end, pattern);
  }
  // The next token starts a word of this kind (the word's later tokens are glued).
  void start_word(TokenKind first) { kind_ = first; }
  // A token whose filter answer the caller already has.
  void emit_known(std::size_t begin, std::size_t end, bool may_start_pattern) {
    if (may_start_pattern) pattern_starts_.push_back(out_.size());
    out_.push_back(Token{begin, end, kind_});
    kind_ = TokenKind::kGlued;
  }
  void emit_special(const SpecialCase& special, std::size_t at) {
    for (std::size_t k = 0; k < special.piece_count; ++k) {
      emit(at, at + special.pieces[k]);
      at += special.pieces[k];
    }
  }
  // The tokens emitted so far.
  std::size_t size() const { return out_.size(); }
  // Keeps in `slot` the tokens of `word` (= text[b, ...)), emitted from token `first` on. A
  // replay rebuilds them from their lengths alone, so they are kept only when they tile the word
  // exactly, each starting where the one before ended; otherwise (or when there are more tokens
  // than a slot holds) the slot is left empty.
  void record(WordCache::Slot& slot, std::string_view word, std::size_t b,
              std::size_t first) const {
    const std::size_t count = out_.size() - first;
    std::size_t at = b;
    for (std::size_t k = first; k < out_.size() && count <= WordCache::kMaxTokens; ++k) {
      if (out_[k].begin != at) break;
      at = out_[k].end;
    }
    if (count > WordCache::kMaxTokens || at != b + word.size()) {
      slot.size = 0;
      return;
    }
    std::memcpy(slot.key.data(), word.data(), word.size());
    slot.size = static_cast<std::uint8_t>(word.size());
    slot.count = static_cast<std::uint8_t>(count);
    for (std::size_t k = 0; k < count; ++k) {
      slot.lengths[k] = static_cast<std::uint8_t>(out_[first + k].end - out_[first + k].begin);
    }
    slot.patterns = 0;
    for (auto it = pattern_starts_.rbegin(); it != pattern_starts_.rend() && *it >= first; ++it) {
      slot.patterns = static_cast<std::uint16_t>(slot.patterns | (1u << (*it - first)));
    }
  }
  // Emits the tokens a slot keeps, from `at` on.
  void replay(const WordCache::Slot& slot, std::size_t at) {
    for (std::size_t k = 0; k < slot.count; ++k) {
      emit_known(at, at + slot.lengths[k], ((slot.patterns >> k) & 1) != 0);
      at += slot.lengths[k];
    }
  }

 private:
  std::string_view text_;
  std::vector<Token>& out_;
  std::vector<std::size_t>& pattern_starts_;
  TokenKind kind_;
};

// -- affixes --------------------------------------------------------------------------------

std::size_t find_prefix(std::string_view text, std::size_t b, std::size_t e) {
  std::size_t length = 0;
  const char32_t c = decode_at(text, b, length);
  if (c == U'+') return (b + 1 < e && is_ascii_digit(text[b + 1])) ? 0 : 1;
  if (flags(c) & kSpPrefix) return length;
  if (c == U'.') {
    std::size_t j = b + 1;
    while (j < e && text[j] == '.') ++j;
    return j - b >= 2 ? j - b : 0;
  }
  const std::string_view rest = text.substr(b, e - b);
  if (rest.starts_with("US$")) return 3;
  if (rest.starts_with("C$") || rest.starts_with("A$")) return 2;
  return 0;
}

bool ends_with(std::string_view text, std::size_t b, std::size_t e, std::string_view suffix) {
  return e - b >= suffix.size() && text.substr(e - suffix.size(), suffix.size()) == suffix;
}

// Unit and currency suffixes (spaCy: after an ASCII digit), grouped by their last byte.
const std::array<std::vector<std::string_view>, 256>& digit_suffixes() {
  static const auto table = [] {
    std::array<std::vector<std::string_view>, 256> t;
    auto add = [&](const char* s) {
      const std::string_view v(s);
      t[static_cast<unsigned char>(v.back())].push_back(v);
    };
    for (std::size_t i = 0; i < kCurrencySuffixCount; ++i) add(kCurrencySuffixes[i]);
    for (std::size_t i = 0; i < kUnitSuffixCount; ++i) add(kUnitSuffixes[i]);
    return t;
  }();
  return table;
}

// The longest spaCy suffix of text[b, e) (regex search finds the earliest start).
std::size_t find_suffix(std::string_view text, std::size_t b, std::size_t e) {
  if (e <= b) return 0;
  const std::size_t ls = previous_start(text, e);
  const char32_t last = decode_at(text, ls);
  std::size_t best = (flags(last) & kSpSuffix) ? e - ls : 0;
  if (ls > b) {
    // "'s", "'S", "\u2019s", "\u2019S" and "\u2026\u2026", by their last byte.
    const char tail = text[e - 1];
    if (tail == 's' || tail == 'S') {
      if (text[e - 2] == '\'') {
        best = std::max<std::size_t>(best, 2);
      } else if (ends_with(text, b, e - 1, "\u2019")) {
        best = std::max<std::size_t>(best, 4);
      }
    } else if (tail == '\xA6' && ends_with(text, b, e, "\u2026\u2026")) {
      best = std::max<std::size_t>(best, 6);
    }
  }
  if (last == U'.') {
    std::size_t j = e - 1;
    while (j > b && text[j - 1] == '.') --j;
    if (e - j >= 2) best = std::max(best, e - j);
    if (ls > b) {
      const std::size_t ps = previous_start(text, ls);
      const char32_t prev = decode_at(text, ps);
      if (flags(prev) & kSpDotAfter) best = std::max<std::size_t>(best, 1);
      if (ps > b) {
        const char32_t prev2 = decode_before(text, ps);
        if (flags(prev) & flags(prev2) & kSpUpper) best = std::max<std::size_t>(best, 1);
        if (prev2 == U'\u00B0' && (prev == U'F' || prev == U'f' || prev == U'C' || prev == U'c' ||
                                   prev == U'K' || prev == U'k')) {
          best = std::max<std::size_t>(best, 1);
        }
      }
    }
  } else if (last == U'+' && ls > b && is_ascii_digit(text[ls - 1])) {
    best = std::max<std::size_t>(best, 1);
  }
  for (const std::string_view suffix : digit_suffixes()[static_cast<unsigned char>(text[e - 1])]) {
    const std::size_t k = suffix.size();
    if (k > best && e - b > k && is_ascii_digit(text[e - k - 1]) && ends_with(text, b, e, suffix)) {
      best = k;
    }
  }
  return best;
}

constexpr std::array<std::string_view, 7> kHyphens = {"-",   "\u2013",       "\u2014", "--",
                                                      "---", "\u2014\u2014", "~"};

// The ASCII characters an infix can start with (no ASCII character is an icon).
constexpr std::array<bool, 128> kInfixStart = [] {
  std::array<bool, 128> t{};
  for (const char c : std::string_view(".+-*^,~:<>=/")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// The same set as byte ranges, for skip_to_infix_candidate's 16-byte masks.
constexpr bool is_infix_start_range(unsigned char c) {
  return (c >= '*' && c <= '/') || c == ':' || (c >= '<' && c <= '>') || c == '^' || c == '~';
}
static_assert([] {
  for (unsigned c = 0; c < 128; ++c) {
    if (kInfixStart[c] != is_infix_start_range(static_cast<unsigned char>(c))) return false;
  }
  return true;
}());

// The first i' >= i before `e` where text[i'] may start an infix (a byte of kInfixStart, or a
// non-ASCII character's first byte), or e; 16 bytes at a time (SSE2) while they lie inside the
// word, then byte by byte.
std::size_t skip_to_infix_candidate(std::string_view text, std::size_t i, std::size_t e) {
#if defined(__SSE2__)
  for (; i + 16 <= e; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    auto in = [&](char lo, char hi) {  // lo <= v <= hi (signed: non-ASCII bytes are below)
      return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                           _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
    };
    const __m128i infix =
        _mm_or_si128(_mm_or_si128(in('*', '/'), in('<', '>')),
                     _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('^'))),
                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('~'))));
    const auto stops = static_cast<std::uint32_t>(
        _mm_movemask_epi8(_mm_or_si128(infix, _mm_cmplt_epi8(v, _mm_setzero_si128()))));
    if (stops != 0) return i + static_cast<std::size_t>(std::countr_zero(stops));
  }
#endif
  for (; i < e; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80 || kInfixStart[byte]) return i;
  }
  return e;
}

// End of the infix at text[i] inside the middle text[mb, me), or 0 (spaCy's alternatives in
// order).
std::size_t infix_end(std::string_view text, std::size_t mb, std::size_t me, std::size_t i) {
  std::size_t length = 0;
  const char32_t c = decode_at(text, i, length);
  if (c == U'.' && i + 1 < me && text[i + 1] == '.') {
    std::size_t j = i + 2;
    while (j < me && text[j] == '.') ++j;
    return j;
  }
  if (c == U'\u2026') return i + length;
  const std::uint32_t c_flags = flags(c);
  if (c_flags & kSpIcon) return i + length;
  // Every rule below needs c to be ASCII or one of the hyphens U+2013 / U+2014: other non-ASCII
  // characters (letters, in most words that reach here) are decided without their neighbours.
  if (c >= 0x80 && c != U'\u2013' && c != U'\u2014') return 0;
  if (i == mb) return 0;
  const char32_t prev = decode_before(text, i);
  const std::uint32_t prev_flags = flags(prev);
  const bool has_next = i + length < me;
  const char32_t next = has_next ? decode_at(text, i + length) : 0;
  if ((c == U'+' || c == U'-' || c == U'*' || c == U'^') && is_ascii_digit(prev) && has_next &&
      (is_ascii_digit(next) || next == U'-')) {
    return i + 1;
  }
  if (c == U'.' && (prev_flags & (kSpLower | kSpQuote)) && has_next &&
      (flags(next) & (kSpUpper | kSpQuote))) {
    return i + 1;
  }
  if (c == U',' && (prev_flags & kSpAlpha) && has_next && (flags(next) & kSpAlpha)) return i + 1;
  if ((prev_flags & kSpAlpha) || is_ascii_digit(prev)) {
    const std::string_view rest = text.substr(i, me - i);
    // Every hyphen starts with one of these four characters.
    if (c == U'-' || c == U'~' || c == U'\u2013' || c == U'\u2014') {
      for (const std::string_view hyphen : kHyphens) {
        if (hyphen[0] != rest[0]) continue;
        const std::size_t j = i + hyphen.size();
        if (rest.starts_with(hyphen) && j < me && (flags_at(text, j) & kSpAlpha)) return j;
      }
    }
    if ((c == U':' || c == U'<' || c == U'>' || c == U'=' || c == U'/') && has_next &&
        (flags(next) & kSpAlpha)) {
      return i + 1;
    }
  }
  return 0;
}

// -- spaCy's URL_MATCH ----------------------------------------------------------------------

constexpr bool is_ascii_host_char(char32_t c) {
  return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9') ||
         c == U'_' || c == U'-' || c == U'.';
}

bool is_host_char(char32_t c) {
  if (c < 0x80) return is_ascii_host_char(c);
  return c <= 0xFFFF || (flags(c) & (kSpLower | kReDigit)) != 0;
}

bool is_label_char(char32_t c) {  // [A-Za-z0-9\u00a1-\uffff]
  if (c < 0x80) return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || is_ascii_digit(c);
  return c >= 0xA1 && c <= 0xFFFF;
}

bool is_re_digit(char32_t c) { return (flags(c) & kReDigit) != 0; }

bool is_domain(std::string_view host) {
  // labels '.' ... '.' tld; every label 1-64 code points, the tld 2-63 spaCy-lowercase ones.
  const std::size_t last_dot = host.rfind('.');
  if (last_dot == std::string_view::npos) return false;
  const std::string_view tld = host.substr(last_dot + 1);
  std::size_t tld_chars = 0;
  for (std::size_t i = 0, length = 0; i < tld.size(); i += length) {
    if (!(flags(decode_at(tld, i, length)) & kSpLower)) return false;
    if (++tld_chars > 63) return false;
  }
  if (tld_chars < 2) return false;
  std::size_t start = 0;
  while (start <= last_dot) {
    std::size_t end = host.find('.', start);
    const std::string_view label = host.substr(start, end - start);
    if (label.empty()) return false;
    std::size_t chars = 0;
    char32_t first = 0;
    char32_t last = 0;
    for (std::size_t i = 0, length = 0; i < label.size(); i += length) {
      const char32_t c = decode_at(label, i, length);
      if (!is_label_char(c) && c != U'_' && c != U'-') return false;
      if (chars++ == 0) first = c;
      last = c;
      if (chars > 64) return false;
    }
    if (!is_label_char(first) || !is_label_char(last)) return false;
    start = end + 1;
  }
  return true;
}

// An IPv4 address is at most 15 code points; longer hosts are never one.
struct ShortString {
  std::array<char32_t, 16> c{};
  std::size_t n = 0;
};

bool dotted_digit_groups(const ShortString& s, std::size_t i, int groups) {
  for (int g = 0; g < groups; ++g) {
    if (!(i + 1 < s.n && s.c[i] == U'.' && is_re_digit(s.c[i + 1]))) return false;
    i += 2;
    for (int k = 0; k < 2; ++k) {
      if (i < s.n && is_re_digit(s.c[i])) ++i;
    }
  }
  return true;
}

bool starts_with(const ShortString& s, std::u32string_view prefix) {
  return s.n >= prefix.size() && std::u32string_view(s.c.data(), prefix.size()) == prefix;
}

enum class Octet { kFirst, kMiddle, kLast };

bool is_octet(const char32_t* o, std::size_t n, Octet position) {
  if (n == 0) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_re_digit(o[i])) return false;
  }
  auto in = [](char32_t c, std::u32string_view set) {
    return set.find(c) != std::u32string_view::npos;
  };
  switch (position) {
    case Octet::kFirst:  // [1-9]\d?|1\d\d|2[01]\d|22[0-3]
      return (n <= 2 && in(o[0], U"123456789")) || (n == 3 && o[0] == U'1') ||
             (n == 3 && o[0] == U'2' && in(o[1], U"01")) ||
             (n == 3 && o[0] == U'2' && o[1] == U'2' && in(o[2], U"0123"));
    case Octet::kMiddle:  // 1?\d{1,2}|2[0-4]\d|25[0-5]
      return n <= 2 || (n == 3 && o[0] == U'1') || (n == 3 && o[0] == U'2' && in(o[1], U"01234")) ||
             (n == 3 && o[0] == U'2' && o[1] == U'5' && in(o[2], U"012345"));
    case Octet::kLast:  // [1-9]\d?|1\d\d|2[0-4]\d|25[0-4]
      return (n <= 2 && in(o[0], U"123456789")) || (n == 3 && o[0] == U'1') ||
             (n == 3 && o[0] == U'2' && in(o[1], U"01234")) ||
             (n == 3 && o[0] == U'2' && o[1] == U'5' && in(o[2], U"01234"));
  }
  return false;
}

bool is_ip(std::string_view host) {
  ShortString s;
  for (std::size_t i = 0, length = 0; i < host.size(); i += length) {
    if (s.n == 15) return false;
    s.c[s.n++] = decode_at(host, i, length);
  }
  if (starts_with(s, U"10") && dotted_digit_groups(s, 2, 3)) return false;
  if (starts_with(s, U"127") && dotted_digit_groups(s, 3, 3)) return false;
  if ((starts_with(s, U"169.254") || starts_with(s, U"192.168")) && dotted_digit_groups(s, 7, 2)) {
    return false;
  }
  if (starts_with(s, U"172.") && s.n >= 6) {
    const char32_t a = s.c[4];
    const char32_t b = s.c[5];
    if (((a == U'1' && b >= U'6' && b <= U'9') || (a == U'2' && is_re_digit(b)) ||
         (a == U'3' && (b == U'0' || b == U'1'))) &&
        dotted_digit_groups(s, 6, 2)) {
      return false;
    }
  }
  std::array<std::size_t, 5> cut{};  // part k is s[cut[k], cut[k+1] - 1)
  std::size_t parts = 1;
  for (std::size_t i = 0; i < s.n; ++i) {
    if (s.c[i] == U'.') {
      if (parts == 4) return false;
      cut[parts++] = i + 1;
    }
  }
  if (parts != 4) return false;
  cut[4] = s.n + 1;
  const Octet order[4] = {Octet::kFirst, Octet::kMiddle, Octet::kMiddle, Octet::kLast};
  for (std::size_t k = 0; k < 4; ++k) {
    if (!is_octet(s.c.data() + cut[k], cut[k + 1] - 1 - cut[k], order[k])) return false;
  }
  return true;
}

// is_host_char of the ASCII characters, as a table: the host scan's per-character range tests
// mispredicted (host_and_rest was 4% of the tokenizer's samples, mostly that loop).
constexpr std::array<bool, 128> kHostAscii = [] {
  std::array<bool, 128> t{};
  for (unsigned c = 0; c < 128; ++c) t[c] = is_ascii_host_char(static_cast<char32_t>(c));
  return t;
}();

bool host_and_rest(std::string_view m, std::size_t p) {
  const std::size_t n = m.size();
  std::size_t q = p;
  std::size_t length = 0;
  while (q < n) {
    const auto byte = static_cast<unsigned char>(m[q]);
    if (byte < 0x80) {
      if (!kHostAscii[byte]) break;
      ++q;
    } else {
      if (!is_host_char(decode_at(m, q, length))) break;
      q += length;
    }
  }
  if (q == p) return false;
  // What follows the host is checked first: it is cheaper than the host's own tests, and most
  // words fail it (both are required, and neither has side effects).
  auto is_path_start = [](char c) { return c == '/' || c == '?' || c == '#'; };
  if (q != n && !is_path_start(m[q])) {
    if (m[q] != ':') return false;
    std::size_t r = q + 1;
    std::size_t digits = 0;
    while (r < n && is_re_digit(decode_at(m, r, length))) {
      r += length;
      ++digits;
    }
    if (!(digits >= 2 && digits <= 5 && (r == n || is_path_start(m[r])))) return false;
  }
  // Both host forms (domain, IPv4 address) contain a '.'.
  const std::string_view host = m.substr(p, q - p);
  if (host.find('.') == std::string_view::npos) return false;
  return is_ip(host) || is_domain(host);
}

bool url_match(std::string_view m) {
  // Both host forms (domain, IPv4 address) contain a '.' (memchr: a byte loop's exit
  // mispredicts at a word's varying length).
  if (std::memchr(m.data(), '.', m.size()) == nullptr) return false;
  std::array<std::size_t, 2> starts{0, 0};
  std::size_t start_count = 1;
  const std::size_t k = m.find("://");
  if (k != std::string_view::npos && count_code_points(m.substr(0, k)) >= 2) {
    bool scheme = true;
    for (std::size_t i = 0, length = 0; i < k && scheme; i += length) {
      const char32_t c = decode_at(m, i, length);
      scheme = (flags(c) & kReWord) || c == U'+' || c == U'-' || c == U'.';
    }
    if (scheme) starts[start_count++] = k + 3;
  }
  for (std::size_t s = 0; s < start_count; ++s) {
    const std::size_t a = starts[s];
    if (host_and_rest(m, a)) return true;
    for (std::size_t at = m.find('@', a + 1); at != std::string_view::npos;
         at = m.find('@', at + 1)) {
      if (host_and_rest(m, at + 1)) return true;
    }
  }
  return false;
}

// -- the tokenizer --------------------------------------------------------------------------

// `known_plain`: the caller already found that text[b, e) is not an exception.
void split_middle(std::string_view text, std::size_t b, std::size_t e, Emitter& emit,
                  bool known_plain) {
  const std::string_view middle = text.substr(b, e - b);
  if (const SpecialCase* special = known_plain ? nullptr : find_special(middle, end_of(text))) {
    emit.emit_special(*special, b);
    return;
  }
  if (url_match(middle)) {
    emit.emit(b, e);
    return;
  }
  std::size_t start = b;
  std::size_t i = b;
  while (i < e) {
    i = skip_to_infix_candidate(text, i, e);
    if (i == e) break;
    const std::size_t j = infix_end(text, b, e, i);
    if (j == 0) {
      std::size_t length = 0;
      decode_at(text, i, length);
      i += length;
      continue;
    }
    if (i != b) {  // spaCy ignores an infix at the very start of the middle
      if (i != start) emit.emit(start, i);
      emit.emit(i, j);
      start = j;
    }
    i = j;
  }
  if (start < e) emit.emit(start, e);
}

// spaCy's affix loop, then the infixes and the URL matcher on what is left (split_middle), for
// a word that is not an exception. Kept out of line: inlined into the word loop (as GCC 12 chose
// once that loop grew), it made the whole tokenizer run 14% more instructions (callgrind).
[[gnu::noinline]] void split_by_rules(std::string_view text, std::size_t b, std::size_t e,
                                      Emitter& emit, std::vector<Span>& prefixes,
                                      std::vector<Span>& suffixes) {
  prefixes.clear();
  suffixes.clear();
  // A lookup is a pure function of [b, e): the range last found not to be an exception is not
  // looked up again (spaCy looks it up up to three times).
  std::size_t plain_b = b;
  std::size_t plain_e = e;
  std::size_t last_size = static_cast<std::size_t>(-1);
  while (b < e && e - b != last_size) {
    if (!(b == plain_b && e == plain_e)) {
      if (find_special(text.substr(b, e - b), end_of(text)) != nullptr) break;
      plain_b = b;
      plain_e = e;
    }
    last_size = e - b;
    const std::size_t pre = find_prefix(text, b, e);
    if (pre != 0 && b + pre < e &&
        find_special(text.substr(b + pre, e - b - pre), end_of(text)) != nullptr) {
      prefixes.emplace_back(b, b + pre);
      b += pre;
      break;
    }
    const std::size_t suf = find_suffix(text, b + pre, e);
    if (suf != 0 && b < e - suf &&
        find_special(text.substr(b, e - suf - b), end_of(text)) != nullptr) {
      suffixes.emplace_back(e - suf, e);
      e -= suf;
      break;
    }
    if (pre != 0) {
      prefixes.emplace_back(b, b + pre);
      b += pre;
    }
    if (suf != 0) {
      suffixes.emplace_back(e - suf, e);
      e -= suf;
    }
  }
  for (const auto& [pb, pe] : prefixes) emit.emit(pb, pe);
  if (b < e) split_middle(text, b, e, emit, b == plain_b && e == plain_e);
  for (auto it = suffixes.rbegin(); it != suffixes.rend(); ++it) emit.emit(it->first, it->second);
}

// The leading run of a word made only of ASCII letters or only of ASCII digits (split_word's
// fast paths need nothing else): where it ends, and whether it is digits. A word that starts
// with neither has an empty run (run_end == the word's start; `digits` is then true, as the byte
// loop leaves it, and unused).
struct WordShape {
  std::size_t run_end;
  bool digits;
};

bool is_ascii_letter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

WordShape word_shape(std::string_view text, std::size_t b, std::size_t e) {
  bool letters = true;
  bool digits = true;
  std::size_t k = b;
  for (; k < e; ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    const bool letter = is_ascii_letter(c);
    const bool digit = c >= '0' && c <= '9';
    if (!(letters && letter) && !(digits && digit)) break;
    letters = letters && letter;
    digits = digits && digit;
  }
  return WordShape{k, digits};
}

// The tokens of the word text[b, e) (its leading letter/digit run is `shape`); `cache` keeps the
// words that take the general rules (nullptr: every word goes through them).
void split_word(std::string_view text, std::size_t b, std::size_t e, WordShape shape, Emitter& emit,
                std::vector<Span>& prefixes, std::vector<Span>& suffixes, WordCache* cache) {
  // One filter lookup answers both "an exception?" and "a pattern's first token?" for the word.
  const SpecialFilter& filter = special_filter();
  const SpecialFilter::Hits hits = filter.lookup(text.substr(b, e - b), end_of(text));
  if (hits.special) {
    if (const SpecialCase* special = find_special_in_map(text.substr(b, e - b))) {
      emit.emit_special(*special, b);
      return;
    }
  }
  // Fast paths for the commonest words, equal to what the general rules below produce (the
  // tokenizer tests check them against spaCy):
  //  * ASCII letters only, or ASCII digits only: no prefix, suffix, infix or URL applies;
  //  * the same plus one of , ; : ! ? ) : that character is the only suffix;
  //  * the same plus '.': a suffix after a digit, a lowercase letter or two uppercase ones,
  //    otherwise part of the word ("A.", "eB.").
  const std::size_t k = shape.run_end;
  const bool digits = shape.digits;
  auto emit_word = [&](std::size_t end) {
    const std::string_view piece = text.substr(b, end - b);
    const SpecialFilter::Hits piece_hits = filter.lookup(piece, end_of(text));
    const SpecialCase* special = piece_hits.special ? find_special_in_map(piece) : nullptr;
    if (special != nullptr) {
      emit.emit_special(*special, b);
    } else {
      emit.emit_known(b, end, piece_hits.pattern);
    }
  };
  if (k == e) {
    emit.emit_known(b, e, hits.pattern);
    return;
  }
  if (k > b && k + 1 == e) {
    const char c = text[k];
    if (c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == ')') {
      emit_word(k);
      emit.emit(k, e);
      return;
    }
    if (c == '.') {
      const auto last = static_cast<unsigned char>(text[k - 1]);
      const auto is_upper = [](unsigned char x) { return x >= 'A' && x <= 'Z'; };
      const bool split =
          digits || (last >= 'a' && last <= 'z') ||
          (is_upper(last) && k - 1 > b && is_upper(static_cast<unsigned char>(text[k - 2])));
      if (split) {
        emit_word(k);
        emit.emit(k, e);
      } else {
        emit.emit_known(b, e, hits.pattern);
      }
      return;
    }
  }
  const std::string_view word = text.substr(b, e - b);
  WordCache::Slot* slot = cache == nullptr ? nullptr : cache->slot(word, end_of(text));
  if (slot != nullptr && slot->holds(word)) {
    emit.replay(*slot, b);
    return;
  }
  const std::size_t first = emit.size();
  split_by_rules(text, b, e, emit, prefixes, suffixes);
  if (slot != nullptr) emit.record(*slot, word, b, first);
}

// Buffers of one thread's tokenizer, reused from call to call (no allocation once grown).
struct TokenizerScratch {
  std::vector<Span> prefixes;  // affixes of one word
  std::vector<Span> suffixes;
  std::vector<std::size_t> pattern_starts;  // tokens that may start a matcher pattern
  std::vector<Span> matches;
  std::vector<Span> kept;
  std::vector<std::uint8_t> seen;
  std::vector<Token> merged;
  WordCache cache;  // kept from document to document (a fixed 80 KB)
};

// spaCy's _apply_special_cases: exceptions split by the affix rules are merged back. Only the
// tokens in `pattern_starts` (ascending; every token the filter does not rule out) can start one.
void apply_matcher(std::string_view text, std::vector<Token>& tokens, TokenizerScratch& scratch) {
  const PatternIndex& patterns = matcher_patterns();
  std::vector<Span>& matches = scratch.matches;
  matches.clear();
  const std::size_t n = tokens.size();
  for (const std::size_t i : scratch.pattern_starts) {
    const std::string_view first(text.data() + tokens[i].begin, tokens[i].end - tokens[i].begin);
    const PatternGroup* group = patterns.find(first);
    if (group == nullptr) continue;
    if (group->single != nullptr) matches.emplace_back(i, i + 1);
    if (i + 1 == n) continue;
    const Token& second = tokens[i + 1];
    if (second.kind == TokenKind::kWhitespace ||
        !group->may_continue_with(static_cast<unsigned char>(text[second.begin]))) {
      continue;
    }
    for (const SpecialCase* p : group->longer) {
      if (i + p->piece_count > n) continue;
      bool ok = true;
      std::size_t at = p->pieces[0];
      for (std::size_t k = 1; k < p->piece_count && ok; ++k) {
        const Token& t = tokens[i + k];
        ok = t.kind != TokenKind::kWhitespace && t.end - t.begin == p->pieces[k] &&
             text.substr(t.begin, t.end - t.begin) == std::string_view(p->key + at, p->pieces[k]);
        at += p->pieces[k];
      }
      if (ok) matches.emplace_back(i, i + p->piece_count);
    }
  }
  if (matches.empty()) return;
  // Longest first, then leftmost; a span is dropped when its first or last token was covered by
  // an earlier one (covered tokens are marked even for dropped spans, as in spaCy).
  std::sort(matches.begin(), matches.end(), [](const Span& x, const Span& y) {
    const std::size_t lx = x.second - x.first;
    const std::size_t ly = y.second - y.first;
    return lx != ly ? lx > ly : x.first < y.first;
  });
  std::vector<std::uint8_t>& seen = scratch.seen;
  seen.assign(n, 0);
  std::vector<Span>& kept = scratch.kept;
  kept.clear();
  for (const auto& [a, z] : matches) {
    if (!seen[a] && !seen[z - 1]) kept.emplace_back(a, z);
    for (std::size_t k = a; k < z; ++k) seen[k] = 1;
  }
  // Rebuild the token list in one pass (replacing spans in place would cost O(tokens) each).
  std::sort(kept.begin(), kept.end());
  std::vector<Token>& merged = scratch.merged;
  merged.clear();
  merged.reserve(n);
  std::size_t next = 0;  // the first token not yet copied
  for (const auto& [a, z] : kept) {
    bool glued = true;
    for (std::size_t k = a + 1; k < z; ++k) glued = glued && tokens[k].kind == TokenKind::kGlued;
    if (!glued) continue;  // the span's text has a space in it: never an exception
    const std::size_t begin = tokens[a].begin;
    const SpecialCase* special =
        find_special(text.substr(begin, tokens[z - 1].end - begin), end_of(text));
    if (special == nullptr) continue;
    merged.insert(merged.end(), tokens.begin() + static_cast<std::ptrdiff_t>(next),
                  tokens.begin() + static_cast<std::ptrdiff_t>(a));
    std::size_t at = begin;
    for (std::size_t k = 0; k < special->piece_count; ++k) {
      merged.push_back(
          Token{at, at + special->pieces[k], k == 0 ? tokens[a].kind : TokenKind::kGlued});
      at += special->pieces[k];
    }
    next = z;
  }
  if (next == 0) return;  // nothing replaced
  merged.insert(merged.end(), tokens.begin() + static_cast<std::ptrdiff_t>(next), tokens.end());
  tokens.swap(merged);
}

bool is_punct_token(std::string_view token) {
  for (std::size_t i = 0, length = 0; i < token.size(); i += length) {
    if (!(flags(decode_at(token, i, length)) & kUniPunct)) return false;
  }
  return true;
}

constexpr std::array<bool, 128> kAsciiSpace = [] {
  std::array<bool, 128> t{};
  for (unsigned b = 0; b < 128; ++b) t[b] = is_ascii_space(static_cast<unsigned char>(b));
  return t;
}();

// The end of the word that starts at text[j] (not whitespace): the next whitespace character.
std::size_t word_end(std::string_view text, std::size_t j) {
  const std::size_t n = text.size();
  std::size_t length = 0;
  while (j < n) {
    j = skip_printable_ascii(text, j);  // printable ASCII is never whitespace
    if (j == n) break;
    const auto byte = static_cast<unsigned char>(text[j]);
    if (byte < 0x80) {
      if (kAsciiSpace[byte]) break;
      ++j;
    } else {
      if (is_space(decode_at(text, j, length))) break;
      j += length;
    }
  }
  return j;
}

// Past the ASCII whitespace that starts at text[j], 16 bytes at a time (SSE2) while 16 bytes can
// be read; the caller's character loop then decides from there (a non-ASCII character may be
// whitespace too, and the text's last bytes are left to it).
std::size_t whitespace_end([[maybe_unused]] std::string_view text, std::size_t j) {
#if defined(__SSE2__)
  for (; j + 16 <= text.size(); j += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + j));
    const auto spaces = static_cast<std::uint32_t>(_mm_movemask_epi8(ascii_space_bytes(bytes)));
    if (spaces != 0xFFFF) return j + static_cast<std::size_t>(std::countr_one(spaces));
  }
#endif
  return j;
}

// A word that starts at text[b] (not whitespace) and ends inside the 16 bytes from text[b] at
// an ASCII whitespace byte, read with one load (SSE2; the caller checked b + 16 <= text.size()):
// sets its end `e`, its shape, and `space_then_word` when the word is followed by exactly one
// ' ' and then another word (a byte in 0x21-0x7F, inside the same 16 bytes). Returns false, and
// the byte loops decide, when the 16 bytes hold no byte <= 0x20 or >= 0x80, or when the first
// such byte is not ASCII whitespace (a control byte inside the word, or a non-ASCII character,
// which may be whitespace): then the word may go on past it.
bool block_word(std::string_view text, std::size_t b, std::size_t& e, WordShape& shape,
                bool& space_then_word) {
#if defined(__SSE2__)
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + b));
  // Signed compares: bytes >= 0x80 are negative, below every bound used here.
  const auto stops =
      static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x21))));
  if (stops == 0) return false;
  const auto length = static_cast<std::size_t>(std::countr_zero(stops));
  const auto spaces = static_cast<std::uint32_t>(_mm_movemask_epi8(ascii_space_bytes(bytes)));
  if (((spaces >> length) & 1) == 0) return false;
  const __m128i folded = _mm_or_si128(bytes, _mm_set1_epi8(0x20));  // ASCII letters to lowercase
  const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                       _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
  const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(bytes, _mm_set1_epi8('9' + 1)));
  // The leading run of letters, else of digits (bits 16-31 of the inverted masks are set, so
  // each count is at most 16), cut at the word's end.
  const auto letters = static_cast<std::size_t>(
      std::countr_zero(~static_cast<std::uint32_t>(_mm_movemask_epi8(letter))));
  const auto digits = static_cast<std::size_t>(
      std::countr_zero(~static_cast<std::uint32_t>(_mm_movemask_epi8(digit))));
  e = b + length;
  shape = letters != 0 ? WordShape{b + std::min(letters, length), false}
                       : WordShape{b + std::min(digits, length), true};
  // Bitwise ANDs, not &&: what follows a word varies from word to word, and the branches of a
  // short-circuit mispredicted (callgrind: 49K fewer conditional mispredicts on two real shards).
  // text[e] lies inside the 16 bytes; the shift is at most 16.
  space_then_word = (text[e] == ' ') & (length + 1 < 16) & (((stops >> (length + 1)) & 1) == 0);
  return true;
#else
  (void)text, (void)b, (void)e, (void)shape, (void)space_then_word;
  return false;
#endif
}

// This thread's tokenizer buffers, from a call the compiler cannot see through: used directly,
// the thread_local's address is recomputed (a __tls_get_addr call, the library being loaded
// with dlopen) in the word loop, once per word, rather than kept; through a plain reference it
// is a pointer like any other (perf: __tls_get_addr was 1.2% of a gopher_repetition pass).
[[gnu::noinline]] TokenizerScratch& thread_scratch() {
  thread_local TokenizerScratch scratch;
  return scratch;
}

}  // namespace

// noclone: count_sentences below calls it with the default path, and with the library's symbols
// hidden GCC would clone it for that constant; the tokenizer's helpers (split_word, block_word,
// word_end) then have two callers and are no longer inlined, which made a gopher_repetition pass
// ~5% more instructions. One body keeps them inlined, as they were tuned.
[[gnu::noclone]] void tokenize_document(std::string_view text, std::vector<Token>& out,
                                        TokenizerPath path) {
  TokenizerScratch& scratch = thread_scratch();
  out.clear();
  out.reserve(text.size() / 4 + 8);
  scratch.pattern_starts.clear();
  const std::size_t n = text.size();
  std::size_t i = 0;
  bool after_word = false;
  std::size_t length = 0;
  Emitter emit(text, out, scratch.pattern_starts, TokenKind::kGlued);
  // Every word ends at whitespace or at the text's end, so only the text's first character needs
  // looking at to know whether a whitespace run comes first.
  bool at_space = n != 0 && is_space(decode_at(text, 0, length));
  while (i < n) {
    std::size_t j = i;
    if (at_space) {
      j = path == TokenizerPath::kFast ? whitespace_end(text, i) : i;
      while (j < n && space_at(text, j, length)) j += length;
      // One ' ' right after a word belongs to that word; the rest is a whitespace token.
      const std::size_t ws_start = (after_word && text[i] == ' ') ? i + 1 : i;
      if (ws_start < j) {
        out.push_back(Token{ws_start, j, TokenKind::kWhitespace});
        after_word = false;
      } else {
        after_word = j == i + 1;
      }
      i = j;
      if (i == n) break;  // otherwise text[i] starts a word: the run ended there
    }
    at_space = true;
    // Words at text[i], for as long as each is followed by one ' ' and another word (that ' '
    // is the word's flag, not a token: nothing to look at).
    for (;;) {
      WordShape shape{};
      bool space_then_word = false;
      if (!(path == TokenizerPath::kFast && i + 16 <= n &&
            block_word(text, i, j, shape, space_then_word))) {
        j = word_end(text, i);
        shape = word_shape(text, i, j);
      }
      emit.start_word(after_word ? TokenKind::kAfterSpace : TokenKind::kGlued);
      split_word(text, i, j, shape, emit, scratch.prefixes, scratch.suffixes,
                 path == TokenizerPath::kFast ? &scratch.cache : nullptr);
      after_word = true;
      if (!space_then_word) break;
      i = j + 1;
    }
    i = j;
  }
  apply_matcher(text, out, scratch);
  // A huge document's buffers are not kept for the rest of the thread's life (as
  // Document::reset does for the metrics' buffers).
  constexpr std::size_t kKeep = std::size_t{1} << 16;
  if (scratch.pattern_starts.capacity() > kKeep || scratch.merged.capacity() > kKeep ||
      scratch.seen.capacity() > kKeep || scratch.matches.capacity() > kKeep ||
      scratch.kept.capacity() > kKeep || scratch.prefixes.capacity() > kKeep ||
      scratch.suffixes.capacity() > kKeep) {
    scratch = TokenizerScratch();
  }
}

std::size_t count_sentences(std::string_view line, std::vector<Token>& scratch) {
  tokenize_document(line, scratch);
  std::size_t sentences = 0;
  bool has_word = false;
  bool seen_period = false;
  for (const Token& t : scratch) {
    const std::string_view token = line.substr(t.begin, t.end - t.begin);
    std::size_t length = 0;
    const char32_t first = decode_at(token, 0, length);
    const bool in_punct_chars = length == token.size() && (flags(first) & kSentPunct);
    const bool whitespace = t.kind == TokenKind::kWhitespace;
    if (seen_period && !in_punct_chars && (whitespace || !is_punct_token(token))) {
      sentences += has_word ? 1 : 0;
      has_word = false;
      seen_period = false;
    } else if (in_punct_chars) {
      seen_period = true;
    }
    has_word = has_word || !whitespace;
  }
  return sentences + (has_word ? 1 : 0);
}

}  // namespace luminamoon::data::quality_internal
