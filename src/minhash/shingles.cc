// The MinHash tokenizer: strict UTF-8 decoding (a byte that does not start a valid sequence is a
// separator), word characters from the generated Unicode tables, simple lowercasing, and the
// word/character shingle windows over the normalised text.
#include "minhash/internal/shingles.h"

#include <array>
#include <bit>

#if defined(__SSE2__)
#include <emmintrin.h>  // baseline on x86-64: no dispatch needed
#endif

#include "common/internal/utf8.h"
#include "minhash/internal/unicode_tables.h"

// XXH3-64 (seed 0) inlined into the shingle loop: the same function luminamoon::data::xxh3_64
// calls (common/xxh3.cc), without a call per shingle.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luminamoon::data::minhash_internal {
namespace {

// ASCII: the lowercased byte for [0-9A-Za-z], 0 for every separator.
constexpr std::array<char, 128> make_ascii_table() {
  std::array<char, 128> t{};
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<char>(c);
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<std::size_t>(c)] = static_cast<char>(c);
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<std::size_t>(c)] = static_cast<char>(c + 32);
  return t;
}
constexpr std::array<char, 128> kAscii = make_ascii_table();

// Copies the run of ASCII word characters at p (lowercased) to out; returns its length.
inline std::size_t copy_ascii_word_run(const std::uint8_t* p, const std::uint8_t* end,
                                       std::uint8_t* out) {
  std::size_t n = 0;
#if defined(__SSE2__)
  // 16 bytes at a time; `out` has 16 bytes of slack past the normalised text's bound.
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Bytes >= 0x80 are negative as signed bytes, so they fail both range tests.
    const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    const __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                        _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), folded));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                        _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), v));
    const __m128i lowered = _mm_or_si128(v, _mm_and_si128(alpha, _mm_set1_epi8(0x20)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + n), lowered);
    const auto word = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(alpha, digit)));
    const auto run = static_cast<std::size_t>(std::countr_one(word));
    n += run;
    p += run;
    if (run < 16) return n;
  }
#endif
  while (p < end && *p < 0x80) {
    const char c = kAscii[*p];
    if (c == 0) break;
    out[n++] = static_cast<std::uint8_t>(c);
    ++p;
  }
  return n;
}

// One well-formed UTF-8 sequence of 2..4 bytes at p, by the common decoder
// (common/internal/utf8.h). Returns its length, or 0 when p does not start one.
inline std::size_t decode_multibyte(const std::uint8_t* p, const std::uint8_t* end,
                                    std::uint32_t& cp) {
  const utf8_internal::Decoded d =
      utf8_internal::decode_multibyte(p, static_cast<std::size_t>(end - p));
  if (d.error != utf8_internal::Utf8Error::kNone) return 0;
  cp = d.code_point;
  return d.length;
}

}  // namespace

Shingler::Shingler(ShingleKind kind, std::uint32_t ngram)
    : kind_(kind), ngram_(ngram), ring_(ngram), begins_(kChunk), ends_(kChunk), chunk_(kChunk) {}

inline void Shingler::emit(std::size_t begin) {
  begins_[chunk_size_] = begin;
  ends_[chunk_size_] = norm_size_;
  ++chunk_size_;
  ++shingles_;
  if (chunk_size_ == kChunk) flush();
}

void Shingler::flush() {
  if (chunk_size_ == 0) return;
  const char* norm = norm_.data();
  for (std::size_t i = 0; i < chunk_size_; ++i) {
    chunk_[i] = XXH3_64bits(norm + begins_[i], ends_[i] - begins_[i]);
  }
  sink_(context_, chunk_.data(), chunk_size_);
  chunk_size_ = 0;
}

inline void Shingler::append_code_point(std::uint32_t cp) {
  const std::size_t start = norm_size_;
  norm_size_ +=
      utf8_internal::encode(cp, reinterpret_cast<std::uint8_t*>(norm_.data()) + norm_size_);
  if (kind_ == ShingleKind::kChar) push_unit(start);
}

inline void Shingler::push_unit(std::size_t start) {
  // ring_ holds the starts of the last ngram units; ring_pos_ is where the next one goes, which
  // once the ring is full is also the oldest one's slot.
  ring_[ring_pos_] = start;
  ring_pos_ = ring_pos_ + 1 == ngram_ ? 0 : ring_pos_ + 1;
  ++units_;
  if (units_ >= ngram_) emit(ring_[ring_pos_]);
}

std::size_t Shingler::run(std::string_view document, ShingleSink sink, void* context) {
  sink_ = sink;
  context_ = context;
  units_ = 0;
  ring_pos_ = 0;
  shingles_ = 0;
  chunk_size_ = 0;
  norm_size_ = 0;
  // The normalised text is never longer than 3/2 of the input plus one byte: a lowercase
  // mapping grows a character by at most half (2 -> 3 bytes), and a token separator becomes
  // one space only where a separator byte was. Sized once, so appends never check capacity;
  // the 32 bytes past that bound are slack for 16-byte stores.
  const std::size_t need = document.size() + document.size() / 2 + 32;
  if (norm_.size() < need) norm_.resize(need);
  if (kind_ == ShingleKind::kWord) {
    run_words(document);
  } else {
    run_chars(document);
  }
  // A non-empty document shorter than one shingle is one shingle: the whole normalised text.
  if (units_ != 0 && units_ < ngram_) emit(0);
  flush();
  return shingles_;
}

// Word shingles. Two paths that make the same tokens:
//  * 64 bytes of pure ASCII at a time (the common case): word-character masks from four SSE2
//    compares, token boundaries found by bit scans, each token copied lowercased from the
//    block with 16-byte stores;
//  * one code point at a time wherever a block holds a byte >= 0x80 (UTF-8 decoding, Unicode
//    word flags and lowercasing), until the input is past that block.
// A token may start in one path and end in the other (`in_token`). The hot state lives in
// locals, written back only around flush(): the byte stores into the normalised text may alias
// any member, which would otherwise be reloaded after each of them.
std::size_t Shingler::run_words(std::string_view document) {
  std::uint8_t* const norm = reinterpret_cast<std::uint8_t*>(norm_.data());
  std::size_t* const ring = ring_.data();
  std::size_t* const begins = begins_.data();
  std::size_t* const ends = ends_.data();
  const std::uint32_t ngram = ngram_;
  std::size_t size = 0;  // norm_size_
  std::size_t token_start = 0;
  std::uint32_t ring_pos = 0;
  std::uint64_t units = 0;
  std::size_t pending = 0;  // chunk_size_
  std::size_t shingles = 0;
  const auto* p = reinterpret_cast<const std::uint8_t*>(document.data());
  const std::uint8_t* const end = p + document.size();
  std::size_t tokens = 0;
  bool in_token = false;
  const std::uint8_t* scalar_until = p;  // the scalar path runs at least up to here
  const auto start_token = [&] {
    if (tokens++ != 0) norm[size++] = ' ';
    token_start = size;
    in_token = true;
  };
  const auto end_token = [&] {
    in_token = false;
    // ring holds the starts of the last ngram tokens; ring_pos is where the next one goes,
    // which once the ring is full is also the oldest one's slot.
    ring[ring_pos] = token_start;
    ring_pos = ring_pos + 1 == ngram ? 0 : ring_pos + 1;
    if (++units < ngram) return;
    begins[pending] = ring[ring_pos];
    ends[pending] = size;
    ++shingles;
    if (++pending == kChunk) {
      chunk_size_ = pending;
      flush();
      pending = 0;
    }
  };
  while (p < end) {
#if defined(__SSE2__)
    if (p >= scalar_until && end - p >= 64) {
      // 16 bytes past the block: a token's last 16-byte store may read them (into the slack
      // past the normalised text), so they are defined.
      alignas(16) std::uint8_t lowered[64 + 16];
      _mm_store_si128(reinterpret_cast<__m128i*>(lowered + 64), _mm_setzero_si128());
      std::uint64_t word = 0;
      std::uint64_t high = 0;
      for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
        const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        const __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                            _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), folded));
        const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                            _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), v));
        _mm_store_si128(reinterpret_cast<__m128i*>(lowered + 16 * k),
                        _mm_or_si128(v, _mm_and_si128(alpha, _mm_set1_epi8(0x20))));
        word |=
            std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_or_si128(alpha, digit)))}
            << (16 * k);
        high |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(v))} << (16 * k);
      }
      if (high != 0) {
        scalar_until = p + 64;  // not pure ASCII: this block goes the scalar way
        continue;
      }
      unsigned pos = 0;
      for (;;) {
        if (in_token) {
          // The word run from pos (to the block's end when every byte left is a word byte).
          const std::uint64_t rest = ~word >> pos;
          const unsigned run = rest == 0 ? 64 - pos : static_cast<unsigned>(std::countr_zero(rest));
          for (unsigned k = 0; k < run; k += 16) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(norm + size + k),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(lowered + pos + k)));
          }
          size += run;
          pos += run;
          if (pos == 64) break;  // the token goes on in the next block
          end_token();
        }
        const std::uint64_t rest = word >> pos;
        if (rest == 0) break;  // separators to the block's end
        pos += static_cast<unsigned>(std::countr_zero(rest));
        start_token();
      }
      p += 64;
      continue;
    }
#endif
    if (!in_token) {
      // Between tokens: one separator (ASCII, an invalid byte, or a non-word code point), or
      // the start of a token.
      if (*p < 0x80) {
        if (kAscii[*p] == 0) {
          ++p;
          continue;
        }
        start_token();  // the character is copied by the in-token step
        continue;
      }
      std::uint32_t cp = 0;
      const std::size_t length = decode_multibyte(p, end, cp);
      if (length == 0) {  // not valid UTF-8 here: a separator, as U+FFFD would be
        ++p;
        continue;
      }
      p += length;
      const std::uint8_t flags = code_point_flags(cp);
      if ((flags & kWordFlag) == 0) continue;
      if ((flags & kHasLowerFlag) != 0) cp = simple_lower(cp);
      start_token();
      size += utf8_internal::encode(cp, norm + size);
      continue;
    }
    // Inside a token: copy ASCII runs straight through, one multibyte word character at a time.
    const std::size_t run = copy_ascii_word_run(p, end, norm + size);
    p += run;
    size += run;
    if (p == end) break;
    if (*p < 0x80) {  // an ASCII separator (copy_ascii_word_run stops only there or at >= 0x80)
      end_token();
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t length = decode_multibyte(p, end, cp);
    const std::uint8_t flags = length == 0 ? 0 : code_point_flags(cp);
    if ((flags & kWordFlag) == 0) {
      // An invalid byte or a non-word character ends the token; the between-tokens step
      // reads it again as a separator.
      end_token();
      continue;
    }
    p += length;
    if ((flags & kHasLowerFlag) != 0) cp = simple_lower(cp);
    size += utf8_internal::encode(cp, norm + size);
  }
  if (in_token) end_token();
  norm_size_ = size;
  token_start_ = token_start;
  ring_pos_ = ring_pos;
  units_ = units;
  chunk_size_ = pending;
  shingles_ += shingles;
  return tokens;
}

// Character shingles: every code point of the normalised text is a unit.
std::size_t Shingler::run_chars(std::string_view document) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(document.data());
  const std::uint8_t* const end = p + document.size();
  std::size_t tokens = 0;
  while (p < end) {
    // Between tokens: skip separators. ASCII ones are the common case.
    std::uint32_t cp = 0;
    bool found = false;
    bool ascii_start = false;  // the token starts with an ASCII word character, not consumed
    for (;;) {
      while (p < end && *p < 0x80 && kAscii[*p] == 0) ++p;
      if (p == end) break;
      if (*p < 0x80) {
        ascii_start = true;
        found = true;
        break;
      }
      const std::size_t length = decode_multibyte(p, end, cp);
      if (length == 0) {  // not valid UTF-8 here: a separator, as U+FFFD would be
        ++p;
        continue;
      }
      p += length;
      const std::uint8_t flags = code_point_flags(cp);
      if ((flags & kWordFlag) == 0) continue;
      if ((flags & kHasLowerFlag) != 0) cp = simple_lower(cp);
      found = true;
      break;
    }
    if (!found) break;  // only separators were left
    // A token starts here (at p when ascii_start, else with cp).
    if (tokens++ != 0) append_code_point(' ');
    token_start_ = norm_size_;
    if (!ascii_start) {
      append_code_point(cp);
    } else {
      append_code_point(static_cast<std::uint8_t>(kAscii[*p]));
      ++p;
    }
    for (;;) {
      if (p == end) break;
      if (*p < 0x80) {
        const char c = kAscii[*p];
        if (c == 0) break;
        ++p;
        append_code_point(static_cast<std::uint8_t>(c));
        continue;
      }
      const std::size_t length = decode_multibyte(p, end, cp);
      if (length == 0) break;  // invalid byte: ends the token; the outer loop skips it
      const std::uint8_t flags = code_point_flags(cp);
      if ((flags & kWordFlag) == 0) break;
      p += length;
      if ((flags & kHasLowerFlag) != 0) cp = simple_lower(cp);
      append_code_point(cp);
    }
  }
  return tokens;
}

}  // namespace luminamoon::data::minhash_internal
