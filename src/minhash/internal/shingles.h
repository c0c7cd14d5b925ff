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

// Reusable scratch space of one thread; not thread-safe.
class Shingler {
 public:
  static constexpr std::size_t kChunk = 512;

  Shingler(ShingleKind kind, std::uint32_t ngram);

  // Streams the hashes of every shingle of `document` to sink; returns how many there were.
  std::size_t run(std::string_view document, ShingleSink sink, void* context);

  // The normalised text of the last run().
  std::string_view normalized() const noexcept { return {norm_.data(), norm_size_}; }

 private:
  std::size_t run_words(std::string_view document);
  std::size_t run_chars(std::string_view document);
  void append_code_point(std::uint32_t cp);
  void push_unit(std::size_t start);
  void emit(std::size_t begin);
  void flush();

  ShingleKind kind_;
  std::uint32_t ngram_;
  std::string norm_;
  std::size_t norm_size_ = 0;
  std::vector<std::size_t> ring_;  // starts of the last ngram tokens / code points
  std::uint32_t ring_pos_ = 0;
  std::uint64_t units_ = 0;  // tokens (kWord) or code points (kChar) so far
  std::size_t token_start_ = 0;
  // The pending shingles of the current chunk, as [begin, end) byte ranges of the normalised
  // text: they are hashed together in flush(), a tight loop of independent XXH3 calls that the
  // CPU overlaps (hashing inside the tokenizer loop serialised them behind its branches).
  std::vector<std::size_t> begins_;
  std::vector<std::size_t> ends_;
  std::vector<std::uint64_t> chunk_;
  std::size_t chunk_size_ = 0;
  std::size_t shingles_ = 0;
  ShingleSink sink_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace luminamoon::data::minhash_internal
