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
#include <array>
#include <bit>
#include <cstring>
#include <numeric>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/little_endian.h"
#include "quality/internal/metrics.h"
#include "quality/internal/probe_table.h"
#include "quality/internal/text.h"

namespace luminamoon::data::quality_internal {
namespace {

// The runs of '\n' in `text` (maximal, as [begin, end) byte offsets, in order), found once for
// both of split_newline_runs' splits; returns how many. The positions of the '\n' bytes are
// listed first, 16 bytes at a time where SSE2 is there (every x86-64 CPU): each block writes the
// positions of its first two '\n' unconditionally and counts them all, so text whose lines are
// longer than 8 bytes takes no branch per line (a block with 3 or more rewrites its positions in
// a loop). The runs then join adjacent positions, without branches. Both buffers grow, never
// shrink (no zero-filling per document), and hold what a document needs beyond the count.
std::size_t newline_runs(std::string_view text, std::vector<std::size_t>& positions,
                         std::vector<std::pair<std::size_t, std::size_t>>& runs) {
  const std::size_t n = text.size();
  std::size_t count = 0;
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  for (; i + 16 <= n; i += 16) {
    if (positions.size() < count + 16) positions.resize(2 * positions.size() + 64);
    std::size_t* pos = positions.data();
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i is_newline = _mm_cmpeq_epi8(bytes, newline);
    auto mask = static_cast<std::uint32_t>(_mm_movemask_epi8(is_newline));
    // Their count: the 1 bytes of each half summed (std::popcount is a library call on CPUs
    // without POPCNT, the baseline this is built for).
    const __m128i sums =
        _mm_sad_epu8(_mm_sub_epi8(_mm_setzero_si128(), is_newline), _mm_setzero_si128());
    const auto found =
        static_cast<std::size_t>(_mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4));
    // (bit 16 stops countr_zero at a position the count does not keep)
    pos[count] = i + static_cast<std::size_t>(std::countr_zero(mask | 0x10000u));
    pos[count + 1] = i + static_cast<std::size_t>(std::countr_zero((mask & (mask - 1)) | 0x10000u));
    if (found > 2) {
      for (std::size_t k = 0; k < found; ++k, mask &= mask - 1) {
        pos[count + k] = i + static_cast<std::size_t>(std::countr_zero(mask));
      }
    }
    count += found;
  }
#endif
  if (positions.size() < count + 16) positions.resize(count + 16);
  std::size_t* pos = positions.data();
  for (; i < n; ++i) {  // (at most 15 bytes after the blocks)
    pos[count] = i;
    count += static_cast<std::size_t>(text[i] == '\n');
  }
  if (runs.size() < count) runs.resize(count);
  std::pair<std::size_t, std::size_t>* out = runs.data();
  std::size_t r = 0;
  std::size_t begin = 0;
  std::size_t previous = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = pos[k];
    // (the run before goes on; the first position starts one)
    const std::size_t extends = static_cast<std::size_t>((at == previous + 1) & (k != 0));
    begin = extends != 0 ? begin : at;
    r -= extends;
    out[r] = {begin, at + 1};
    ++r;
    previous = at;
  }
  return r;
}

// Pieces of text[lo, hi) between separators that are runs of at least `min_run` '\n' (re.split),
// from the text's `count` runs (newline_runs). No run may straddle lo or hi (they are the text's
// ends, or the ends of its strip(), which starts and ends with a character that is not
// whitespace), so the runs inside are those that start at lo or after and end at hi or before.
void split_newline_runs(std::string_view text, std::size_t lo, std::size_t hi,
                        const std::pair<std::size_t, std::size_t>* runs, std::size_t count,
                        std::size_t min_run, std::vector<std::string_view>& out) {
  out.resize(count + 1);
  std::string_view* pieces = out.data();
  std::size_t kept = 0;
  std::size_t start = lo;
  for (std::size_t k = 0; k < count; ++k) {  // (without branches: which runs split is data)
    const auto [begin, end] = runs[k];
    const bool splits = begin >= lo && end <= hi && end - begin >= min_run;
    // (a run before lo would give a negative length: kept only when it splits)
    const std::size_t keep = std::size_t{0} - static_cast<std::size_t>(splits);
    pieces[kept] = std::string_view(text.data() + start, (begin - start) & keep);
    kept += splits ? 1 : 0;
    start = splits ? end : start;
  }
  pieces[kept++] = std::string_view(text.data() + start, hi - start);
  out.resize(kept);
}

// Makes room for n elements in a per-document buffer without clearing it: every buffer this file
// grows is written below the current document's size before it is read there, so what a longer
// document left above that size is never looked at (and costs no zero-filling per document).
template <typename Buffer>
void grow(Buffer& buffer, std::size_t n) {
  if (buffer.size() < n) buffer.resize(n);
}

// Polynomial hashes modulo the Mersenne prime 2^61 - 1 with a per-process random base: the
// hash of any run of whole words, however it is split into words, in O(1) from prefix sums.
__extension__ using U128 = unsigned __int128;
constexpr std::uint64_t kMersenne61 = (std::uint64_t{1} << 61) - 1;

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b) {
  const U128 r = static_cast<U128>(a) * b;
  const std::uint64_t folded =
      (static_cast<std::uint64_t>(r) & kMersenne61) + static_cast<std::uint64_t>(r >> 61);
  return folded >= kMersenne61 ? folded - kMersenne61 : folded;  // (a cmov here)
}

std::uint64_t add_mod(std::uint64_t a, std::uint64_t b) {
  // Without a branch: the compiler made the plain `?:` a branch, which the chain of prefix
  // hashes mispredicted half the time (the same `?:` in mul_mod is a cmov, kept: measured).
  const std::uint64_t s = a + b;
  const std::uint64_t over = s >= kMersenne61 ? ~std::uint64_t{0} : 0;
  return s - (kMersenne61 & over);
}

// a * b + c (mod 2^61 - 1) for a < 2^62, b and c < 2^61, as a value below 2^61 + 4 (at most one
// subtraction of 2^61 - 1 from the reduced one) with no comparison on the way: a*b < 2^123
// splits into its low 61 bits and the rest (< 2^62), so low + rest + c < 2^63, folded once more.
std::uint64_t mul_add_folded(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const U128 r = static_cast<U128>(a) * b;
  const auto lo = static_cast<std::uint64_t>(r);
  const auto hi = static_cast<std::uint64_t>(r >> 64);
  const std::uint64_t sum = (lo & kMersenne61) + ((lo >> 61) | (hi << 3)) + c;
  return (sum & kMersenne61) + (sum >> 61);
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

// The polynomial hash of one word's bytes b_0..b_{n-1}: the sum of (b_k + 1) B^(n-1-k) (each
// byte + 1, so that zero bytes count). Below kPowers bytes the terms are independent products
// summed in 128 bits and reduced once (no chain of n dependent multiplications); longer words
// take Horner's rule. Both give the same value.
std::uint64_t word_poly_hash(std::string_view word, const std::uint64_t* pow) {
  const std::size_t n = word.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(word.data());
  if (n >= kPowers) {
    const std::uint64_t base = hash_base();
    std::uint64_t h = 0;
    for (std::size_t k = 0; k < n; ++k) h = add_mod(mul_mod(h, base), bytes[k] + 1u);
    return h;
  }
  U128 sum = 0;  // n terms below 2^70 each: below 2^79
  for (std::size_t k = 0; k < n; ++k) sum += static_cast<U128>(pow[n - 1 - k]) * (bytes[k] + 1u);
  // 2^64 = 2^3 (mod 2^61 - 1): fold the high half in, then the bits above 61 (twice).
  const auto lo = static_cast<std::uint64_t>(sum);
  const auto hi = static_cast<std::uint64_t>(sum >> 64);
  std::uint64_t r = (lo & kMersenne61) + (lo >> 61) + (hi << 3);  // below 2^62
  r = (r & kMersenne61) + (r >> 61);
  return r >= kMersenne61 ? r - kMersenne61 : r;
}

// Whether the n-grams (5 <= n <= 10) at a and b are the same words, from the word 4-gram classes
// (class4[i]: where the 4-gram at i first occurs, see gopher_repetition_metrics): the 4-grams at
// a, a + 4 (n > 8) and a + n - 4 cover the n words. Equal words are equal bytes, so a true answer
// needs no byte comparison; a false one does (different words can join to the same characters).
// Null when the 4-gram pass was skipped (a filter's bound): every answer is then false, and
// the bytes decide.
struct SameWords {
  const std::uint32_t* class4;
  bool operator()(std::size_t a, std::size_t b, std::size_t n) const {
    return class4 != nullptr && class4[a] == class4[b] && class4[a + n - 4] == class4[b + n - 4] &&
           (n <= 8 || class4[a + 4] == class4[b + 4]);
  }
};

// Eight bytes as a little-endian number: the masks below keep a word's first bytes as the low
// ones on every host.
std::uint64_t load64(const char* p) {
  return internal::load_le<std::uint64_t>(reinterpret_cast<const std::uint8_t*>(p));
}

// A word's first min(n, 16) bytes as two little-endian integers, zero past its end: with its
// length n, the word itself when n <= 16. Two loads and two masks when 16 bytes can be read from
// the word (`end`: the end of the text the word is a piece of), a copy otherwise.
struct WordKey {
  std::uint64_t low;
  std::uint64_t high;
};

constexpr std::array<std::uint64_t, 17> kLowMask = [] {
  std::array<std::uint64_t, 17> m{};
  for (std::size_t n = 0; n <= 16; ++n)
    m[n] = n >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1;
  return m;
}();
constexpr std::array<std::uint64_t, 17> kHighMask = [] {
  std::array<std::uint64_t, 17> m{};
  for (std::size_t n = 0; n <= 16; ++n) {
    m[n] = n <= 8 ? 0 : n == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * (n - 8))) - 1;
  }
  return m;
}();

WordKey word_key(std::string_view word, const char* end) {
  const char* p = word.data();
  const std::size_t m = word.size() < 16 ? word.size() : 16;
  if (end - p >= 16) return {load64(p) & kLowMask[m], load64(p + 8) & kHighMask[m]};
  char block[16] = {};
  std::memcpy(block, p, m);
  return {load64(block), load64(block + 8)};
}

// The UTF-8 continuation bytes (10xxxxxx) of a key (bytes past the word are zero, not counted):
// a word of up to 16 bytes of valid UTF-8 has n minus these code points.
std::size_t continuation_bytes(const WordKey& key) {
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  const std::uint64_t low = (key.low & ~(key.low << 1) & kHigh) >> 7;  // 1 per such byte
  const std::uint64_t high = (key.high & ~(key.high << 1) & kHigh) >> 7;
  return static_cast<std::size_t>(((low + high) * kOnes) >> 56);  // byte sums, at most 16
}

// The largest bucket of equal 8-byte windows whose members are compared pairwise; a larger one
// is kept whole (live), which costs time, never an answer.
constexpr std::size_t kMaxCompared = 32;

// Two bits per hash value, "seen once" and "seen twice" (a word of each per 64 values, side by
// side), over the hashes of one document: a value not seen twice was hashed from one position
// alone, so no other position holds the bytes it was hashed from. Exact as a filter: a hash
// collision only makes a value look seen twice.
class TwinFilter {
 public:
  // Room for `items` hashes: 16 slots each, so few different ones meet in a slot.
  void reset(std::vector<std::uint64_t>& words, std::size_t items) {
    const std::size_t slots = std::bit_ceil(std::max<std::size_t>(64, 16 * items));
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(slots));
    words.assign(slots / 32, 0);
    words_ = words.data();
  }
  // The slot of a well-mixed 64-bit hash (its top bits).
  std::uint64_t slot(std::uint64_t hash) const { return hash >> shift_; }
  void add(std::uint64_t slot) {
    const std::uint64_t bit = std::uint64_t{1} << (slot & 63);
    std::uint64_t* pair = words_ + 2 * (slot >> 6);
    pair[1] |= pair[0] & bit;
    pair[0] |= bit;
  }
  unsigned twice(std::uint64_t slot) const {
    return static_cast<unsigned>((words_[2 * (slot >> 6) + 1] >> (slot & 63)) & 1);
  }

 private:
  std::uint64_t* words_ = nullptr;
  unsigned shift_ = 64;
};

// live[i] = 0 when no 5..10-gram at i can equal another one: equal n-grams (n >= 5) at i and j
// mean that the bytes of `joined` from word j on start with the 5-gram at i (j is a partner of
// i). Positions are bucketed by their first 8 bytes of `joined`; a 5-gram of 8+ bytes is looked
// for only at the other starts of its bucket. Other positions stay live (checked in full, as
// datatrove does). live[i] = 1 when every partner of i comes after it: an n-gram pass can then
// only store i, never count it (it counts a position whose n-gram a stored, earlier one has).
// 2 or 3: a partner before i, or not known (a 5-gram under 8 bytes, a bucket not searched).
// `joined` has 16 bytes of slack after its `size` bytes, so bytes 8..16 can be read from any
// position (window_high); slack bytes are never compared.
//
// Most positions need no bucket: their first 8 bytes start no other position (59% of the real
// corpus), or their 5-gram is 16 bytes or more and its first 16 bytes start no other position
// (three walks in four through a bucket found no partner before this test). Two TwinFilters
// over every position, of the hashes of its first 8 and first 16 bytes, settle those without a
// table: only positions whose 8-byte hash was seen twice are bucketed, and only those whose
// 16-byte hash was seen twice (or whose 5-gram is shorter) walk their bucket. A partner's bytes
// lie within `size`, so the bytes it hashed are the ones compared; slack bytes only make hashes
// that match nothing.
void live_positions(ProbeTable& table, std::size_t w, std::size_t size, const SameWords& same_words,
                    Document::Scratch& s) {
  const char* all = s.joined.data();
  const std::vector<std::size_t>& offsets = s.offsets;
  s.live.assign(w, 2);
  if (w < 5) return;
  grow(s.window, w);
  grow(s.window_high, w);
  grow(s.window_hash, w);
  grow(s.bucket, w);
  grow(s.chain, w);
  grow(s.bucket_last, w);
  grow(s.bucket_size, w);
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // Positions with 8 bytes of `joined` from them on (offsets grow).
  const std::size_t windows = static_cast<std::size_t>(
      std::partition_point(offsets.begin(), offsets.begin() + static_cast<std::ptrdiff_t>(w),
                           [&](std::size_t offset) { return offset + 8 <= size; }) -
      offsets.begin());
  TwinFilter first8;
  first8.reset(s.twin_filter8, windows);
  // The windows, their hashes and the 8-byte filter first (no table access, so many positions
  // overlap), then the buckets.
  for (std::size_t i = 0; i < windows; ++i) {
    s.window[i] = load64(all + offsets[i]);
    s.window_high[i] = load64(all + offsets[i] + 8);
    s.window_hash[i] = mix64(s.window[i]);
    first8.add(first8.slot(s.window_hash[i]));
  }
  // Bucketed: the positions whose 8 bytes may start another position, listed without branches.
  // Every other one is a bucket of its own (bucket[i] = i, one member).
  std::iota(s.bucket.begin(), s.bucket.begin() + static_cast<std::ptrdiff_t>(windows), 0u);
  std::fill_n(s.bucket_size.begin(), windows, 1u);
  std::vector<std::uint32_t>& bucketed = s.live_list;  // (free until dup_ngram_char_ratios' list)
  bucketed.resize(windows);
  std::size_t candidates = 0;
  for (std::size_t i = 0; i < windows; ++i) {
    bucketed[candidates] = static_cast<std::uint32_t>(i);
    candidates += first8.twice(first8.slot(s.window_hash[i]));
  }
  // A partner shares the first 8 bytes, so it is bucketed: the 16-byte filter needs only those.
  TwinFilter first16;
  first16.reset(s.twin_filter16, candidates);
  // The 16-byte hash: the 8-byte one (mix64, seeded) with the next 8 bytes, multiply-shift.
  auto slot16 = [&](std::size_t i) {
    return first16.slot((s.window_hash[i] ^ s.window_high[i]) * 0x9E3779B97F4A7C15ULL);
  };
  table.reset(candidates);
  for (std::size_t k = 0; k < candidates; ++k) {
    const std::uint32_t i = bucketed[k];
    const std::uint64_t key = s.window[i];
    // (The first probe decides without a branch: whether a window is new is a coin toss.)
    const std::uint32_t first = table.find_or_insert_first_probe(
        s.window_hash[i], i, [&](std::uint32_t stored) { return s.window[stored] ^ key; },
        [&](std::uint32_t stored) { return s.window[stored] == key; });
    s.bucket[i] = first;
    // All ones when i opens its bucket (kNone is all ones; what the opener's slots held before,
    // from an earlier document, is masked away), without a branch.
    const std::uint32_t opens = 0u - static_cast<std::uint32_t>(first == i);
    s.chain[i] = s.bucket_last[first] | opens;
    s.bucket_last[first] = i;
    s.bucket_size[first] = (s.bucket_size[first] & ~opens) + 1;
    first16.add(slot16(i));
  }
  // A 5-gram under 8 bytes stays live; a longer one at a position that is not bucketed has no
  // partner. Among the bucketed ones, those alone in their bucket, and 5-grams of 16 bytes or more
  // whose 16 bytes start no other position, have no partner either; the others in a bucket of 2
  // to kMaxCompared are listed (without branches: each of these tests is a coin toss) and
  // compared with the bucket's other members.
  const std::size_t checked = std::min(windows, w - 4);
  for (std::size_t i = 0; i < checked; ++i) {
    s.live[i] =
        static_cast<std::uint8_t>(2 * static_cast<unsigned>(offsets[i + 5] - offsets[i] < 8));
  }
  while (candidates > 0 && bucketed[candidates - 1] >= checked) --candidates;
  std::vector<std::uint32_t>& compare = s.compare;
  grow(compare, candidates);
  std::size_t listed = 0;
  for (std::size_t k = 0; k < candidates; ++k) {
    const std::uint32_t i = bucketed[k];
    const std::uint32_t members = s.bucket_size[s.bucket[i]];
    const std::size_t gram = offsets[i + 5] - offsets[i];
    const auto long_gram = static_cast<unsigned>(gram >= 8);
    const unsigned twin = static_cast<unsigned>(gram < 16) | first16.twice(slot16(i));
    const auto alone = static_cast<unsigned>(members == 1);
    const auto compared = static_cast<unsigned>(members - 2 <= kMaxCompared - 2);  // 2..max
    s.live[i] = static_cast<std::uint8_t>(2 * (1 ^ (long_gram & (alone | (twin ^ 1)))));
    compare[listed] = i;
    listed += long_gram & twin & compared;
  }
  // The earlier members of i's bucket are searched first (chain[i] on), then the later ones
  // (from the bucket's last down to i): a partner before i makes i live with an earlier partner
  // (2), a partner after it only live (1). Partners are found in pairs where they can be: when
  // j, later than i, matches the 5-gram at i and its own 5-gram is no longer, i matches j's, so
  // j has an earlier partner: it is marked (3) and skips its search.
  for (std::size_t k = 0; k < listed; ++k) {
    const std::uint32_t i = compare[k];
    if (s.live[i] == 3) continue;
    const std::size_t gram = offsets[i + 5] - offsets[i];
    const std::uint64_t high = s.window_high[i];
    // Bytes 8..gram of the 5-gram (the first 8 are the bucket's): for gram <= 16 only the low
    // gram - 8 bytes of window_high count.
    const std::uint64_t mask = gram >= 16 ? ~std::uint64_t{0} : kLowMask[gram - 8];
    auto partner = [&](std::uint32_t j) {
      return offsets[j] + gram <= size && ((s.window_high[j] ^ high) & mask) == 0 &&
             (gram <= 16 || (j + 5 <= w && same_words(i, j, 5)) ||
              std::memcmp(all + offsets[i] + 16, all + offsets[j] + 16, gram - 16) == 0);
    };
    std::uint8_t live = 0;
    for (std::uint32_t j = s.chain[i]; j != kNone; j = s.chain[j]) {
      if (partner(j)) {
        live = 2;
        break;
      }
    }
    if (live == 0) {
      std::uint32_t found = kNone;
      for (std::uint32_t j = s.bucket_last[s.bucket[i]]; j != i; j = s.chain[j]) {
        if (partner(j)) {
          found = j;
          break;
        }
      }
      if (found != kNone) {
        live = 1;
        if (found < checked && offsets[found + 5] - offsets[found] <= gram) s.live[found] = 3;
      }
    }
    s.live[i] = live;
  }
}

constexpr std::size_t kNoCount = ~std::size_t{0};

// The largest count c <= chars with ratio(c, chars) <= at (chars > 0), or kNoCount when even 0
// fails (a threshold below 0, or NaN).
std::size_t largest_passing_count(double at, std::size_t chars) {
  if (!(ratio(0, chars) <= at)) return kNoCount;
  if (ratio(chars, chars) <= at) return chars;
  // From the product's floor, corrected by the comparison itself (rounding may put it one off).
  auto c = static_cast<std::size_t>(
      std::max(0.0, std::min(at * static_cast<double>(chars), static_cast<double>(chars))));
  while (c > 0 && !(ratio(c, chars) <= at)) --c;
  while (c + 1 <= chars && ratio(c + 1, chars) <= at) ++c;
  return c;
}

// datatrove's find_all_duplicate for n = 5..10: n-grams joined with no separator (different
// word splits of the same characters are the same n-gram), n words skipped after a repeat.
void dup_ngram_char_ratios(ProbeTable& table, std::string_view text,
                           const std::vector<std::string_view>& words, const SameWords& same_words,
                           std::size_t chars, Document::Scratch& s, Metrics& out, StopAfter stop,
                           const NgramPassesAt* passes_at) {
  const std::size_t w = words.size();
  // `joined`, its word offsets and the polynomial prefix hashes (a word's own hash is computed
  // at its first occurrence and reused: first_of still holds the word interning here).
  grow(s.offsets, w + 1);
  s.offsets[0] = 0;
  for (std::size_t i = 0; i < w; ++i) s.offsets[i + 1] = s.offsets[i] + words[i].size();
  // 16 bytes of slack after the words: a word of up to 16 bytes is copied as one 16-byte load
  // and store (the bytes past its end are overwritten by the next word, or land in the slack),
  // when 16 bytes can be read from it (the words are pieces of `text`).
  grow(s.joined, s.offsets[w] + 16);
  grow(s.prefix_hash, w + 1);
  s.prefix_hash[0] = 0;
  grow(s.word_hash, w);
  const char* text_end = text.data() + text.size();
  char* out_bytes = s.joined.data();
  // The first occurrences are listed (without branches: which words are new is a coin toss to a
  // branch predictor) and hashed after the copy.
  std::vector<std::uint32_t>& firsts = s.firsts;
  grow(firsts, w);
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < w; ++i) {
    const std::string_view word = words[i];
    firsts[distinct] = static_cast<std::uint32_t>(i);
    distinct += static_cast<std::size_t>(s.first_of[i] == i);
    if (word.size() <= 16 && text_end - word.data() >= 16) {
      char block[16];
      std::memcpy(block, word.data(), 16);
      std::memcpy(out_bytes + s.offsets[i], block, 16);
    } else {
      std::memcpy(out_bytes + s.offsets[i], word.data(), word.size());
    }
  }
  const std::size_t size = s.offsets[w];
  live_positions(table, w, size, same_words, s);
  s.live_list.resize(w);
  std::size_t live = 0;
  for (std::size_t i = 0; i < w; ++i) {  // (branch-free: live is about a quarter of positions)
    s.live_list[live] = static_cast<std::uint32_t>(i);
    live += static_cast<std::size_t>(s.live[i] != 0);
  }
  s.live_list.resize(live);

  // A filter that only asks whether a ratio passes its threshold skips the passes that cannot
  // fail it. A pass counts only positions with an earlier partner (live 2 or 3: a partner
  // before them, or not known), and the n-grams it counts do not overlap (n words are skipped
  // after each), so its count is at most the code points of the union of the n-word spans at
  // those positions (a quarter of the real corpus's documents skip all six passes this way, and
  // then the polynomial hashes too).
  // The same bound from each live position on ends a pass that is not skipped as soon as the
  // count so far plus the bound on the rest passes (the metric then holds that sum):
  // bound_from[6 k + n - 5] covers the spans at live_list[k] and after. Built from the end:
  // spans of one length taken by decreasing start, so a span overlaps the union of the later
  // ones exactly from that union's first start on.
  std::array<bool, 6> skip{};
  bool hashes_needed = true;
  const bool bounded = passes_at != nullptr && chars != 0;
  if (bounded) {
    grow(s.bound_from, 6 * (live + 1));
    std::size_t* bound_from = s.bound_from.data();
    std::array<std::size_t, 6> bound{};
    std::array<std::size_t, 6> union_start;  // the first start of the union's spans so far
    union_start.fill(w);
    const std::size_t* prefix_chars = s.prefix_chars.data();
    const std::uint8_t* live_at = s.live.data();
    std::fill_n(bound_from + 6 * live, 6, std::size_t{0});
    for (std::size_t k = live; k-- > 0;) {
      const std::uint32_t i = s.live_list[k];
      if (live_at[i] >= 2) {
        for (std::size_t n = 5; n <= 10 && i + n <= w; ++n) {
          const std::size_t end = std::min<std::size_t>(i + n, union_start[n - 5]);
          bound[n - 5] += prefix_chars[end] - prefix_chars[i];
          union_start[n - 5] = i;
        }
      }
      std::copy_n(bound.begin(), 6, bound_from + 6 * k);
    }
    hashes_needed = false;
    for (std::size_t n = 5; n <= 10; ++n) {
      skip[n - 5] = ratio(bound[n - 5], chars) <= (*passes_at)[n - 2];
      if (skip[n - 5])
        out[static_cast<Metric>(kGopherDup5gramCharRatio + (n - 5))] = ratio(bound[n - 5], chars);
      hashes_needed = hashes_needed || (!skip[n - 5] && w >= n);
    }
  }
  const std::uint64_t* pow = powers();
  if (hashes_needed) {
    // Hashed in order of length (a counting sort; lengths above 16 together), so that the hash
    // loop's trip count repeats from word to word and its exit is predicted.
    constexpr std::size_t kLengthClasses = 18;
    std::array<std::size_t, kLengthClasses + 1> class_start{};
    auto length_class = [&](std::uint32_t i) {
      return std::min<std::size_t>(words[i].size(), kLengthClasses - 1);
    };
    for (std::size_t k = 0; k < distinct; ++k) ++class_start[length_class(firsts[k]) + 1];
    for (std::size_t c = 1; c <= kLengthClasses; ++c) class_start[c] += class_start[c - 1];
    grow(s.by_length, distinct);
    for (std::size_t k = 0; k < distinct; ++k) {
      const std::uint32_t i = firsts[k];
      s.by_length[class_start[length_class(i)]++] = i;
    }
    for (std::size_t k = 0; k < distinct; ++k) {
      const std::uint32_t i = s.by_length[k];
      s.word_hash[i] = word_poly_hash(words[i], pow);
    }
    // The prefix hashes, a chain of dependent multiplications, in a loop of their own (no branch
    // to mispredict). The running value is kept below 2^62 but not reduced (mul_add_folded): the
    // reduction of each stored value is off the chain. The chain takes two words per step,
    // P(i + 2) = P(i) B^(len_i + len_i+1) + (h_i B^len_i+1 + h_i+1), so only one multiplication
    // in two waits for the one before; P(i + 1) is computed beside it (the same values).
    {
      auto reduced = [](std::uint64_t v) { return v >= kMersenne61 ? v - kMersenne61 : v; };
      const std::size_t* offsets = s.offsets.data();
      const std::uint32_t* first_of = s.first_of.data();
      const std::uint64_t* word_hash = s.word_hash.data();
      std::uint64_t* prefix_hash = s.prefix_hash.data();
      std::uint64_t running = 0;
      std::size_t i = 0;
      for (; i + 2 <= w; i += 2) {
        const std::size_t first_length = offsets[i + 1] - offsets[i];
        const std::size_t second_length = offsets[i + 2] - offsets[i + 1];
        const std::uint64_t first_hash = word_hash[first_of[i]];
        const std::uint64_t pair =
            mul_add_folded(first_hash, base_power(pow, second_length), word_hash[first_of[i + 1]]);
        prefix_hash[i + 1] =
            reduced(mul_add_folded(running, base_power(pow, first_length), first_hash));
        running = mul_add_folded(running, base_power(pow, first_length + second_length), pair);
        prefix_hash[i + 2] = reduced(running);
      }
      for (; i < w; ++i) {
        running = mul_add_folded(running, base_power(pow, offsets[i + 1] - offsets[i]),
                                 word_hash[first_of[i]]);
        prefix_hash[i + 1] = reduced(running);
      }
    }
  }
  const std::string_view all(s.joined.data(), size);
  const std::vector<std::size_t>& offsets = s.offsets;
  const std::vector<std::uint64_t>& prefix = s.prefix_hash;

  for (std::size_t n = 5; n <= 10; ++n) {
    const auto metric = static_cast<Metric>(kGopherDup5gramCharRatio + (n - 5));
    if (skip[n - 5]) {  // (the bound is in `out`)
      if (stop != nullptr && (*stop)(metric)) return;
      continue;
    }
    std::size_t repeated = 0;
    if (w >= n) {
      // (a filter's pass that may end early: see bound_from)
      const std::size_t passing =
          bounded ? largest_passing_count((*passes_at)[n - 2], chars) : kNoCount;
      const std::size_t* bound_from = s.bound_from.data() + (n - 5);
      table.reset(live);
      auto bytes_of = [&](std::size_t i) {
        return all.substr(offsets[i], offsets[i + n] - offsets[i]);
      };
      // Left to right over the live positions; after a repeat at i the next n-gram looked at
      // starts at i + n or later (datatrove's skip), the others are skipped anyway.
      std::size_t next = 0;
      for (std::size_t k = 0; k < live; ++k) {
        const std::uint32_t i = s.live_list[k];
        if (i + n > w) break;
        if (passing != kNoCount && repeated + bound_from[6 * k] <= passing) {
          repeated += bound_from[6 * k];
          break;
        }
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
    out[metric] = ratio(repeated, chars);
    if (stop != nullptr && (*stop)(metric)) return;
  }
}

}  // namespace

void gopher_repetition_metrics(Document& doc, Metrics& out, StopAfter stop,
                               const NgramPassesAt* ngram_passes_at) {
  auto stop_after = [&](Metric last) { return stop != nullptr && (*stop)(last); };
  const std::string_view text = doc.text();
  const std::size_t chars = doc.chars(text);
  ProbeTable& table = doc.table();
  Document::Scratch& s = doc.scratch();
  const bool ascii = doc.ascii();
  out[kChars] = static_cast<double>(chars);
  if (stop_after(kChars)) return;

  const std::size_t runs = newline_runs(text, s.newline_positions, s.newline_runs);
  const std::string_view stripped = strip(text);
  const auto lo = static_cast<std::size_t>(stripped.data() - text.data());
  split_newline_runs(text, lo, lo + stripped.size(), s.newline_runs.data(), runs, 2, s.pieces);
  const auto [para_dups, para_chars] = find_duplicates(table, s.pieces, ascii);
  out[kGopherDupParaRatio] = ratio(para_dups, s.pieces.size());
  out[kGopherDupParaCharRatio] = ratio(para_chars, chars);
  if (stop_after(kGopherDupParaCharRatio)) return;
  split_newline_runs(text, 0, text.size(), s.newline_runs.data(), runs, 1, s.pieces);
  const auto [line_dups, line_chars] = find_duplicates(table, s.pieces, ascii);
  out[kGopherDupLineRatio] = ratio(line_dups, s.pieces.size());
  out[kGopherDupLineCharRatio] = ratio(line_chars, chars);
  if (stop_after(kGopherDupLineCharRatio)) return;

  const std::vector<std::string_view>& words = doc.tokens();
  const std::size_t w = words.size();
  // One pass over the words: prefix_chars (code points of words[0, i)) and the word interning
  // (first_of[i]: where words[i] first occurs, so that n-grams of words compare as runs of
  // integers). A word's key is its first 16 bytes (WordKey), read once and kept per position
  // with the length below 16 bytes, so a table hit is confirmed from two integers; words of 16
  // bytes or more also compare their lengths and bytes.
  grow(s.prefix_chars, w + 1);
  s.prefix_chars[0] = 0;
  grow(s.first_of, w);
  grow(s.counts, w);
  grow(s.word_keys, 2 * w);
  grow(s.key_hash, w);
  const char* text_end = text.data() + text.size();
  const KeyHasher hasher(hash_seed());
  // First the keys, hashes and code points, position by position with no table access (so that
  // the work of many words overlaps), then the table lookups. (Raw pointers and the running
  // count in a register: through the vectors, each 8-byte store could be the count, which the
  // compiler then reloaded from memory at every word, one chain through the whole loop.)
  // A word's key: its first 16 bytes as two integers, zero past its end, with byte 15 holding
  // its length below 16 bytes and 0xFF from 16 on (interning_high: the key alone tells words of
  // up to 15 bytes apart, and from all longer ones), side by side so that a table hit is
  // confirmed from one cache line.
  std::uint64_t* keys = s.word_keys.data();
  std::uint64_t* key_hash = s.key_hash.data();
  std::size_t* prefix_chars = s.prefix_chars.data();
  std::size_t chars_before = 0;
  for (std::size_t i = 0; i < w; ++i) {
    const std::string_view word = words[i];
    const std::size_t n = word.size();
    const WordKey key = word_key(word, text_end);
    keys[2 * i] = key.low;
    keys[2 * i + 1] = interning_high(key.high, n);
    const std::size_t code_points =
        ascii ? n : (n <= 16 ? n - continuation_bytes(key) : count_code_points(word));
    chars_before += code_points;
    prefix_chars[i + 1] = chars_before;
    key_hash[i] = n <= 16 ? hasher.word(key.low, key.high, n) : hash_bytes(word);
  }
  table.reset(w);
  std::uint32_t* first_of = s.first_of.data();
  // seen_again[first]: whether the word first seen there occurs again. Stored, never read back
  // (no chain through memory when a word repeats at once): its first occurrence writes 0, every
  // later one, which comes after, 1.
  std::uint32_t* seen_again = s.counts.data();
  for (std::size_t i = 0; i < w; ++i) {
    const std::uint64_t low = keys[2 * i];
    const std::uint64_t high = keys[2 * i + 1];
    const std::size_t n = words[i].size();
    const std::uint32_t first = table.find_or_insert_first_probe(
        key_hash[i], static_cast<std::uint32_t>(i),
        [&](std::uint32_t stored) {  // (16 bytes or more: nonzero, the full comparison decides)
          return (keys[2 * stored] ^ low) | (keys[2 * stored + 1] ^ high) |
                 static_cast<std::uint64_t>(n >= 16);
        },
        [&](std::uint32_t stored) {
          return keys[2 * stored] == low && keys[2 * stored + 1] == high &&
                 words[stored].size() == n && (n < 16 || words[stored] == words[i]);
        });
    first_of[i] = first;
    seen_again[first] = first != i ? 1 : 0;
  }
  // A filter that only asks whether the top n-gram ratios pass their thresholds skips the passes
  // from some n on when bounds from the words' counts pass them. The top n-gram's value is its
  // count c times its code points + n - 1, and each of its c occurrences starts at a different
  // position, so each of its n words occurs c times or more: its value is at most the bound of
  // one of its positions, min(count of each word there) * (the span's code points + n - 1). The
  // largest of those over all positions bounds the metric (one pass, the three lengths at once;
  // positions are taken by their last word, the counts of the words before it in registers,
  // 0 before the first word, which makes the bound of a span that starts before the text 0).
  // The 4-gram pass is then skipped too, and the 5..10-gram stage has no word 4-gram classes
  // (SameWords null). (On the real corpus, 1,092 of the 1,393 documents that reach them skip all
  // three passes and 14 more the 4-gram pass or the 3- and 4-gram passes; with one bound per
  // document, n * max(count * code points) + (n - 1) * max(count) over its words, 541 skipped
  // all three and none fewer.)
  std::size_t top_skipped_from = 5;  // the first n whose pass (and every later one) is skipped
  std::array<std::size_t, 3> top_bound{};
  if (ngram_passes_at != nullptr && chars != 0 && w != 0) {
    grow(s.word_count, w);
    std::uint32_t* count = s.word_count.data();
    std::fill_n(count, w, 0u);
    for (std::size_t i = 0; i < w; ++i) ++count[first_of[i]];
    std::size_t bound2 = 0;
    std::size_t bound3 = 0;
    std::size_t bound4 = 0;
    std::size_t count1 = 0;  // the counts of the words 1, 2 and 3 before i
    std::size_t count2 = 0;
    std::size_t count3 = 0;
    std::size_t before1 = 0;  // prefix_chars[i - 1], [i - 2], [i - 3] (0 before the text)
    std::size_t before2 = 0;
    std::size_t before3 = 0;
    for (std::size_t i = 0; i < w; ++i) {  // (min and max: no branch)
      const std::size_t count0 = count[first_of[i]];
      const std::size_t end = prefix_chars[i + 1];
      const std::size_t min2 = std::min(count0, count1);
      const std::size_t min3 = std::min(min2, count2);
      const std::size_t min4 = std::min(min3, count3);
      bound2 = std::max(bound2, min2 * (end - before1 + 1));
      bound3 = std::max(bound3, min3 * (end - before2 + 2));
      bound4 = std::max(bound4, min4 * (end - before3 + 3));
      count3 = count2;
      count2 = count1;
      count1 = count0;
      before3 = before2;
      before2 = before1;
      before1 = prefix_chars[i];
    }
    top_bound = {bound2, bound3, bound4};
    while (top_skipped_from > 2) {
      const std::size_t n = top_skipped_from - 1;
      if (!(ratio(top_bound[n - 2], chars) <= (*ngram_passes_at)[n - 2])) break;
      top_skipped_from = n;
    }
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
  if (top_skipped_from > 2) {                        // (the 2-gram pass's input)
    cls.assign(s.first_of.begin(), s.first_of.begin() + static_cast<std::ptrdiff_t>(w));
    // (first_of stays: the word interning)
    repeated.resize(w);
    // (raw pointers: a byte store may alias a vector's own pointers, which the compiler would
    // reload at every step)
    const std::uint32_t* c = cls.data();
    const std::uint32_t* counts = s.counts.data();
    std::uint8_t* r = repeated.data();
    for (std::size_t i = 0; i < w; ++i) r[i] = counts[c[i]] != 0 ? 1 : 0;  // (seen_again)
  }
  for (std::size_t n = 2; n <= 4; ++n) {
    if (n >= top_skipped_from) {  // (and so are the later ones)
      const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
      out[metric] = ratio(top_bound[n - 2], chars);
      if (stop_after(metric)) return;
      continue;
    }
    std::size_t top = 0;
    if (w >= n) {
      const std::size_t positions = w - n + 1;
      s.counts.assign(positions, 0);
      s.next_class.resize(positions);
      // The positions to look up, listed without branches (each n-gram not looked up occurs
      // once: its own class); the table is sized for them alone, so it stays small.
      s.live_list.resize(positions + 8);  // (a block of 8 may write up to 8 slots past `listed`)
      std::uint32_t* looked_up = s.live_list.data();
      std::uint32_t* next_class = s.next_class.data();
      const std::uint8_t* r = repeated.data();
      for (std::size_t i = 0; i < positions; ++i) next_class[i] = static_cast<std::uint32_t>(i);
      // Eight positions at a time: their flags as the bytes of one integer, whose product with
      // 0x0101... holds the running counts, so where each one is written depends on `listed`
      // once per block, not on the flag loaded just before (a chain of loads and stores the core
      // could not overlap). Each position is written where the next listed one goes (ascending,
      // so a listed one is written last there).
      std::size_t listed = 0;
      std::size_t at = 0;
      for (; at + 8 <= positions; at += 8) {  // (reads r[at .. at + 8], all below positions + 1)
        const std::uint64_t pairs =
            internal::load_le<std::uint64_t>(r + at) & internal::load_le<std::uint64_t>(r + at + 1);
        const std::uint64_t before = (pairs * 0x0101010101010101ULL) - pairs;  // exclusive sums
        for (unsigned k = 0; k < 8; ++k) {
          looked_up[listed + ((before >> (8 * k)) & 0xFF)] = static_cast<std::uint32_t>(at + k);
        }
        listed += static_cast<std::size_t>(((pairs * 0x0101010101010101ULL) >> 56) & 0xFF);
      }
      for (; at < positions; ++at) {
        looked_up[listed] = static_cast<std::uint32_t>(at);
        listed += static_cast<std::size_t>(r[at] & r[at + 1]);
      }
      IntKeyTable& gram_table = s.gram_table;
      gram_table.reset(listed);
      const std::uint32_t* c = cls.data();
      std::uint32_t* counts = s.counts.data();
      for (std::size_t k = 0; k < listed; ++k) {
        const std::uint32_t i = looked_up[k];
        const std::uint64_t key = (std::uint64_t{c[i]} << 32) | c[i + 1];
        const std::uint32_t first = gram_table.find_or_insert(hasher.integer(key), key, i);
        next_class[i] = first;
      }
      // Counted after the lookups: in that loop, a count's place comes from the probe just made,
      // and a later probe's load could not start before it was known.
      // The most frequent n-gram, ties to the first one (counts are kept at first
      // occurrences); the first n-gram, once, unless one repeats. Only looked-up n-grams are
      // counted, so the highest count is taken as they are.
      std::uint32_t best_count = 1;
      for (std::size_t k = 0; k < listed; ++k) {
        best_count = std::max(best_count, ++counts[next_class[looked_up[k]]]);
      }
      std::size_t best_first = 0;
      if (best_count > 1) {
        best_first =
            static_cast<std::size_t>(std::find(counts, counts + positions, best_count) - counts);
      }
      top = (s.prefix_chars[best_first + n] - s.prefix_chars[best_first] + n - 1) * best_count;
      if (n < 4) {
        cls.swap(s.next_class);
        const std::uint32_t* next = cls.data();
        std::uint8_t* rw = repeated.data();
        // An n-gram not looked up occurs once (its count stays 0): only the looked-up ones can
        // repeat.
        std::fill_n(rw, positions, std::uint8_t{0});
        for (std::size_t k = 0; k < listed; ++k) {
          const std::uint32_t i = looked_up[k];
          rw[i] = counts[next[i]] >= 2 ? 1 : 0;
        }
        repeated.resize(positions);
      }
    }
    const auto metric = static_cast<Metric>(kGopherTop2gramCharRatio + (n - 2));
    out[metric] = ratio(top, chars);
    if (stop_after(metric)) return;
  }

  // The word 4-gram classes (the last pass left them in next_class, one per position).
  const SameWords same_words{top_skipped_from == 5 ? s.next_class.data() : nullptr};
  dup_ngram_char_ratios(table, text, words, same_words, chars, s, out, stop, ngram_passes_at);
}

}  // namespace luminamoon::data::quality_internal
