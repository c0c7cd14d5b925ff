// The QualityFilter's word tokenizer: spaCy 3.8's English tokenizer (what datatrove 0.10.1 uses
// for English) re-implemented without regular expressions, and spaCy's Sentencizer count.
// Mirrors python/luminamoon/data/fallbacks/words.py function for function; docs/quality.md
// ("Words") describes the algorithm and its one omission.
//
// Input is valid UTF-8 (the caller repairs it first). Every step is linear in the input: affixes
// are peeled by index, exception lookups are skipped for pieces longer than any exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace luminamoon::data::quality_internal {

enum class TokenKind : std::uint8_t {
  kGlued,       // a word token directly after the previous token
  kAfterSpace,  // a word token after exactly one ' ' (which spaCy keeps as a flag, not a token)
  kWhitespace,  // a whitespace token (any other run of whitespace)
};

struct Token {
  std::size_t begin;  // byte offsets into the tokenized text
  std::size_t end;
  TokenKind kind;
};

// kFast reads a word's end and its leading run of ASCII letters or digits from one 16-byte load
// at the word's start (SSE2) where those 16 bytes hold the end, and replays the tokens of a word
// that took the general rules before (a per-thread cache); kReference looks at every byte and
// sends every word through the rules. The tokens are the same; kReference is what the tests
// compare kFast with.
enum class TokenizerPath : std::uint8_t { kFast, kReference };

// All spaCy tokens of `text`, whitespace tokens included, appended to `out` (cleared first).
void tokenize_document(std::string_view text, std::vector<Token>& out,
                       TokenizerPath path = TokenizerPath::kFast);

// The sentences spaCy's Sentencizer finds in `line` (all-whitespace ones not counted);
// `scratch` is reused between calls.
std::size_t count_sentences(std::string_view line, std::vector<Token>& scratch);

}  // namespace luminamoon::data::quality_internal
