// TextCleaner: every step on and off, CPython's maximal-subpart repair, the counters, NFC, the
// batch (order, threads, errors), hostile inputs, and the same output and counters under every
// ISA this CPU supports. The golden cases run once per ISA.
#include "luminamoon/data/cleaner/text_cleaner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cleaner/internal/clean_document.h"
#include "cleaner/internal/kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

using namespace std::string_view_literals;

using cleaner_internal::clean_document;
using cleaner_internal::kernels_for;

TextCleanerOptions all_off() {
  return {.repair_utf8 = true,  // off would make invalid input an error; see RepairOff
          .normalize_newlines = false,
          .remove_controls = false,
          .whitespace = Whitespace::kKeep,
          .strip_trailing_spaces = false,
          .limit_newlines = false,
          .strip = false,
          .nfc = false};
}

struct Case {
  const char* name;
  TextCleanerOptions options;
  std::string input;
  std::string expected;
};

TextCleanerOptions only(bool TextCleanerOptions::*step) {
  TextCleanerOptions o = all_off();
  o.*step = true;
  return o;
}

TextCleanerOptions only_whitespace(Whitespace mode, bool strip = false) {
  TextCleanerOptions o = all_off();
  o.whitespace = mode;
  o.strip = strip;
  return o;
}

TextCleanerOptions collapsing() {
  TextCleanerOptions o;
  o.whitespace = Whitespace::kCollapse;
  return o;
}

TextCleanerOptions all_but(bool TextCleanerOptions::*step) {
  TextCleanerOptions o;
  o.*step = false;
  return o;
}

const std::string kFffd = "\xEF\xBF\xBD";

std::vector<Case> golden_cases() {
  using O = TextCleanerOptions;
  const O defaults;
  return {
      // Step 1 alone (the other steps off): CPython's bytes.decode("utf-8", "replace").
      {"repair_table_3_8", all_off(),
       "a\xF1\x80\x80\xE1\x80\xC2"
       "b\x80"
       "c\x80\xBF"
       "d",
       "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d"},
      {"repair_overlong_c0", all_off(), "\xC0\xAF", kFffd + kFffd},
      {"repair_overlong_e0", all_off(), "\xE0\x80\xAF", kFffd + kFffd + kFffd},
      {"repair_surrogate", all_off(), "\xED\xA0\x80", kFffd + kFffd + kFffd},
      {"repair_above_max", all_off(), "\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},
      {"repair_five_byte", all_off(), "\xF8\x88\x80\x80\x80",
       kFffd + kFffd + kFffd + kFffd + kFffd},
      {"repair_truncated_3", all_off(), "\xE2\x82", kFffd},
      {"repair_truncated_4", all_off(), "\xF0\x9F\x98", kFffd},
      {"repair_truncated_then_ascii", all_off(),
       "\xE1\x80"
       "A",
       kFffd + "A"},
      {"repair_valid_4", all_off(), "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
      {"repair_fe_ff", all_off(), "\xFE\xFF", kFffd + kFffd},
      {"repair_lone_continuations", all_off(), "\x80\x80", kFffd + kFffd},
      {"repair_keeps_valid_fffd", all_off(), kFffd + "\xFF", kFffd + kFffd},
      // Step 2.
      {"newlines_crlf_cr", only(&O::normalize_newlines), "a\r\nb\rc\n\r\r\nd", "a\nb\nc\n\n\nd"},
      {"newlines_off_keeps_cr", all_off(), "a\r\nb", "a\r\nb"},
      {"newlines_cr_nul_lf_is_two", only(&O::normalize_newlines), std::string("\r\x00\n"sv),
       std::string("\n\x00\n"sv)},
      // Step 3.
      {"controls_c0_del_c1", only(&O::remove_controls),
       std::string("a\x00\x01\x08\t\n\x0B\x0C\x1F\x7F\xC2\x80\xC2\x85\xC2\x9F\xC2\xA0z"sv),
       "a\t\n\xC2\xA0z"},
      {"controls_cr_removed_without_newlines", only(&O::remove_controls), "a\r\nb\rc", "a\nbc"},
      {"controls_off_kept", all_off(), std::string("a\x00z"sv), std::string("a\x00z"sv)},
      // Step 4.
      {"collapse_runs", only_whitespace(Whitespace::kCollapse),
       "a  b\tc \t d\xC2\xA0"
       "e\xE3\x80\x80\xE2\x80\x8A"
       "f\n \n",
       "a b c d e f\n \n"},
      {"collapse_not_zero_width_or_line_sep", only_whitespace(Whitespace::kCollapse),
       "a\xE2\x80\x8B\xE2\x80\x8B"
       "b\xE2\x80\xA8\xE2\x80\xA8"
       "c",
       "a\xE2\x80\x8B\xE2\x80\x8B"
       "b\xE2\x80\xA8\xE2\x80\xA8"
       "c"},
      {"preserve_indent_runs", only_whitespace(Whitespace::kPreserveIndent),
       "a  b\tc \t d\xC2\xA0"
       "e\xE3\x80\x80\xE2\x80\x8A"
       "f\n \n",
       "a  b\tc \t d e  f\n \n"},
      {"preserve_indent_not_zero_width", only_whitespace(Whitespace::kPreserveIndent),
       "a\xE2\x80\x8B\xE2\x80\xA8\xE1\x9A\x80\xE2\x80\xAF\xE2\x81\x9F"
       "b",
       "a\xE2\x80\x8B\xE2\x80\xA8   b"},
      {"keep_changes_nothing", only_whitespace(Whitespace::kKeep), "a \xC2\xA0\t b",
       "a \xC2\xA0\t b"},
      {"preserve_indent_python", O{},
       "\n\ndef f(x):\n    if x:\t # tab\n        return 1   \n\n\n\n    return 0\n",
       "def f(x):\n    if x:\t # tab\n        return 1\n\n    return 0"},
      {"preserve_indent_makefile", O{}, "all:\n\tcc -o a  a.c\r\n\t\t./a\r\n",
       "all:\n\tcc -o a  a.c\n\t\t./a"},
      {"preserve_indent_first_line_kept", O{}, " \t\n\xE3\x80\x80 \n    x = 1\n  y",
       "    x = 1\n  y"},
      {"preserve_indent_first_line_exotic", O{}, "\xC2\xA0\xC2\xA0x", "  x"},
      {"collapse_drops_first_indent", collapsing(), "\n    x = 1\n    y", "x = 1\n y"},
      {"keep_strip_blank_lines_only", only_whitespace(Whitespace::kKeep, true),
       "\n \n\xC2\xA0 x \n\n", "\xC2\xA0 x"},
      // Step 5, with and without collapsing.
      {"trailing_alone", only(&O::strip_trailing_spaces), "a \t\xC2\xA0\nb \n  c  ", "a\nb\n  c"},
      // Step 6.
      {"limit_newlines", only(&O::limit_newlines), "a\n\n\n\nb\n\nc\n\n\n", "a\n\nb\n\nc\n\n"},
      {"limit_not_across_spaces", only(&O::limit_newlines), "a\n\n \n\nb", "a\n\n \n\nb"},
      {"limit_across_removed_trailing", all_but(&O::strip), "a\n\n \n\n\t\nb", "a\n\nb"},
      // Step 7.
      {"strip_alone", only(&O::strip), "\n \t\xE3\x80\x80 a b \n\n\xC2\xA0", " \t\xE3\x80\x80 a b"},
      {"strip_collapse", only_whitespace(Whitespace::kCollapse, true),
       "\n \t\xE3\x80\x80 a b \n\n\xC2\xA0", "a b"},
      {"strip_only_whitespace", only(&O::strip), " \n\t\n ", ""},
      {"strip_keeps_zwsp_and_bom", only(&O::strip), "\xEF\xBB\xBF a \xE2\x80\x8B",
       "\xEF\xBB\xBF a \xE2\x80\x8B"},
      // Everything (defaults).
      {"defaults_document", defaults,
       std::string("  \xEF\xBB\xBFTitle  \r\n\r\n\r\n\r\nBody\x00 text\t\xFF here. \n\n\n"sv),
       "  \xEF\xBB\xBFTitle\n\nBody text\t" + kFffd + " here."},
      {"collapse_document", collapsing(),
       std::string("  \xEF\xBB\xBFTitle  \r\n\r\n\r\n\r\nBody\x00 text\t\xFF here. \n\n\n"sv),
       "\xEF\xBB\xBFTitle\n\nBody text " + kFffd + " here."},
      {"defaults_empty", defaults, "", ""},
      {"defaults_whitespace_only", defaults, " \t\r\n\xC2\xA0\n", ""},
      {"defaults_controls_join_runs", defaults, std::string("a \x00 b\n\x00\n\x00\nc"sv),
       "a  b\n\nc"},
      {"collapse_controls_join_runs", collapsing(), std::string("a \x00 b\n\x00\n\x00\nc"sv),
       "a b\n\nc"},
      {"defaults_crlf_trailing", defaults, "a \r\n\tb \r\n", "a\n\tb"},
      {"collapse_crlf_trailing", collapsing(), "a \r\n\tb \r\n", "a\n b"},
      // NFC (last, off by default).
      {"nfc_compose", only(&O::nfc), "e\xCC\x81", "\xC3\xA9"},
      {"nfc_singleton", only(&O::nfc), "\xE2\x84\xAB", "\xC3\x85"},
      {"nfc_reorder", only(&O::nfc), "a\xCC\x81\xCC\x96", "\xC3\xA1\xCC\x96"},
      {"nfc_reorder_2", only(&O::nfc), "a\xCC\x96\xCC\x81", "\xC3\xA1\xCC\x96"},
      {"nfc_hangul", only(&O::nfc), "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x81"},
      {"nfc_exclusion", only(&O::nfc), "\xE0\xA5\x98", "\xE0\xA4\x95\xE0\xA4\xBC"},
      {"nfc_en_quad_is_en_space", only(&O::nfc), "\xE2\x80\x80", "\xE2\x80\x82"},
      {"nfc_off_by_default", defaults, "e\xCC\x81", "e\xCC\x81"},
  };
}

std::string clean_with(Isa isa, const TextCleanerOptions& options, std::string_view input,
                       CleanStats* stats = nullptr) {
  CleanStats local;
  std::string out = clean_document(input, options, kernels_for(isa), local);
  if (stats != nullptr) *stats = local;
  return out;
}

class TextCleanerIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(TextCleanerIsa, GoldenCases) {
  for (const Case& c : golden_cases()) {
    EXPECT_EQ(clean_with(GetParam(), c.options, c.input), c.expected) << c.name;
  }
}

// The same cases padded with plain text on both sides, so that they sit inside and after the
// stretches the clean_prefix fast path copies (the cases above are mostly too short for it).
TEST_P(TextCleanerIsa, GoldenCasesInsideLongText) {
  const std::string pad(100, 'x');
  for (const Case& c : golden_cases()) {
    TextCleanerOptions o = c.options;
    o.strip = false;
    const std::string padded = pad + " " + c.input + " " + pad;
    const std::string reference = clean_with(Isa::kScalar, o, padded);
    EXPECT_EQ(clean_with(GetParam(), o, padded), reference) << c.name;
  }
}

TEST_P(TextCleanerIsa, CountersOfOneDocument) {
  CleanStats s;
  const std::string input("  Hi\r\n\r\n\r\n\tthere\x00  \xFF \xC2\xA0x \n"sv);
  EXPECT_EQ(clean_with(GetParam(), collapsing(), input, &s), "Hi\n\n there " + kFffd + " x");
  EXPECT_EQ(s.documents, 1u);
  EXPECT_EQ(s.documents_changed, 1u);
  EXPECT_EQ(s.bytes_in, input.size());
  EXPECT_EQ(s.bytes_out, 16u);
  EXPECT_EQ(s.invalid_sequences_replaced, 1u);
  EXPECT_EQ(s.invalid_bytes_replaced, 1u);
  EXPECT_EQ(s.newlines_normalized, 3u);
  EXPECT_EQ(s.controls_removed, 1u);
  // The leading "  ", "\t", "  " once the NUL is gone, " \u00A0"; the single " " is not.
  EXPECT_EQ(s.whitespace_runs_collapsed, 4u);
  EXPECT_EQ(s.trailing_spaces_removed, 1u);  // " " before the last LF
  EXPECT_EQ(s.newline_runs_limited, 1u);
  EXPECT_EQ(s.whitespace_stripped, 2u);  // the leading run (collapsed to " ") and the final LF
  EXPECT_EQ(s.nfc_changed_documents, 0u);
  EXPECT_EQ(s.unicode_spaces_replaced, 0u);
}

TEST_P(TextCleanerIsa, CountersOfOneDocumentPreservingIndent) {
  CleanStats s;
  const std::string input("  Hi\r\n\r\n\r\n\tthere\x00  \xFF \xC2\xA0x \xE3\x80\x80\n"sv);
  EXPECT_EQ(clean_with(GetParam(), {}, input, &s), "  Hi\n\n\tthere  " + kFffd + "  x");
  EXPECT_EQ(s.newlines_normalized, 3u);
  EXPECT_EQ(s.controls_removed, 1u);
  EXPECT_EQ(s.whitespace_runs_collapsed, 0u);
  EXPECT_EQ(s.unicode_spaces_replaced, 2u);  // U+00A0, and U+3000 before its removal
  EXPECT_EQ(s.trailing_spaces_removed, 2u);  // " " and U+3000 before the last LF
  EXPECT_EQ(s.newline_runs_limited, 1u);
  EXPECT_EQ(s.whitespace_stripped, 1u);  // the final LF; the first line keeps its indentation
}

TEST_P(TextCleanerIsa, RepairCountsSequencesAndBytes) {
  CleanStats s;
  // Table 3-8 of the Unicode standard: 6 maximal subparts, 9 bytes.
  clean_with(GetParam(), all_off(),
             "a\xF1\x80\x80\xE1\x80\xC2"
             "b\x80"
             "c\x80\xBF"
             "d",
             &s);
  EXPECT_EQ(s.invalid_sequences_replaced, 6u);
  EXPECT_EQ(s.invalid_bytes_replaced, 9u);
}

TEST_P(TextCleanerIsa, TrailingCountsCodePointsWithoutCollapse) {
  TextCleanerOptions o;
  o.whitespace = Whitespace::kKeep;
  CleanStats s;
  EXPECT_EQ(clean_with(GetParam(), o, "a \t\xE3\x80\x80\nb", &s), "a\nb");
  EXPECT_EQ(s.trailing_spaces_removed, 3u);
  EXPECT_EQ(s.whitespace_runs_collapsed, 0u);
}

TEST_P(TextCleanerIsa, UnchangedDocumentCountsNothing) {
  CleanStats s;
  const std::string text = "Plain text.\n\nA second paragraph, \xE4\xB8\xAD\xE6\x96\x87 too.";
  EXPECT_EQ(clean_with(GetParam(), {}, text, &s), text);
  EXPECT_EQ(s.documents, 1u);
  EXPECT_EQ(s.documents_changed, 0u);
  CleanStats zero;
  zero.documents = 1;
  zero.bytes_in = zero.bytes_out = text.size();
  EXPECT_EQ(s, zero);
}

// Random documents over an alphabet dense in everything the steps touch, for every option
// combination: the same text and counters as the scalar kernels, valid UTF-8, idempotent.
TEST_P(TextCleanerIsa, RandomDocumentsMatchScalarAndAreIdempotent) {
  const std::vector<std::string> alphabet = {"a",
                                             "Zz",
                                             " ",
                                             "  ",
                                             "\t",
                                             "\n",
                                             "\r",
                                             "\r\n",
                                             std::string(1, '\0'),
                                             "\x0B",
                                             "\x7F",
                                             "\xC2\x85",
                                             "\xC2\xA0",
                                             "\xE1\x9A\x80",
                                             "\xE2\x80\x80",
                                             "\xE2\x80\x8A",
                                             "\xE2\x80\x8B",
                                             "\xE2\x80\xAF",
                                             "\xE2\x81\x9F",
                                             "\xE3\x80\x80",
                                             "\xC3\xA9",
                                             "e\xCC\x81",
                                             "\xCC\x81",
                                             "\xF0\x9F\x98\x80",
                                             "\xE4\xB8\xAD",
                                             "\xFF",
                                             "\xC2",
                                             "\xE2\x82",
                                             "\xED\xA0\x80",
                                             "\x80",
                                             "\xEF\xBF\xBD",
                                             std::string(40, 'w'),
                                             std::string(70, ' ')};
  std::mt19937 rng(12345);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string doc;
    const auto parts = static_cast<unsigned>(rng() % 60);
    for (unsigned k = 0; k < parts; ++k) doc += alphabet[rng() % alphabet.size()];
    const auto bits = static_cast<unsigned>(rng() % 384);
    TextCleanerOptions o{.repair_utf8 = true,
                         .normalize_newlines = (bits & 1u) != 0,
                         .remove_controls = (bits & 2u) != 0,
                         .whitespace = static_cast<Whitespace>(((bits >> 2) & 1u) + (bits >> 8)),
                         .strip_trailing_spaces = (bits & 8u) != 0,
                         .limit_newlines = (bits & 16u) != 0,
                         .strip = (bits & 32u) != 0,
                         .nfc = (bits & 64u) != 0};
    CleanStats ours, reference;
    const std::string out = clean_with(GetParam(), o, doc, &ours);
    ASSERT_EQ(out, clean_with(Isa::kScalar, o, doc, &reference)) << iteration;
    ASSERT_EQ(ours, reference) << iteration;
    ASSERT_EQ(kernels_for(Isa::kScalar)
                  .utf8_valid_prefix(reinterpret_cast<const std::uint8_t*>(out.data()), out.size()),
              out.size());
    ASSERT_EQ(clean_with(GetParam(), o, out), out) << iteration;
  }
}

INSTANTIATE_TEST_SUITE_P(SupportedIsas, TextCleanerIsa, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& param) {
                           return std::string(isa_name(param.param));
                         });

TEST(TextCleaner, RepairOffRejectsInvalidUtf8WithOffset) {
  TextCleaner c({.repair_utf8 = false});
  EXPECT_EQ(c.clean("caf\xC3\xA9 ok"), "caf\xC3\xA9 ok");
  try {
    c.clean("abc\xE2\x82");
    FAIL() << "no exception";
  } catch (const MalformedInputError& e) {
    EXPECT_STREQ(e.what(),
                 "TextCleaner: text is not valid UTF-8: unexpected end of data at byte offset 3 "
                 "(byte 0xe2); pass repair_utf8=True to replace each invalid sequence with U+FFFD");
  }
  EXPECT_EQ(c.stats().documents, 1u);  // the failed document counted nothing
  const std::vector<std::string_view> batch = {"ok", "\xC0\xAF", "fine", "\xFF"};
  try {
    c.clean_batch(batch);
    FAIL() << "no exception";
  } catch (const MalformedInputError& e) {
    EXPECT_NE(std::string(e.what()).find("texts[1] is not valid UTF-8: invalid start byte at byte "
                                         "offset 0 (byte 0xc0)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.stats().documents, 1u);  // the failed batch counted nothing
}

TEST(TextCleaner, BatchErrorIsTheSmallestIndexAtAnyThreadCount) {
  std::vector<std::string> storage(20000, std::string(200, 'a'));
  storage[15000] = "\xFF";
  storage[7001] = "x\xED\xA0\x80";
  std::vector<std::string_view> docs(storage.begin(), storage.end());
  for (unsigned threads : {1u, 2u, 8u}) {
    TextCleaner c({.repair_utf8 = false, .threads = threads});
    try {
      c.clean_batch(docs);
      FAIL() << "no exception";
    } catch (const MalformedInputError& e) {
      EXPECT_NE(std::string(e.what()).find("texts[7001]"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("byte offset 1 "), std::string::npos) << e.what();
    }
    EXPECT_EQ(c.stats(), CleanStats{});
  }
}

TEST(TextCleaner, BatchEqualsCleanAtAnyThreadCount) {
  std::mt19937 rng(3);
  std::vector<std::string> storage;
  const char* pieces[] = {"word ", "  ", "\r\n", "\n\n\n", "\xFF", "\t", "\xC2\xA0", "x"};
  for (int i = 0; i < 5000; ++i) {
    std::string doc;
    const auto n = static_cast<unsigned>(rng() % 400);  // some documents empty, ~2 MB in all
    for (unsigned k = 0; k < n; ++k) doc += pieces[rng() % 8];
    storage.push_back(std::move(doc));
  }
  std::vector<std::string_view> docs(storage.begin(), storage.end());
  TextCleaner single({.threads = 1});
  std::vector<std::string> expected;
  for (const std::string_view d : docs) expected.push_back(single.clean(d));
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    TextCleaner c({.threads = threads});
    EXPECT_EQ(c.clean_batch(docs), expected) << threads;
    EXPECT_EQ(c.stats(), single.stats()) << threads;
  }
  TextCleaner c;
  EXPECT_TRUE(c.clean_batch({}).empty());
  EXPECT_EQ(c.stats(), CleanStats{});
}

TEST(TextCleaner, StatsAccumulateAndReset) {
  TextCleaner c;
  c.clean("\n a ");
  c.clean("b\r\n");
  CleanStats s = c.stats();
  EXPECT_EQ(s.documents, 2u);
  EXPECT_EQ(s.documents_changed, 2u);
  EXPECT_EQ(s.bytes_in, 7u);
  EXPECT_EQ(s.bytes_out, 3u);  // " a" keeps its indentation
  EXPECT_EQ(s.newlines_normalized, 1u);
  EXPECT_EQ(s.whitespace_stripped, 2u);      // the leading LF of "\n a ", the LF of "b\n"
  EXPECT_EQ(s.trailing_spaces_removed, 1u);  // the final " " of " a " ends the last line
  c.reset_stats();
  EXPECT_EQ(c.stats(), CleanStats{});
}

TEST(TextCleaner, NfcCounter) {
  TextCleaner c({.nfc = true});
  EXPECT_EQ(c.clean("e\xCC\x81 and \xC3\xA9"), "\xC3\xA9 and \xC3\xA9");
  EXPECT_EQ(c.clean("already NFC \xC3\xA9"), "already NFC \xC3\xA9");
  EXPECT_EQ(c.stats().nfc_changed_documents, 1u);
}

// Hostile inputs: never a crash, never super-linear time.
TEST(TextCleaner, HugeAndHostileDocumentsStayLinear) {
  TextCleaner c;
  TextCleaner nfc({.whitespace = Whitespace::kKeep, .nfc = true});
  const std::size_t n = 8u << 20;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.clean(std::string(n, ' ')), "");
  EXPECT_EQ(c.clean(std::string(n, '\n')), "");
  EXPECT_EQ(c.clean(std::string(n, '\0')), "");
  std::string invalid(n, '\xFF');
  std::string repaired = c.clean(invalid);
  EXPECT_EQ(repaired.size(), 3 * n);
  std::string spaces_then_word(n, '\t');
  spaces_then_word += "x";
  EXPECT_TRUE(c.clean(spaces_then_word) == spaces_then_word);  // indentation is kept
  TextCleaner collapse({.whitespace = Whitespace::kCollapse});
  EXPECT_EQ(collapse.clean(spaces_then_word), "x");
  // One starter followed by a million combining marks in reverse canonical order: an insertion
  // sort would take ~10^12 steps here.
  std::string marks = "a";
  for (int i = 0; i < 500000; ++i) marks += "\xCC\x81\xCC\x96";  // U+0301 (230), U+0316 (220)
  const std::string normalized = nfc.clean(marks);
  EXPECT_EQ(normalized.substr(0, 4), "\xC3\xA1\xCC\x96");  // á, then the 220s first
  std::mt19937_64 rng(9);
  std::string noise(n, '\0');
  for (char& ch : noise) ch = static_cast<char>(rng());
  const std::string cleaned = c.clean(noise);
  EXPECT_EQ(c.clean(cleaned), cleaned);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0);  // a few hundred ms normally; quadratic behaviour would be hours
}

}  // namespace
}  // namespace luminamoon::data
