// Character classes and tokenizer data of the QualityFilter, generated into generated_tables.cc
// by scripts/gen_quality_tables.py (the same data as fallbacks/_quality_tables.py).
//
// Every code point has a set of flag bits (Python's str.isspace/isalpha, Unicode categories,
// datatrove's punctuation sets, spaCy's English tokenizer classes); flags() looks them up in a
// two-stage table built from the generated ranges on first use.
#pragma once

#include <cstddef>
#include <cstdint>

namespace luminamoon::data::quality_internal {

// Bit order fixed by the generator (FLAGS in scripts/gen_quality_tables.py).
enum Flag : std::uint32_t {
  kSpace = 1u << 0,        // Python str.isspace()
  kAlpha = 1u << 1,        // Python str.isalpha(): general category L*
  kUniPunct = 1u << 2,     // general category P* (spaCy's is_punct)
  kMark = 1u << 3,         // general category M*
  kUpper = 1u << 4,        // Lu or Lt
  kLower = 1u << 5,        // Ll
  kDtPunct = 1u << 6,      // datatrove PUNCTUATION_SET
  kDtTerminal = 1u << 7,   // datatrove TERMINAL_PUNCTUATION
  kSpAlpha = 1u << 8,      // spaCy ALPHA
  kSpLower = 1u << 9,      // spaCy ALPHA_LOWER
  kSpUpper = 1u << 10,     // spaCy ALPHA_UPPER
  kSpQuote = 1u << 11,     // spaCy CONCAT_QUOTES
  kSpIcon = 1u << 12,      // spaCy ICONS
  kSpPrefix = 1u << 13,    // one-character spaCy prefix
  kSpSuffix = 1u << 14,    // one-character unconditional spaCy suffix
  kSpDotAfter = 1u << 15,  // spaCy splits a final '.' after this character
  kSentPunct = 1u << 16,   // spaCy Sentencizer punct_chars
  kReWord = 1u << 17,      // Python re \w
  kReDigit = 1u << 18,     // Python re \d
};

struct CodePointRange {
  std::uint32_t first;  // first code point of a run of equal flags
  std::uint32_t flags;
};

// A spaCy tokenizer exception (or special-case matcher pattern): `key` is UTF-8, `pieces` the
// byte lengths of its tokens, which concatenate to `key`.
inline constexpr std::size_t kMaxSpecialPieces = 11;
inline constexpr std::size_t kMaxSpecialKeyBytes = 32;
struct SpecialCase {
  const char* key;
  std::uint8_t piece_count;
  std::uint8_t pieces[kMaxSpecialPieces];
};

extern const CodePointRange kCodePointRanges[];
extern const std::size_t kCodePointRangeCount;
extern const SpecialCase kSpecialCases[];
extern const std::size_t kSpecialCaseCount;
extern const SpecialCase kMatcherPatterns[];
extern const std::size_t kMatcherPatternCount;
extern const char* const kUnitSuffixes[];
extern const std::size_t kUnitSuffixCount;
extern const char* const kCurrencySuffixes[];
extern const std::size_t kCurrencySuffixCount;

// The two-stage flag table: stage1 maps a 128-code-point block to a row of stage2. Built from
// the generated ranges when the library is loaded (under a millisecond), so lookups need no
// initialisation check.
struct FlagTable {
  static constexpr unsigned kBlockBits = 7;
  const std::uint16_t* stage1;
  const std::uint32_t* stage2;
};
extern const FlagTable kFlagTable;

inline std::uint32_t flags(char32_t cp) {
  if (cp > 0x10FFFF) return 0;
  const std::uint32_t block = kFlagTable.stage1[cp >> FlagTable::kBlockBits];
  return kFlagTable
      .stage2[(block << FlagTable::kBlockBits) | (cp & ((1u << FlagTable::kBlockBits) - 1))];
}

}  // namespace luminamoon::data::quality_internal
