// datatrove 0.10.1's GopherRepetitionFilter metrics: duplicate paragraphs and lines, the top
// 2-4-grams and the duplicated 5-10-grams, over one tokenization of the document, with every
// per-document buffer reused (Document::Scratch). docs/quality.md defines them;
// fallbacks/quality.py computes the same values (to the bit).
//
// Every "seen before?" question is a ProbeTable pass keyed by a seeded hash and confirmed by
// comparing keys, so no answer depends on a hash. Passes that cannot change an answer are skipped:
// 2-4-grams that hold a once-occurring (n-1)-gram (each n-gram is keyed by the classes of its two
// (n-1)-grams), and 5-10-gram positions whose 5-gram starts no other word (see live_positions).
#include <algorithm>
#include <cstring>

#include "quality/internal/metrics.h"
#include "quality/internal/probe_table.h"
#include "quality/internal/text.h"

namespace luminamoon::data::quality_internal {
namespace {

// Pieces of `text` between separators that are runs of at least `min_run` '\n' (re.split).
void split_newline_runs(std::string_view text, std::size_t min_run,
                        std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const void* hit = std::memchr(text.data() + i, '\n', text.size() - i);
    if (hit == nullptr) break;
    i = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
    std::size_t j = i;
    while (j < text.size() && text[j] == '\n') ++j;
    if (j - i >= min_run) {
      out.push_back(text.substr(start, i - start));
      start = j;
    }
    i = j;
  }
  out.push_back(text.substr(start));
}

// Polynomial hashes modulo the Mersenne prime 2^61 - 1 with a per-process random base: the
// hash of any run of whole words, however it is split into words, in O(1) from prefix sums.
__extension__ using U128 = unsigned __int128;
constexpr std::uint64_t kMersenne61 = (std::uint64_t{1} << 61) - 1;

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b) {
  const U128 r = static_cast<U128>(a) * b;
  const std::uint64_t folded =
      (static_cast<std::uint64_t>(r) & kMersenne61) + static_cast<std::uint64_t>(r >> 61);
  return folded >= kMersenne61 ? folded - kMersenne61 : folded;
}

std::uint64_t add_mod(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t s = a + b;
  return s >= kMersenne61 ? s - kMersenne61 : s;
}

std::uint64_t hash_base() {
  static const std::uint64_t base = (hash_seed() % (kMersenne61 - 1024)) + 257;
  return base;
}

// B^k for k < kPowers from a table (powers()), then square-and-multiply.
constexpr std::size_t kPowers = 512;
const std::uint64_t* powers() {
  static const std::vector<std::uint64_t> table = [] {
    std::vector<std::uint64_t> t(kPowers, 1);
    for (std::size_t i = 1; i < kPowers; ++i) t[i] = mul_mod(t[i - 1], hash_base());
    return t;
  }();
  return table.data();
}

std::uint64_t base_power(const std::uint64_t* table, std::size_t k) {
  if (k < kPowers) return table[k];
  std::uint64_t result = 1;
  std::uint64_t b = hash_base();
  for (; k != 0; k >>= 1) {
    if (k & 1) result = mul_mod(result, b);
    b = mul_mod(b, b);
  }
  return result;
}

// Horner's hash of one word's bytes (each byte + 1, so that zero bytes count).
std::uint64_t word_poly_hash(std::string_view word) {
  const std::uint64_t base = hash_base();
  std::uint64_t h = 0;
  for (const char c : word) h = add_mod(mul_mod(h, base), static_cast<unsigned char>(c) + 1u);
  return h;
}

// Whether the n-grams (5 <= n <= 10) at a and b are the same words, from the word 4-gram classes
// (class4[i]: where the 4-gram at i first occurs, see gopher_repetition_metrics): the 4-grams at
// a, a + 4 (n > 8) and a + n - 4 cover the n words. Equal words are equal bytes, so a true answer
// needs no byte comparison; a false one does (different words can join to the same characters).
struct SameWords {
  const std::uint32_t* class4;
  bool operator()(std::size_t a, std::size_t b, std::size_t n) const {
    return class4[a] == class4[b] && class4[a + n - 4] == class4[b + n - 4] &&
           (n <= 8 || class4[a + 4] == class4[b + 4]);
  }
};

std::uint64_t load64(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::uint64_t load32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The interning hash of a word, seeded: up to 16 bytes from two loads that cover the word
// (overlapping, never past its end), longer words by XXH3. Equal words hash equally; a collision
// costs a comparison, never an answer.
std::uint64_t word_key_hash(std::string_view word) {
  const char* p = word.data();
  const std::size_t n = word.size();
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  if (n > 16) return mix64(hash_bytes(word));
  if (n >= 8) {
    a = load64(p);
    b = load64(p + n - 8);
  } else if (n >= 4) {
    a = load32(p);
    b = load32(p + n - 4);
  } else if (n > 0) {
    a = static_cast<unsigned char>(p[0]) |
        (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
        (std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16);
  }
  return mix64(mix64(a ^ (std::uint64_t{n} << 59)) + b);
}

// Whether two words are equal: up to 16 bytes by the same two loads as word_key_hash (no call).
bool same_word(std::string_view x, std::string_view y) {
  const std::size_t n = x.size();
  if (n != y.size()) return false;
  const char* p = x.data();
  const char* q = y.data();
  if (n >= 8 && n <= 16) return load64(p) == load64(q) && load64(p + n - 8) == load64(q + n - 8);
  if (n >= 4 && n < 8) return load32(p) == load32(q) && load32(p + n - 4) == load32(q + n - 4);
  return x == y;
}

// Whether the `len` bytes (len >= 8) at x and at y are equal, given that their first 8 are: one
// more 8-byte load decides up to 16 bytes (the last 8 overlap the first 8); longer runs compare
// bytes 8..16 first (where most near misses differ), then ask `same()` (the same words, so the
// same bytes, without reading them), then compare the rest.
template <typename Same>
bool equal_after_window(const char* x, const char* y, std::size_t len, Same&& same) {
  if (len <= 16) return load64(x + len - 8) == load64(y + len - 8);
  return load64(x + 8) == load64(y + 8) && (same() || std::memcmp(x + 16, y + 16, len - 16) == 0);
}

// The largest bucket of equal 8-byte windows whose members are compared pairwise; a larger one
// is kept whole (live), which costs time, never an answer.
constexpr std::size_t kMaxCompared = 32;

// live[i] = 0 when no 5..10-gram at i can equal another one: equal n-grams (n >= 5) at i and j
// mean that the bytes of `joined` from word j on start with the 5-gram at i. Positions are
// bucketed by their first 8 bytes of `joined`; a 5-gram of 8+ bytes is looked for only at the
// other starts of its bucket. Other positions stay live (checked in full, as datatrove does).
void live_positions(ProbeTable& table, std::size_t w, const SameWords& same_words,
                    Document::Scratch& s) {
  const std::string_view all(s.joined);
  const std::vector<std::size_t>& offsets = s.offsets;
  s.live.assign(w, 1);
  if (w < 5) return;
  s.window.resize(w);
  s.bucket.resize(w);
  s.chain.resize(w);
  s.bucket_last.resize(w);
  s.bucket_size.assign(w, 0);
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  table.reset(w);
  std::size_t windows = 0;  // positions with 8 bytes of `joined` from them on (offsets grow)
  for (std::size_t i = 0; i < w && offsets[i] + 8 <= all.size(); ++i, ++windows) {
    std::memcpy(&s.window[i], all.data() + offsets[i], 8);
    const std::uint64_t key = s.window[i];
    const std::uint32_t first =
        table.find_or_insert(mix64(key), static_cast<std::uint32_t>(i),
                             [&](std::uint32_t stored) { return s.window[stored] == key; });
    s.bucket[i] = first;
    s.chain[i] = first == i ? kNone : s.bucket_last[first];
    s.bucket_last[first] = static_cast<std::uint32_t>(i);
    ++s.bucket_size[first];
  }
  for (std::size_t i = 0; i + 5 <= w && i < windows; ++i) {
    const std::size_t gram = offsets[i + 5] - offsets[i];
    if (gram < 8) continue;
    const std::uint32_t bucket = s.bucket[i];
    if (s.bucket_size[bucket] > kMaxCompared) continue;
    bool partner = false;
    for (std::uint32_t j = s.bucket_last[bucket]; j != kNone && !partner; j = s.chain[j]) {
      partner = j != i && offsets[j] + gram <= all.size() &&
                equal_after_window(all.data() + offsets[i], all.data() + offsets[j], gram,
                                   [&] { return j + 5 <= w && same_words(i, j, 5); });
    }
    if (!partner) s.live[i] = 0;
  }
}

// datatrove's find_all_duplicate for n = 5..10: n-grams joined with no separator (different
// word splits of the same characters are the same n-gram), n words skipped after a repeat.
void dup_ngram_char_ratios(ProbeTable& table, const std::vector<std::string_view>& words,
                           const SameWords& same_words, std::size_t chars, Document::Scratch& s,
                           Metrics& out, StopAfter stop) {
  const std::size_t w = words.size();
  // `joined`, its word offsets and the polynomial prefix hashes (a word's own hash is computed
  // at its first occurrence and reused: first_of still holds the word interning here).
  s.offsets.resize(w + 1);
  s.offsets[0] = 0;
  for (std::size_t i = 0; i < w; ++i) s.offsets[i + 1] = s.offsets[i] + words[i].size();
  s.joined.resize(s.offsets[w]);
  s.prefix_hash.resize(w + 1);
  s.prefix_hash[0] = 0;
  s.word_hash.resize(w);
  const std::uint64_t* pow = powers();
  for (std::size_t i = 0; i < w; ++i) {
    const std::uint32_t first = s.first_of[i];
    if (first == i) s.word_hash[i] = word_poly_hash(words[i]);
    s.prefix_hash[i + 1] =
        add_mod(mul_mod(s.prefix_hash[i], base_power(pow, words[i].size())), s.word_hash[first]);
    std::memcpy(s.joined.data() + s.offsets[i], words[i].data(), words[i].size());
  }
  live_positions(table, w, same_words, s);
  s.live_list.resize(w);
  std::size_t live = 0;
  for (std::size_t i = 0; i < w; ++i) {  // (branch-free: live is about a quarter of positions)
    s.live_list[live] = static_cast<std::uint32_t>(i);
    live += static_cast<std::size_t>(s.live[i] != 0);
  }
  s.live_list.resize(live);
  const std::string_view all(s.joined);
  const std::vector<std::size_t>& offsets = s.offsets;
  const std::vector<std::uint64_t>& prefix = s.prefix_hash;

  for (std::size_t n = 5; n <= 10; ++n) {
    std::size_t repeated = 0;
    if (w >= n) {
      table.reset(s.live_list.size());
      auto bytes_of = [&](std::size_t i) {
        return all.substr(offsets[i], offsets[i + n] - offsets[i]);
      };
      // Left to right over the live positions; after a repeat at i the next n-gram looked at
      // starts at i + n or later (datatrove's skip), the others are skipped anyway.
      std::size_t next = 0;
      for (const std::uint32_t i : s.live_list) {
        if (i + n > w) break;
        if (i < next) continue;
        // hash(bytes of words i..i+n) = prefix[i+n] - prefix[i] * B^(their length)
        const std::uint64_t shifted =
            mul_mod(prefix[i], base_power(pow, offsets[i + n] - offsets[i]));
        const std::uint64_t hash = prefix[i + n] >= shifted ? prefix[i + n] - shifted
                                                            : prefix[i + n] + kMersenne61 - shifted;
        const std::string_view gram = bytes_of(i);
        const std::uint32_t first = table.find_or_insert(mix64(hash), i, [&](std::uint32_t stored) {
          return same_words(stored, i, n) || bytes_of(stored) == gram;
        });
        if (first != i) {
          repeated += s.prefix_chars[i + n] - s.prefix_chars[i];
          next = i + n;
        }
      }
    }
    const auto metric = static_cast<Metric>(kGopherDup5gramCharRatio + (n - 5));
    out[metric] = ratio(repeated, chars);
    if (stop != nullptr && (*stop)(metric)) return;
  }
}

}  // namespace

void gopher_repetition_metrics(Document& doc, Metrics& out, StopAfter stop) {
  auto stop_after = [&](Metric last) { return stop != nullptr && (*stop)(last); };
  const std::string_view text = doc.text();
  const std::size_t chars = doc.chars(text);
  ProbeTable& table = doc.table();
  Document::Scratch& s = doc.scratch();
  const bool ascii = doc.ascii();
  out[kChars] = static_cast<double>(chars);
  if (stop_after(kChars)) return;

  split_newline_runs(strip(text), 2, s.pieces);
  const auto [para_dups, para_chars] = find_duplicates(table, s.pieces, ascii);
  out[kGopherDupParaRatio] = ratio(para_dups, s.pieces.size());
  out[kGopherDupParaCharRatio] = ratio(para_chars, chars);
  if (stop_after(kGopherDupParaCharRatio)) return;
  split_newline_runs(text, 1, s.pieces);
  const auto [line_dups, line_chars] = find_duplicates(table, s.pieces, ascii);
  out[kGopherDupLineRatio] = ratio(line_dups, s.pieces.size());
  out[kGopherDupLineCharRatio] = ratio(line_chars, chars);
  if (stop_after(kGopherDupLineCharRatio)) return;

  const std::vector<std::string_view>& words = doc.tokens();
  const std::size_t w = words.size();
  s.prefix_chars.resize(w + 1);  // code points of words[0, i)
  s.prefix_chars[0] = 0;
  for (std::size_t i = 0; i < w; ++i)
    s.prefix_chars[i + 1] = s.prefix_chars[i] + doc.chars(words[i]);

  // Word interning: first_of[i] is where words[i] first occurs, so n-grams of words compare as
  // runs of integers.
  s.first_of.resize(w);
  s.counts.assign(w, 0);
  table.reset(w);
  for (std::size_t i = 0; i < w; ++i) {
    const std::string_view word = words[i];
    s.first_of[i] =
        table.find_or_insert(word_key_hash(word), static_cast<std::uint32_t>(i),
                             [&](std::uint32_t stored) { return same_word(words[stored], word); });
    ++s.counts[s.first_of[i]];
  }
  // An n-gram that holds a once-occurring (n-1)-gram occurs once, so it is not counted. If no
  // n-gram repeats, the top one is the first n-gram, once (Counter.most_common(1) takes the
  // first of equal counts).
  // Top n-grams (joined with ' '): the most frequent one, ties to the one seen first (as
  // Counter.most_common(1) over insertion order). Tokens hold no space, so two of them are
  // equal exactly when their words are.
  //
  // One pass per n, each built on the one before: the n-gram at i is the pair of (n-1)-grams
  // at i and i+1, so it is keyed by their classes (class[i]: where the (n-1)-gram at i first
  // occurs) and compared as two integers. And it can only occur twice when both of those
  // (n-1)-grams do (repeated[i]), which leaves out most positions for n = 3 and 4; for n = 2
  // the classes are the interned words and repeated[i] is "the word occurs twice".
  std::vector<std::uint32_t>& cls = s.gram_class;    // per position: its (n-1)-gram's class
  std::vector<std::uint8_t>& repeated = s.repeated;  // per position: its (n-1)-gram repeats
  cls.assign(s.first_of.begin(), s.first_of.end());  // (first_of stays: the word interning)
  repeated.resize(w);
  for (std::size_t i = 0; i < w; ++i) repeated[i] = s.counts[cls[i]] >= 2 ? 1 : 0;
  for (std::size_t n = 2; n <= 4; ++n) {
    std::size_t top = 0;
    if (w >= n) {
      const std::size_t positions = w - n + 1;
      s.counts.assign(positions, 0);
      s.next_class.resize(positions);
      // The positions to look up, listed without branches (each n-gram not looked up occurs
      // once: its own class); the table is sized for them alone, so it stays small.
      std::vector<std::uint32_t>& looked_up = s.live_list;
      looked_up.resize(positions);
      std::size_t listed = 0;
      for (std::size_t i = 0; i < positions; ++i) {
        s.next_class[i] = static_cast<std::uint32_t>(i);
        looked_up[listed] = static_cast<std::uint32_t>(i);
        listed += static_cast<std::size_t>(repeated[i] & repeated[i + 1]);
      }
      table.reset(listed);
      std::size_t best_count = 1;  // the first n-gram, unless one repeats
      std::size_t best_first = 0;
      const std::uint32_t* c = cls.data();
      for (std::size_t k = 0; k < listed; ++k) {
        const std::uint32_t i = looked_up[k];
        const std::uint64_t key = (std::uint64_t{c[i]} << 32) | c[i + 1];
        const std::uint32_t first = table.find_or_insert(mix64(key), i, [&](std::uint32_t stored) {
          return c[stored] == c[i] && c[stored + 1] == c[i + 1];
        });
        s.next_class[i] = first;
        const std::size_t count = ++s.counts[first];
        if (count > best_count || (count == best_count && first < best_first)) {
          best_count = count;
          best_first = first;
        }
      }
      top = (s.prefix_chars[best_first + n] - s.prefix_chars[best_first] + n - 1) * best_count;
      if (n < 4) {
        cls.swap(s.next_class);
        for (std::size_t i = 0; i < positions; ++i) repeated[i] = s.counts[cls[i]] >= 2 ? 1 : 0;
        repeated.resize(positions);
      }
    }
    const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
    out[metric] = ratio(top, chars);
    if (stop_after(metric)) return;
  }

  // The word 4-gram classes (the last pass left them in next_class, one per position).
  dup_ngram_char_ratios(table, words, SameWords{s.next_class.data()}, chars, s, out, stop);
}

}  // namespace luminamoon::data::quality_internal
