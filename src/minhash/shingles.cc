// The MinHash tokenizer: strict UTF-8 decoding (a byte that does not start a valid sequence is a
// separator), word characters from the generated Unicode tables, simple lowercasing, and the
// word/character shingle windows over the normalised text.
#include "minhash/internal/shingles.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>  // baseline on x86-64: no dispatch needed
#endif
#if defined(__x86_64__)
#include <immintrin.h>  // PSHUFB, VPCOMPRESSB, PEXT: in the AVX2 / VBMI2 functions only
#endif

#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8.h"
#include "minhash/internal/kernels.h"
#include "minhash/internal/shingle_hash.h"
#include "minhash/internal/unicode_tables.h"

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

// What mark_multibyte needs of a 2-byte character (U+0080..U+07FF, most of the multibyte text of
// European languages), from code_point_flags and simple_lower once: one load, where those take
// two dependent loads and, for a capital, a binary search.
struct TwoByteChar {
  std::uint8_t lower[2];  // the lowercase's encoding; the character's own when it has none
  std::uint8_t flags;     // kWordFlag, and kLowerNotTwoBytes
};
constexpr std::uint8_t kLowerNotTwoBytes = 4;  // a word character whose lowercase is not 2 bytes

inline const TwoByteChar* two_byte_chars() {
  static const std::array<TwoByteChar, 0x800> table = [] {
    std::array<TwoByteChar, 0x800> t{};
    for (std::uint32_t cp = 0x80; cp < 0x800; ++cp) {
      const std::uint8_t flags = code_point_flags(cp);
      const std::uint32_t lower = (flags & kHasLowerFlag) != 0 ? simple_lower(cp) : cp;
      std::uint8_t bytes[4] = {};
      TwoByteChar& c = t[cp];
      c.flags = flags & kWordFlag;
      if (utf8_internal::encode(lower, bytes) != 2) c.flags |= kLowerNotTwoBytes;
      c.lower[0] = bytes[0];
      c.lower[1] = bytes[1];
    }
    return t;
  }();
  return table.data();
}

// Marks the multibyte sequences of a 64-byte block that is not pure ASCII, so that the block can
// still be read at once: bits of `leads` are its bytes >= 0xC0, the only ones a sequence starts
// with (a continuation byte 0x80-0xBF that no valid sequence takes is a separator, as on the
// code-point path: there is nothing to mark for it; and the loop carries only a bit clear from one
// lead to the next). Each sequence is decoded as the code-point path would decode it at that byte
// (against the document's `end`): a word character sets its bytes in `word` and leaves its
// lowercase encoding at the same place in `lowered`; a non-word character or an invalid lead
// stays a separator. Returns how many of the block's bytes
// are decided: 64; or i < 64 when a valid sequence starting at byte i runs past the block (bytes
// from i on are left to the next block, their bits unchanged); or 0, with nothing to keep, when
// the block has to go the code-point way after all: a lowercase mapping changes the encoded
// length (so the bytes would move).
inline unsigned mark_multibyte(const std::uint8_t* block, const std::uint8_t* end,
                               std::uint64_t leads, std::uint64_t& word, std::uint8_t* lowered) {
  const TwoByteChar* const two_byte = two_byte_chars();
  std::uint64_t marked = 0;
  for (std::uint64_t pending = leads; pending != 0; pending &= pending - 1) {
    const auto i = static_cast<unsigned>(std::countr_zero(pending));
    std::uint32_t cp = 0;
    std::size_t length = 0;
    const std::uint8_t b0 = block[i];
    // The common well-formed 2- and 3-byte sequences inline (the decoder's rules: table 3-7), the
    // rest, errors included, by the decoder. A 2-byte one is done here, from two_byte_chars().
    if (b0 >= 0xC2 && b0 <= 0xDF && i + 1 < 64 && (block[i + 1] & 0xC0U) == 0x80U) {
      const TwoByteChar& c = two_byte[((b0 & 0x1FU) << 6) | (block[i + 1] & 0x3FU)];
      if ((c.flags & kWordFlag) == 0) continue;
      if ((c.flags & kLowerNotTwoBytes) != 0) return 0;
      std::memcpy(lowered + i, c.lower, 2);
      marked |= std::uint64_t{3} << i;
      continue;
    }
    if (b0 >= 0xE1 && b0 <= 0xEC && i + 2 < 64 && (block[i + 1] & 0xC0U) == 0x80U &&
        (block[i + 2] & 0xC0U) == 0x80U) {
      cp = ((b0 & 0x0FU) << 12) | ((block[i + 1] & 0x3FU) << 6) | (block[i + 2] & 0x3FU);
      length = 3;
    } else {
      length = decode_multibyte(block + i, end, cp);
    }
    if (length == 0) continue;  // not valid UTF-8 here: a separator, as on the code-point path
    if (i + length > 64) {
      word |= marked;
      return i;
    }
    const std::uint64_t bits = ((std::uint64_t{1} << length) - 1) << i;
    const std::uint8_t flags = code_point_flags(cp);
    if ((flags & kWordFlag) == 0) continue;
    if ((flags & kHasLowerFlag) != 0) {
      // `lowered` has 16 bytes past the block, so a longer encoding stays in bounds.
      if (utf8_internal::encode(simple_lower(cp), lowered + i) != length) return 0;
    } else if (length == 3) {  // fixed sizes: a memcpy of `length` bytes would be a byte loop
      std::memcpy(lowered + i, block + i, 3);
    } else {
      std::memcpy(lowered + i, block + i, length == 4 ? 4 : 2);
    }
    marked |= bits;
  }
  word |= marked;
  return 64;
}

#if defined(__SSE2__)
// Bits of a 64-byte block's bytes >= 0xC0 (mark_multibyte's `leads`), for the SSE2 block paths.
inline std::uint64_t lead_bytes(const std::uint8_t* block) {
  std::uint64_t leads = 0;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * k));
    const __m128i top = _mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xC0)));
    const __m128i lead = _mm_cmpeq_epi8(top, _mm_set1_epi8(static_cast<char>(0xC0)));
    leads |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(lead))} << (16 * k);
  }
  return leads;
}
#endif

// The compact path's table: for each mask of 8 bytes, the PSHUFB indices that move the kept bytes
// (set bits, in order) to the front, and how many there are.
struct CompactTable {
  std::array<std::array<std::uint8_t, 8>, 256> shuffle{};
  std::array<std::uint8_t, 256> count{};
};

constexpr CompactTable make_compact_table() {
  CompactTable t;
  for (unsigned mask = 0; mask < 256; ++mask) {
    std::uint8_t n = 0;
    for (std::uint8_t bit = 0; bit < 8; ++bit) {
      if ((mask >> bit) & 1U) t.shuffle[mask][n++] = bit;
    }
    for (std::uint8_t k = n; k < 8; ++k) t.shuffle[mask][k] = 0x80;  // PSHUFB writes 0 there
    t.count[mask] = n;
  }
  return t;
}

constexpr CompactTable kCompactTable = make_compact_table();

#if defined(__x86_64__)
// PSHUFB for run_words<true>, which is only ever inlined into the AVX2 function
// run_words_compact (a template cannot carry the target attribute of one instantiation).
LUMINAMOON_AVX2 inline __m128i shuffle_bytes(__m128i bytes, __m128i order) {
  return _mm_shuffle_epi8(bytes, order);
}

// The compress path (AsciiPath::kCompress): AVX-512 (the avx512 level) with VBMI2 (VPCOMPRESSB)
// and BMI2 (PEXT), in functions only ever inlined into run_words_compress.
#define LUMINAMOON_VBMI2 LUMINAMOON_AVX512_VBMI2

// The compress path's constants, loaded whole (a 64-byte load uses a load port; a broadcast from
// a general register would take port 5, which the compares and VPCOMPRESSB need).
struct alignas(64) WideConstants {
  std::uint8_t iota[64];                             // 0, 1, ..., 63
  std::uint8_t minus_lower[64], minus_digit[64];     // -'a', -'0'
  std::uint8_t letters[64], digits[64], spaces[64];  // 26, 10, ' '
  std::uint8_t leads[64];                            // 0xC0
};

constexpr WideConstants make_wide_constants() {
  WideConstants c{};
  for (unsigned i = 0; i < 64; ++i) {
    c.iota[i] = static_cast<std::uint8_t>(i);
    c.minus_lower[i] = static_cast<std::uint8_t>(256 - 'a');
    c.minus_digit[i] = static_cast<std::uint8_t>(256 - '0');
    c.letters[i] = 26;
    c.digits[i] = 10;
    c.spaces[i] = ' ';
    c.leads[i] = 0xC0;
  }
  return c;
}

constexpr WideConstants kWideConst = make_wide_constants();

LUMINAMOON_VBMI2 inline __m512i wide_constant(const std::uint8_t (&bytes)[64]) {
  __m512i c = _mm512_load_si512(bytes);
  // Opaque to the compiler, which would otherwise rebuild the constant in every block (the calls
  // in the loop clobber every vector register) by a broadcast from a general register: two
  // more port-5 micro-ops each, where this is one load.
  asm("" : "+v"(c));
  return c;
}

// The block at p: 64 bytes, or the document's last `left` < 64 bytes then spaces, by a masked
// load that reads no byte past the document (a masked-off byte neither faults nor is read).
LUMINAMOON_VBMI2 inline __m512i wide_load(const std::uint8_t* p, std::size_t left) {
  if (left >= 64) return _mm512_loadu_si512(p);
  return _mm512_mask_loadu_epi8(wide_constant(kWideConst.spaces),
                                _bzhi_u64(~std::uint64_t{0}, left), p);
}

// The block's word bytes (ASCII letters and digits), its bytes >= 0x80, and (returned) its bytes
// lowercased with every other byte a space.
LUMINAMOON_VBMI2 inline __m512i wide_masks(__m512i v, std::uint64_t& word, std::uint64_t& high) {
  // Setting bit 0x20 lowercases a letter and leaves a digit as it is. Unsigned ranges: bytes
  // >= 0x80 fall outside both.
  const __m512i spaces = wide_constant(kWideConst.spaces);  // 0x20
  const __m512i folded = _mm512_or_si512(v, spaces);
  const __mmask64 letter =
      _mm512_cmplt_epu8_mask(_mm512_add_epi8(folded, wide_constant(kWideConst.minus_lower)),
                             wide_constant(kWideConst.letters));
  const __mmask64 digit = _mm512_cmplt_epu8_mask(
      _mm512_add_epi8(v, wide_constant(kWideConst.minus_digit)), wide_constant(kWideConst.digits));
  const __mmask64 is_word = letter | digit;
  word = is_word;
  high = _mm512_movepi8_mask(v);
  // Every byte that is not a word byte becomes a space.
  return _mm512_mask_mov_epi8(spaces, is_word, folded);
}

// Stores size + r for each set bit r of `ranks` (n of them, at most 32), in order, at out[0, n);
// out[n, 32) may be written too. One VPCOMPRESSB of 0..63 lists the ranks as bytes, widened 8 at
// a time: no loop over the bits, whose exit would be mispredicted in most blocks.
LUMINAMOON_VBMI2 inline void wide_starts(std::size_t* out, std::size_t size, std::uint64_t ranks,
                                         std::size_t n) {
  const __m512i at = _mm512_maskz_compress_epi8(ranks, wide_constant(kWideConst.iota));
  const __m512i base = _mm512_set1_epi64(static_cast<long long>(size));
  // Eight ranks widened to 64 bits and added to size. The zero-masked forms of the widening and
  // the extracts: the plain ones (and _mm512_castsi512_si128) go through GCC 12's
  // _mm512_undefined_epi32, a false -Wmaybe-uninitialized (GCC bug 105593).
  const auto widen = [&](__m128i ranks8) LUMINAMOON_VBMI2 {
    return _mm512_add_epi64(base, _mm512_maskz_cvtepu8_epi64(0xFF, ranks8));
  };
  const __m128i first = _mm512_maskz_extracti32x4_epi32(0xF, at, 0);
  _mm512_storeu_si512(out, widen(first));
  _mm512_storeu_si512(out + 8, widen(_mm_unpackhi_epi64(first, first)));
  if (n > 16) {
    const __m128i second = _mm512_maskz_extracti32x4_epi32(0xF, at, 1);
    _mm512_storeu_si512(out + 16, widen(second));
    _mm512_storeu_si512(out + 24, widen(_mm_unpackhi_epi64(second, second)));
  }
}

// Appends the first `length` bytes of a block of the compress path: its kept bytes (`lowered`,
// as `word` marks the word bytes) to norm at `size`, its token starts to `starts` at `held`, and
// carries the state to the next block. Inlined twice: with length 64, the common case, whose
// masks then need no trimming, and with a block cut before a multibyte sequence.
[[gnu::always_inline]] LUMINAMOON_VBMI2 inline void wide_append(
    __m512i lowered, std::uint64_t word, unsigned length, std::uint8_t* norm, std::size_t* starts,
    std::size_t& size, std::size_t& held, std::size_t& tokens, bool& in_token, bool& spaced) {
  const std::uint64_t before = (word << 1) | (in_token ? 1U : 0U);
  const std::uint64_t firsts = word & ~before;  // token starts
  // First separators, kept as one space; none past the bytes decided (`word` has no bits there).
  const std::uint64_t stops = ~word & before & _bzhi_u64(~std::uint64_t{0}, length);
  const std::uint64_t keep = word | stops;
  // One VPCOMPRESSB packs the block (64 bytes stored: the rest is slack past the normalised
  // text); PEXT gives the token starts' places among the kept bytes.
  _mm512_storeu_si512(norm + size, _mm512_maskz_compress_epi8(keep, lowered));
  const auto n = static_cast<std::size_t>(std::popcount(firsts));
  wide_starts(starts + held, size, _pext_u64(firsts, keep), n);
  held += n;
  tokens += n;
  // The block's last event decides: after a stop, the text ends with that token's space; after
  // a start, with a token's bytes (still open when the block ends in a word byte).
  if (const std::uint64_t events = firsts | stops; events != 0) {
    spaced = ((stops >> (63 - std::countl_zero(events))) & 1U) != 0;
  }
  in_token = ((word >> (length - 1)) & 1U) != 0;
  size += static_cast<std::size_t>(std::popcount(keep));
}

// One block of the compress path (AsciiPath::kCompress): the compact path's steps (run_words)
// with 64-byte registers, the block kept in registers unless it has bytes >= 0x80. Reads the
// block at p (the document's last bytes when fewer than 64 are left, then spaces), appends its
// kept bytes to norm at `size` and its token starts to `starts` at `held` (which has room for
// 32), and carries the state from block to block. Returns how many bytes it read: 64 (or all
// that were left); fewer when a multibyte sequence runs past the block, which then ends before
// it (the next block starts there: no detour through the code-point path); 0, having changed
// nothing, when the block has to go the code-point way (mark_multibyte).
LUMINAMOON_VBMI2 inline unsigned wide_block(const std::uint8_t* p, const std::uint8_t* end,
                                            std::uint8_t* norm, std::size_t* starts,
                                            std::size_t& size, std::size_t& held,
                                            std::size_t& tokens, bool& in_token, bool& spaced) {
  const auto left = static_cast<std::size_t>(end - p);
  const __m512i v = wide_load(p, left);
  std::uint64_t word = 0;
  std::uint64_t high = 0;
  const __m512i lowered = wide_masks(v, word, high);
  if (high != 0) [[unlikely]] {
    // mark_multibyte reads the block and writes its lowercase bytes in memory; the last block
    // is read from a copy that ends the document there, as on the other block paths.
    alignas(64) std::uint8_t bytes[64];
    alignas(64) std::uint8_t lowered_bytes[64 + 16];
    const std::uint8_t* block = p;
    const std::uint8_t* block_end = end;
    if (left < 64) {
      _mm512_store_si512(bytes, v);
      block = bytes;
      block_end = bytes + 64;
    }
    _mm512_store_si512(lowered_bytes, lowered);
    std::uint64_t marked = word;
    const std::uint64_t leads = _mm512_cmpge_epu8_mask(v, wide_constant(kWideConst.leads));
    const unsigned length = mark_multibyte(block, block_end, leads, marked, lowered_bytes);
    if (length != 0) {
      wide_append(_mm512_load_si512(lowered_bytes), marked, length, norm, starts, size, held,
                  tokens, in_token, spaced);
    }
    return length;
  }
  wide_append(lowered, word, 64, norm, starts, size, held, tokens, in_token, spaced);
  return 64;
}

// Whether this CPU has the compress path's extensions beyond the avx512 level.
bool cpu_has_vbmi2_bmi2() noexcept {
  const internal::Avx512Extensions& e = internal::avx512_extensions();
  return e.vbmi2 && e.bmi2;
}
#endif

}  // namespace

bool ascii_path_supported(AsciiPath path) noexcept {
  switch (path) {
    case AsciiPath::kScalar:
    case AsciiPath::kTokens:
      return true;
    case AsciiPath::kCompact:
      return isa_supported(Isa::kAvx2);
    case AsciiPath::kCompress:
#if defined(__x86_64__)
      return isa_supported(Isa::kAvx512) && cpu_has_vbmi2_bmi2();
#else
      return false;
#endif
  }
  return false;
}

AsciiPath active_ascii_path() noexcept {
#if defined(__x86_64__)
  try {
    const Isa isa = active_minhash_kernel().isa;
    if (isa == Isa::kAvx512) {
      static const bool vbmi2 = cpu_has_vbmi2_bmi2();
      return vbmi2 ? AsciiPath::kCompress : AsciiPath::kCompact;
    }
    if (isa == Isa::kAvx2) return AsciiPath::kCompact;
  } catch (...) {
    // An invalid LUMINAMOON_SIMD: the kernels report it; the tokens path makes the same text.
  }
#endif
  return AsciiPath::kTokens;
}

Shingler::Shingler(ShingleKind kind, std::uint32_t ngram)
    : Shingler(kind, ngram, active_ascii_path()) {}

Shingler::Shingler(ShingleKind kind, std::uint32_t ngram, AsciiPath path)
    : kind_(kind),
      ngram_(ngram),
      path_(path),
      ring_(ngram),
      starts_(kChunk + ngram),
      begins_(kChunk),
      ends_(kChunk),
      chunk_(kChunk) {}

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

// Word shingle k (k < count) runs from token k's start to the space before token k + ngram:
// tokens are always one space apart. `last_end`, when not kNoEnd, ends one more shingle, the
// document's last (there is no next token to end it).
void Shingler::hash_word_shingles(std::size_t* starts, std::size_t count, std::size_t last_end) {
  const char* norm = norm_.data();
  const std::size_t ngram = ngram_;
  if (words_ != nullptr) {
    if (last_end != kNoEnd) {
      // The last shingle goes with the others (not in a kernel call of its own): it ends where
      // a next token would, one space on, start. That slot is free: the starts buffer is never
      // full after a push (run_words), and a document shorter than ngram tokens has fewer.
      starts[count + ngram] = last_end + 1;
      ++count;
    }
    if (count != 0) words_(context_, norm, starts, count, ngram);
    shingles_ += count;
    return;
  }
  for (std::size_t k = 0; k < count; ++k) {
    chunk_[k] = shingle_hash(norm + starts[k], starts[k + ngram] - 1 - starts[k]);
  }
  if (last_end != kNoEnd) {
    chunk_[count] = shingle_hash(norm + starts[count], last_end - starts[count]);
    ++count;
  }
  if (count != 0) sink_(context_, chunk_.data(), count);
  shingles_ += count;
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
  return run(document, sink, nullptr, context);
}

std::size_t Shingler::run(std::string_view document, ShingleSink sink, WordShingleSink words,
                          void* context) {
  sink_ = sink;
  words_ = words;
  context_ = context;
  units_ = 0;
  ring_pos_ = 0;
  shingles_ = 0;
  chunk_size_ = 0;
  norm_size_ = 0;
  // The normalised text is never longer than 3/2 of the input plus one byte: a lowercase
  // mapping grows a character by at most half (2 -> 3 bytes), and a token separator becomes
  // one space only where a separator byte was. Sized once, so appends never check capacity;
  // the 96 bytes past that bound are slack for 16- and 64-byte stores.
  const std::size_t need = document.size() + document.size() / 2 + 96;
  if (norm_.size() < need) norm_.resize(need);
  if (kind_ == ShingleKind::kWord) {
#if defined(__x86_64__)
    if (path_ == AsciiPath::kCompress) {
      run_words_compress(document);
    } else if (path_ == AsciiPath::kCompact) {
      run_words_compact(document);
    } else if (path_ == AsciiPath::kTokens) {
      run_words<AsciiPath::kTokens>(document);
    } else {
      run_words<AsciiPath::kScalar>(document);
    }
#else
    if (path_ == AsciiPath::kTokens) {
      run_words<AsciiPath::kTokens>(document);
    } else {
      run_words<AsciiPath::kScalar>(document);
    }
#endif
  } else {
    run_chars(document);
  }
  // A non-empty document shorter than one shingle is one shingle: the whole normalised text
  // (run_words hashes its own).
  if (kind_ == ShingleKind::kChar && units_ != 0 && units_ < ngram_) emit(0);
  flush();
  return shingles_;
}

// Word shingles. Two paths that make the same tokens:
//  * 64 bytes at a time (kBlocks, the common case): word-character masks from four SSE2
//    compares, the block's multibyte sequences decoded into them (mark_multibyte), then either
//    (kCompact = false, AsciiPath::kTokens) token boundaries found by bit scans, each token copied
//    lowercased from the block with 16-byte stores, or (kCompact, only instantiated in the AVX2
//    function run_words_compact) the whole block packed at once, see AsciiPath;
//  * one code point at a time (UTF-8 decoding, Unicode word flags and lowercasing) everywhere
//    without kBlocks (AsciiPath::kScalar), and otherwise over a block mark_multibyte gives back,
//    until the input is past that block.
// A token may start in one path and end in the other (`in_token`). The tokens path and the
// code-point path write the space between two tokens when the second one starts; the compact
// paths write it where the first one ends (the first separator after it), and so does the
// code-point path between their blocks (a block never has to add a space before its first token);
// `spaced` records it so that the next token does not get a second one, and it is dropped again
// at the end when no token followed. The hot state lives in locals, written back only around
// flush(): the byte stores into the normalised text may alias any member, which would otherwise be
// reloaded after each of them.
template <AsciiPath kPath>
[[gnu::always_inline]] inline std::size_t Shingler::run_words(std::string_view document) {
  // (kBlocks, kWide and scalar_until are read only where SSE2 compiles the block paths)
  [[maybe_unused]] constexpr bool kBlocks = kPath != AsciiPath::kScalar;
  constexpr bool kCompact = kPath == AsciiPath::kCompact || kPath == AsciiPath::kCompress;
  [[maybe_unused]] constexpr bool kWide = kPath == AsciiPath::kCompress;
  std::uint8_t* const norm = reinterpret_cast<std::uint8_t*>(norm_.data());
  // The starts of the tokens whose shingles are not hashed yet: when the buffer is full, the
  // first kChunk shingles are (each one's end is the space before the start ngram places on).
  std::size_t* const starts = starts_.data();
  const std::size_t ngram = ngram_;
  const std::size_t capacity = kChunk + ngram;
  std::size_t held = 0;
  std::size_t size = 0;  // norm_size_
  const auto* p = reinterpret_cast<const std::uint8_t*>(document.data());
  const std::uint8_t* const end = p + document.size();
  std::size_t tokens = 0;
  bool in_token = false;
  bool spaced = false;  // kCompact: norm ends with the space after the last token
  [[maybe_unused]] const std::uint8_t* scalar_until = p;  // the scalar path runs at least to here
  // A token starts at norm[at].
  const auto push_start = [&](std::size_t at) {
    starts[held++] = at;
    if (held == capacity) {
      hash_word_shingles(starts, kChunk, kNoEnd);
      std::copy(starts + kChunk, starts + capacity, starts);
      held = ngram;
    }
  };
  const auto start_token = [&] {
    if (tokens++ != 0 && !spaced) norm[size++] = ' ';
    spaced = false;
    push_start(size);
    in_token = true;
  };
  const auto end_token = [&] {
    in_token = false;
    if constexpr (kCompact) {
      norm[size++] = ' ';
      spaced = true;
    }
  };
  while (p < end) {
#if defined(__SSE2__)
    if (kBlocks && p >= scalar_until) {
      // The document's last bytes (fewer than 64) are read as one block padded with spaces:
      // separators, which add no token, and which end a multibyte sequence cut by the document's
      // end exactly as the end itself does (the sequence is invalid either way).
#if defined(__x86_64__)
      if constexpr (kWide) {
        // The compress path: wide_block. At most 32 tokens start in a block (each needs a
        // separator before it), and wide_block may write 32 starts: room for them is made first.
        if (held + 32 >= capacity) [[unlikely]] {
          hash_word_shingles(starts, held - ngram, kNoEnd);
          std::copy(starts + held - ngram, starts + held, starts);
          held = ngram;
        }
        const std::size_t length =
            wide_block(p, end, norm, starts, size, held, tokens, in_token, spaced);
        if (length == 0) {
          scalar_until = p + 64;
          continue;
        }
        p = length >= static_cast<std::size_t>(end - p) ? end : p + length;
        continue;
      }
#endif
      const std::uint8_t* block = p;
      const std::uint8_t* block_end = end;
      const bool last = end - p < 64;
      alignas(16) std::uint8_t padded[64];
      if (last) {
        std::memset(padded, ' ', sizeof padded);
        std::memcpy(padded, p, static_cast<std::size_t>(end - p));
        block = padded;
        block_end = padded + 64;
      }
      // 16 bytes past the block: a token's last 16-byte store may read them (into the slack
      // past the normalised text), so they are defined.
      alignas(16) std::uint8_t lowered[64 + 16];
      _mm_store_si128(reinterpret_cast<__m128i*>(lowered + 64), _mm_setzero_si128());
      std::uint64_t word = 0;
      std::uint64_t high = 0;
      for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * k));
        const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        const __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                            _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), folded));
        const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                            _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), v));
        const __m128i is_word = _mm_or_si128(alpha, digit);
        const __m128i lower = _mm_or_si128(v, _mm_and_si128(alpha, _mm_set1_epi8(0x20)));
        if constexpr (kCompact) {
          // Separators become spaces: the compact path keeps some of them.
          _mm_store_si128(reinterpret_cast<__m128i*>(lowered + 16 * k),
                          _mm_or_si128(_mm_and_si128(is_word, lower),
                                       _mm_andnot_si128(is_word, _mm_set1_epi8(' '))));
        } else {
          _mm_store_si128(reinterpret_cast<__m128i*>(lowered + 16 * k), lower);
        }
        word |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(is_word))} << (16 * k);
        high |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(v))} << (16 * k);
      }
      // Not pure ASCII: the multibyte sequences are decoded one by one into the masks, or, when
      // that cannot be done, the block goes the code-point way. The compact path reads a block
      // that a sequence runs past up to that sequence, which the next block then starts with.
      unsigned length = 64;
      if (high != 0) {
        length = mark_multibyte(block, block_end, lead_bytes(block), word, lowered);
        if (length == 0 || (!kCompact && length != 64)) {
          scalar_until = p + 64;
          continue;
        }
      }
      if constexpr (kCompact) {
#if defined(__x86_64__)
        // Bit i of `before` is set when the byte before block byte i is a word byte.
        const std::uint64_t before = (word << 1) | (in_token ? 1U : 0U);
        const std::uint64_t firsts = word & ~before;  // token starts
        // First separators, kept as one space; none past the bytes decided (`word` has no bits
        // there, mark_multibyte).
        const std::uint64_t stops =
            ~word & before & (length == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << length) - 1);
        const std::uint64_t keep = word | stops;
        std::size_t out = size;
        // Pack the kept bytes 8 at a time; base[j] is where byte group j's first kept byte goes.
        std::size_t base[8];
        for (unsigned j = 0; j < 8; ++j) {
          const unsigned mask = static_cast<unsigned>(keep >> (8 * j)) & 0xFFU;
          base[j] = out;
          const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(lowered + 8 * j));
          const __m128i order =
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kCompactTable.shuffle[mask].data()));
          _mm_storel_epi64(reinterpret_cast<__m128i*>(norm + out), shuffle_bytes(bytes, order));
          out += kCompactTable.count[mask];
        }
        // Only the starts matter: a token's end is the space before the next one's start. The
        // last start may be pushed before a stop that ends the block, which is fine: the stop's
        // space is already in the text.
        std::uint64_t rest = firsts;
        while (rest != 0) {
          const auto i = static_cast<unsigned>(std::countr_zero(rest));
          rest &= rest - 1;
          const unsigned below = static_cast<unsigned>(keep >> (i & ~7U)) & ((1U << (i & 7U)) - 1U);
          push_start(base[i >> 3] + kCompactTable.count[below]);
          ++tokens;
        }
        // The block's last event decides: after a stop, the text ends with that token's space;
        // after a start, with a token's bytes (still open when the block ends in a word byte).
        if (const std::uint64_t events = firsts | stops; events != 0) {
          spaced = ((stops >> (63 - std::countl_zero(events))) & 1U) != 0;
        }
        in_token = ((word >> (length - 1)) & 1U) != 0;
        size = out;
        p = last ? end : p + length;
        continue;
#endif
      } else {
        unsigned pos = 0;
        for (;;) {
          if (in_token) {
            // The word run from pos (to the block's end when every byte left is a word byte).
            const std::uint64_t rest = ~word >> pos;
            const unsigned run =
                rest == 0 ? 64 - pos : static_cast<unsigned>(std::countr_zero(rest));
            for (unsigned k = 0; k < run; k += 16) {
              _mm_storeu_si128(
                  reinterpret_cast<__m128i*>(norm + size + k),
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
        p = last ? end : p + 64;
        continue;
      }
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
  if (spaced) --size;  // the compact path's space after the last token: no token followed
  norm_size_ = size;
  units_ = tokens;
  if (tokens >= ngram) {
    hash_word_shingles(starts, held - ngram, size);  // the rest, the last one ending at `size`
  } else if (tokens != 0) {
    // A non-empty document shorter than one shingle is one shingle: the whole normalised text.
    starts[0] = 0;
    hash_word_shingles(starts, 0, size);
  }
  return tokens;
}

#if defined(__x86_64__)
// The compact path needs PSHUFB (SSSE3, part of every AVX2 CPU): this function carries the ISA,
// and run_words<true> is inlined into it.
LUMINAMOON_AVX2 std::size_t Shingler::run_words_compact(std::string_view document) {
  return run_words<AsciiPath::kCompact>(document);
}

// The compress path: run_words<kCompress> is inlined into this function, which carries its ISA.
LUMINAMOON_VBMI2 std::size_t Shingler::run_words_compress(std::string_view document) {
  return run_words<AsciiPath::kCompress>(document);
}
#endif

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
