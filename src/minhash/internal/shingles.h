// Tokenisation and shingling of the MinHash stage (rules in minhash_signature.h and
// docs/minhash.md). Streams shingle hashes in chunks, so a 50 MB document needs its normalised
// text plus one small chunk, never a hash per shingle at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/minhash/minhash_signature.h"

namespace luminamoon::data::minhash_internal {

// Receives consecutive chunks of shingle hashes (in document order).
using ShingleSink = void (*)(void* context, const std::uint64_t* hashes, std::size_t count);
// Optionally receives word shingles unhashed instead, as ranges of the normalised text: shingle
// k < count is text[starts[k], starts[k + ngram] - 1). Its hashes are shingle_hash() of those
// bytes (shingle_hash.h), what ShingleSink would have been given; the sink gets every word
// shingle, the document's last (starts[count - 1 + ngram] is then one past the text's end, the
// start of a token that would follow) and the one shingle of a document shorter than ngram tokens
// included.
using WordShingleSink = void (*)(void* context, const char* text, const std::size_t* starts,
                                 std::size_t count, std::size_t ngram);

// How run() reads the document in word mode; all three make the same normalised text and the
// same shingle hashes (tests/cpp/minhash/shingles_test.cc compares them):
//  * kScalar: one code point at a time everywhere, no blocks: the reference the block paths are
//    tested against (tests and benchmarks only);
//  * kTokens: 64-byte blocks, token by token, each token copied lowercased with 16-byte stores
//    (SSE2, any x86-64 CPU; elsewhere this is the code-point loop too);
//  * kCompact: 64-byte blocks, the whole block at once: the bytes to keep (word bytes, and the
//    first separator after each token as one space) are packed together 8 at a time by a shuffle
//    (PSHUFB) from a table of the 256 byte masks, then the block's token starts and ends are read
//    off its bit masks (x86-64 with AVX2, the avx2 and avx512 levels of
//    common/internal/isa_dispatch.h);
//  * kCompress: kCompact with 64-byte registers: the masks from AVX-512 BW compares, the block
//    packed by one VPCOMPRESSB, the token starts' places in it by one PEXT (the avx512 level on a
//    CPU with AVX512_VBMI2 and BMI2: Ice Lake, Zen 4 and later).
// The block paths take word-character masks of the ASCII bytes from SSE2 compares (kCompress:
// AVX-512 ones); a block with bytes >= 0x80 has its multibyte sequences decoded one by one into
// those masks (its lowercase bytes in place), and goes the code-point way only when a lowercase
// mapping changes a character's encoded length, or (kTokens) when a sequence runs past the block:
// kCompact and kCompress then end that block before the sequence, and the next block starts with
// it. The document's last bytes (fewer than 64) are one block padded with spaces.
enum class AsciiPath { kScalar, kTokens, kCompact, kCompress };
inline constexpr AsciiPath kAsciiPaths[] = {AsciiPath::kScalar, AsciiPath::kTokens,
                                            AsciiPath::kCompact, AsciiPath::kCompress};

// The path's name in test messages and benchmark rows.
constexpr const char* ascii_path_name(AsciiPath path) noexcept {
  switch (path) {
    case AsciiPath::kScalar:
      return "scalar";
    case AsciiPath::kTokens:
      return "tokens";
    case AsciiPath::kCompact:
      return "compact";
    case AsciiPath::kCompress:
      return "compress";
  }
  return "?";
}

// The path the live ISA (active_isa(), LUMINAMOON_SIMD) runs: kCompress on avx512 where the CPU
// has VBMI2 and BMI2, else kCompact on avx2 and avx512; kTokens elsewhere, and when the ISA setting
// is invalid (the kernels raise that error).
AsciiPath active_ascii_path() noexcept;
// Whether this CPU (and OS) can run `path`, whatever LUMINAMOON_SIMD says (tests, benchmarks).
bool ascii_path_supported(AsciiPath path) noexcept;

// Reusable scratch space of one thread; not thread-safe.
class Shingler {
 public:
  static constexpr std::size_t kChunk = 512;

  Shingler(ShingleKind kind, std::uint32_t ngram);
  // A given path; it must be one the CPU can run (ascii_path_supported; tests and benchmarks).
  Shingler(ShingleKind kind, std::uint32_t ngram, AsciiPath path);

  // Streams the hashes of every shingle of `document` to sink; returns how many there were.
  std::size_t run(std::string_view document, ShingleSink sink, void* context);
  // The same, word shingles going to `words` as WordShingleSink says (in document order with the
  // hashes sink gets; kChar shingles all go to sink).
  std::size_t run(std::string_view document, ShingleSink sink, WordShingleSink words,
                  void* context);

  // The normalised text of the last run().
  std::string_view normalized() const noexcept { return {norm_.data(), norm_size_}; }

  ShingleKind kind() const noexcept { return kind_; }
  std::uint32_t ngram() const noexcept { return ngram_; }
  // Bytes held for the normalised text: the largest document's so far.
  std::size_t text_capacity() const noexcept { return norm_.capacity(); }

 private:
  template <AsciiPath kPath>
  std::size_t run_words(std::string_view document);
  std::size_t run_words_compact(std::string_view document);
  std::size_t run_words_compress(std::string_view document);
  std::size_t run_chars(std::string_view document);
  void append_code_point(std::uint32_t cp);
  void push_unit(std::size_t start);
  void emit(std::size_t begin);
  void flush();
  static constexpr std::size_t kNoEnd = ~std::size_t{0};
  void hash_word_shingles(std::size_t* starts, std::size_t count, std::size_t last_end);

  ShingleKind kind_;
  std::uint32_t ngram_;
  AsciiPath path_;
  std::string norm_;
  std::size_t norm_size_ = 0;
  std::vector<std::size_t> ring_;  // kChar: starts of the last ngram code points
  // kWord: starts of the tokens whose shingles are not hashed yet (kChunk + ngram at most).
  std::vector<std::size_t> starts_;
  std::uint32_t ring_pos_ = 0;
  std::uint64_t units_ = 0;      // tokens (kWord) or code points (kChar) so far
  std::size_t token_start_ = 0;  // kChar
  // kChar: the pending shingles of the current chunk, as [begin, end) byte ranges of the normalised
  // text: they are hashed together in flush(), a tight loop of independent XXH3 calls that the
  // CPU overlaps (hashing inside the tokenizer loop serialised them behind its branches).
  std::vector<std::size_t> begins_;
  std::vector<std::size_t> ends_;
  std::vector<std::uint64_t> chunk_;
  std::size_t chunk_size_ = 0;
  std::size_t shingles_ = 0;
  ShingleSink sink_ = nullptr;
  WordShingleSink words_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace luminamoon::data::minhash_internal
