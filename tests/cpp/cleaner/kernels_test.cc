// The TextCleaner byte kernels: the scalar reference against independent oracles, then every ISA
// this CPU supports against the scalar reference on inputs built to land errors, controls and
// special sequences on and across the 16/32/64-byte block boundaries and the end of the buffer.
// Inputs sit at the very end of a readable page followed by an inaccessible one, so a kernel that
// reads past `size` crashes here instead of passing by luck.
#include "cleaner/internal/kernels.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
// GoogleTest prints parameters with this (found by ADL): "avx2" rather than a byte dump.
void PrintTo(Isa isa, std::ostream* os) { *os << isa_name(isa); }
}  // namespace luminamoon::data

namespace luminamoon::data::cleaner_internal {
namespace {

using Bytes = std::vector<std::uint8_t>;
// The validator moved to common/ (common/internal/utf8.h); the cleaner's tables still carry it.
using utf8_internal::utf8_valid_prefix_scalar;

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

// A buffer whose last byte is the last byte of a mapped page; the next page is PROT_NONE.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t capacity) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    data_pages_ = (capacity + page - 1) / page * page;
    length_ = data_pages_ + page;
    void* p = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<std::uint8_t*>(p);
    if (mprotect(base_ + data_pages_, page, PROT_NONE) != 0) throw std::runtime_error("mprotect");
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer() { munmap(base_, length_); }

  // Copies `input` so that it ends at the guard page; returns where it starts.
  const std::uint8_t* place(const Bytes& input) {
    if (input.size() > data_pages_) throw std::runtime_error("input larger than the buffer");
    std::uint8_t* start = base_ + data_pages_ - input.size();
    if (!input.empty()) std::memcpy(start, input.data(), input.size());
    return start;
  }

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t data_pages_ = 0;
  std::size_t length_ = 0;
};

GuardedBuffer& guarded() {
  static GuardedBuffer buffer(4 << 20);
  return buffer;
}

std::string hex(const Bytes& input) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < input.size() && i < 400; ++i) {
    if (i != 0) out += ' ';
    out += kDigits[input[i] >> 4];
    out += kDigits[input[i] & 0xF];
  }
  if (input.size() > 400) out += " ...";
  return out;
}

// ---- Independent oracles for the scalar reference.

// Decodes by the textbook bit layout, then rejects overlongs, surrogates and > U+10FFFF by value
// (the reference uses RFC 3629's per-lead second-byte ranges instead).
std::size_t utf8_valid_prefix_oracle(const Bytes& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::uint8_t b0 = s[i];
    std::size_t length;
    std::uint32_t cp;
    if (b0 < 0x80) {
      ++i;
      continue;
    } else if ((b0 & 0xE0) == 0xC0) {
      length = 2;
      cp = b0 & 0x1Fu;
    } else if ((b0 & 0xF0) == 0xE0) {
      length = 3;
      cp = b0 & 0x0Fu;
    } else if ((b0 & 0xF8) == 0xF0) {
      length = 4;
      cp = b0 & 0x07u;
    } else {
      return i;
    }
    if (i + length > s.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    static constexpr std::uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += length;
  }
  return s.size();
}

const std::vector<Bytes>& special_sequences() {
  static const std::vector<Bytes> all = [] {
    std::vector<Bytes> out;
    for (int b = 0x80; b <= 0xA0; ++b) out.push_back({0xC2, static_cast<std::uint8_t>(b)});
    out.push_back({0xE1, 0x9A, 0x80});
    for (int b = 0x80; b <= 0x8A; ++b) out.push_back({0xE2, 0x80, static_cast<std::uint8_t>(b)});
    out.push_back({0xE2, 0x80, 0xAF});
    out.push_back({0xE2, 0x81, 0x9F});
    out.push_back({0xE3, 0x80, 0x80});
    return out;
  }();
  return all;
}

// The header's rules, read literally, with the special sequences as a list of byte strings.
std::size_t clean_prefix_oracle(const Bytes& s) {
  auto special_at = [&](std::size_t j) {
    for (const Bytes& seq : special_sequences()) {
      if (j + seq.size() <= s.size() &&
          std::equal(seq.begin(), seq.end(), s.begin() + static_cast<std::ptrdiff_t>(j))) {
        return true;
      }
    }
    return false;
  };
  auto word_at = [&](std::size_t j) {
    return (s[j] >= 0x21 && s[j] <= 0x7E) || (s[j] >= 0x80 && !special_at(j));
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool plain =
        word_at(i) || ((s[i] == 0x20 || s[i] == 0x0A) && i + 1 < s.size() && word_at(i + 1));
    if (!plain) return i;
  }
  return s.size();
}

// ---- Input generators.

// One random code point of 1-4 bytes, valid, mixing ASCII letters and spaces, Latin with
// accents, Cyrillic, CJK, emoji, and now and then a special sequence or a control.
void append_random_char(std::mt19937_64& rng, Bytes& out) {
  auto encode = [&](std::uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<std::uint8_t>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<std::uint8_t>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<std::uint8_t>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<std::uint8_t>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<std::uint8_t>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<std::uint8_t>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<std::uint8_t>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<std::uint8_t>(0x80 | (cp & 0x3F)));
    }
  };
  auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  switch (pick(0, 11)) {
    case 0:
    case 1:
    case 2:
      encode(pick(0x61, 0x7A));
      break;
    case 3:
      encode(pick(0, 5) == 0 ? 0x0A : 0x20);
      break;
    case 4:
      encode(pick(0, 0x7F));
      break;
    case 5:
      encode(pick(0x80, 0x7FF));
      break;
    case 6:
      encode(pick(0x400, 0x4FF));
      break;
    case 7: {
      std::uint32_t cp = pick(0x800, 0xFFFF);
      if (cp >= 0xD800 && cp <= 0xDFFF) cp -= 0x1000;
      encode(cp);
      break;
    }
    case 8:
      encode(pick(0x4E00, 0x9FFF));
      break;
    case 9:
      encode(pick(0x10000, 0x10FFFF));
      break;
    case 10:
      encode(pick(0x1F300, 0x1FAFF));
      break;
    default: {
      const auto& specials = special_sequences();
      const Bytes& seq = specials[pick(0, static_cast<std::uint32_t>(specials.size() - 1))];
      out.insert(out.end(), seq.begin(), seq.end());
      break;
    }
  }
}

Bytes random_utf8(std::mt19937_64& rng, std::size_t min_size) {
  Bytes out;
  while (out.size() < min_size) append_random_char(rng, out);
  return out;
}

// Mostly-plain text: words of letters and accented/CJK characters separated by single spaces,
// so clean_prefix gets far into the buffer before its first stop.
Bytes plain_text(std::mt19937_64& rng, std::size_t size) {
  static const std::vector<Bytes> words = {
      bytes("the"),
      bytes("quick"),
      bytes("caf\xC3\xA9"),
      bytes("\xD0\xBC\xD0\xB8\xD1\x80"),
      bytes("\xE6\x97\xA5\xE6\x9C\xAC"),
      bytes("\xF0\x9F\x98\x80"),
      bytes("x"),
      bytes("\xE2\x80\x94"),  // em dash: E2 80 94, a near miss of the E2 80 8x spaces
      bytes("\xE3\x80\x81"),  // ideographic comma: E3 80 81, a near miss of U+3000
  };
  Bytes out;
  while (out.size() < size) {
    const Bytes& w = words[std::uniform_int_distribution<std::size_t>(0, words.size() - 1)(rng)];
    out.insert(out.end(), w.begin(), w.end());
    out.push_back(std::uniform_int_distribution<int>(0, 9)(rng) == 0 ? 0x0A : 0x20);
  }
  out.resize(size);
  return out;
}

// Random bytes drawn from the values the kernels treat specially, so that random inputs reach
// the interesting cases far more often than uniform bytes would.
Bytes interesting_bytes(std::mt19937_64& rng, std::size_t size) {
  static constexpr std::uint8_t kAlphabet[] = {
      0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x21, 0x41, 0x7E, 0x7F, 0x80, 0x81, 0x8A,
      0x8B, 0x8F, 0x90, 0x9A, 0x9F, 0xA0, 0xA1, 0xAF, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3,
      0xDF, 0xE0, 0xE1, 0xE2, 0xE3, 0xED, 0xEF, 0xF0, 0xF3, 0xF4, 0xF5, 0xFF};
  Bytes out(size);
  std::uniform_int_distribution<std::size_t> pick(0, sizeof(kAlphabet) - 1);
  for (auto& b : out) b = kAlphabet[pick(rng)];
  return out;
}

Bytes uniform_bytes(std::mt19937_64& rng, std::size_t size) {
  Bytes out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// ---- Scalar reference against the oracles.

constexpr std::uint8_t kEdges[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                   0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                                   0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};

TEST(KernelsScalar, Utf8ValidPrefixGoldenCases) {
  struct Case {
    std::string_view input;
    std::size_t expected;
  };
  const Case cases[] = {
      {"", 0},
      {"abc", 3},
      {"h\xC3\xA9llo", 6},
      {"\xE6\x97\xA5\xF0\x9F\x98\x80", 7},
      {"ab\xC3", 2},              // truncated 2-byte sequence
      {"ab\xE6\x97", 2},          // truncated 3-byte sequence
      {"ab\xF0\x9F\x98", 2},      // truncated 4-byte sequence
      {"a\x80z", 1},              // stray continuation
      {"a\xC0\xAFz", 1},          // overlong '/'
      {"a\xE0\x80\xAFz", 1},      // overlong 3-byte
      {"a\xF0\x8F\xBF\xBFz", 1},  // overlong 4-byte
      {"a\xED\xA0\x80z", 1},      // surrogate U+D800
      {"a\xED\x9F\xBFz", 5},      // U+D7FF is fine
      {"a\xF4\x8F\xBF\xBFz", 6},  // U+10FFFF is fine
      {"a\xF4\x90\x80\x80z", 1},  // U+110000
      {"a\xF5\x80\x80\x80z", 1},  // F5 lead
      {"a\xC3"
       "a",
       1},                   // lead followed by ASCII
      {"\xEF\xBB\xBFx", 4},  // BOM is a valid character
      {std::string_view("a\0b", 3), 3},
  };
  for (const Case& c : cases) {
    const Bytes input = bytes(c.input);
    EXPECT_EQ(utf8_valid_prefix_scalar(input.data(), input.size()), c.expected) << hex(input);
    EXPECT_EQ(utf8_valid_prefix_oracle(input), c.expected) << hex(input);
  }
}

TEST(KernelsScalar, Utf8ValidPrefixAgreesWithIndependentDecoder) {
  std::mt19937_64 rng(1);
  for (int round = 0; round < 20000; ++round) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    Bytes input;
    switch (round % 3) {
      case 0:
        input = uniform_bytes(rng, size);
        break;
      case 1:
        input = interesting_bytes(rng, size);
        break;
      default:
        input = random_utf8(rng, size);
        if (!input.empty()) input[rng() % input.size()] = static_cast<std::uint8_t>(rng());
        break;
    }
    ASSERT_EQ(utf8_valid_prefix_scalar(input.data(), input.size()), utf8_valid_prefix_oracle(input))
        << hex(input);
  }
  // Every 1- to 4-byte string over a set that covers each lead class and each continuation range.
  Bytes input;
  auto visit = [&](auto&& self, std::size_t depth) -> void {
    ASSERT_EQ(utf8_valid_prefix_scalar(input.data(), input.size()), utf8_valid_prefix_oracle(input))
        << hex(input);
    if (depth == 4) return;
    for (const std::uint8_t b : kEdges) {
      input.push_back(b);
      self(self, depth + 1);
      input.pop_back();
    }
  };
  visit(visit, 0);
}

TEST(KernelsScalar, CleanPrefixGoldenCases) {
  struct Case {
    std::string_view input;
    std::size_t expected;
  };
  const Case cases[] = {
      {"", 0},
      {"hello world", 11},
      {"hello", 5},
      {"a ", 1},             // space at the end
      {"a  b", 1},           // space followed by whitespace
      {"a\tb", 1},           // tab is never plain
      {"a\r\nb", 1},         // CR is never plain
      {"a\nb", 3},           // newline followed by a word
      {"a\n\nb", 1},         // 2 newlines: the first is not plain
      {"a \nb", 1},          // space followed by newline
      {"a\x7F", 1},          // DEL
      {"a\xC2\xA0", 1},      // no-break space
      {"a\xC2\x85z", 1},     // C1 control NEL
      {"a\xC2\xA1", 3},      // inverted exclamation mark is a word
      {"a \xC2\xA0z", 1},    // space followed by a special sequence
      {"a \xC3\xA9", 4},     // space followed by a non-ASCII word
      {"a\xE2\x80", 3},      // E2 80 cut by the end: not a special sequence
      {"a\xE2\x80\x8B", 4},  // U+200B zero width space is not special
      {"a\xE2\x80\x8A", 1},  // U+200A hair space
      {"a\xE2\x80\xAF", 1},  // U+202F
      {"a\xE2\x81\x9F", 1},  // U+205F
      {"a\xE3\x80\x80", 1},  // U+3000
      {"a\xE1\x9A\x80", 1},  // U+1680
      {"a\xE3\x80\x81", 4},  // U+3001 ideographic comma is a word
      {std::string_view("a\0b", 3), 1},
  };
  for (const Case& c : cases) {
    const Bytes input = bytes(c.input);
    EXPECT_EQ(clean_prefix_scalar(input.data(), input.size()), c.expected) << hex(input);
    EXPECT_EQ(clean_prefix_oracle(input), c.expected) << hex(input);
  }
}

TEST(KernelsScalar, CleanPrefixAgreesWithLiteralReading) {
  std::mt19937_64 rng(2);
  for (int round = 0; round < 20000; ++round) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    const Bytes input = round % 2 == 0 ? interesting_bytes(rng, size) : plain_text(rng, size);
    ASSERT_EQ(clean_prefix_scalar(input.data(), input.size()), clean_prefix_oracle(input))
        << hex(input);
  }
}

// ---- Every supported ISA against the scalar reference.

class KernelsVsScalar : public ::testing::TestWithParam<Isa> {
 protected:
  const Kernels& kernels() const { return kernels_for(GetParam()); }

  // Checks both kernels on `input` and on every prefix of it ending in the last `cuts` bytes.
  void check(const Bytes& input, std::size_t cuts = 0) {
    const std::size_t first = input.size() > cuts ? input.size() - cuts : 0;
    for (std::size_t size = first; size <= input.size(); ++size) {
      const Bytes cut(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(size));
      const std::uint8_t* data = guarded().place(cut);
      ASSERT_EQ(kernels().utf8_valid_prefix(data, size), utf8_valid_prefix_scalar(data, size))
          << isa_name(GetParam()) << " utf8_valid_prefix, size " << size << ": " << hex(cut);
      ASSERT_EQ(kernels().clean_prefix(data, size), clean_prefix_scalar(data, size))
          << isa_name(GetParam()) << " clean_prefix, size " << size << ": " << hex(cut);
    }
  }
};

std::vector<Isa> isas_under_test() { return supported_isas(); }

std::string isa_test_name(const ::testing::TestParamInfo<Isa>& param) {
  return std::string(isa_name(param.param));
}

INSTANTIATE_TEST_SUITE_P(Isa, KernelsVsScalar, ::testing::ValuesIn(isas_under_test()),
                         isa_test_name);

TEST_P(KernelsVsScalar, TableReportsItsIsa) { EXPECT_EQ(kernels().isa, GetParam()); }

TEST_P(KernelsVsScalar, EveryLengthUpTo300) {
  std::mt19937_64 rng(3);
  const Bytes backgrounds[] = {
      Bytes(300, 'a'),         plain_text(rng, 300),
      random_utf8(rng, 300),   interesting_bytes(rng, 300),
      uniform_bytes(rng, 300), Bytes(300, 0x20),
      Bytes(300, 0x0A),
  };
  for (const Bytes& background : backgrounds) {
    for (std::size_t size = 0; size <= 300; ++size) {
      check(Bytes(background.begin(), background.begin() + static_cast<std::ptrdiff_t>(size)));
    }
  }
}

TEST_P(KernelsVsScalar, RandomBytes) {
  std::mt19937_64 rng(4);
  for (int round = 0; round < 3000; ++round) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(0, 300)(rng);
    check(round % 2 == 0 ? uniform_bytes(rng, size) : interesting_bytes(rng, size));
  }
}

TEST_P(KernelsVsScalar, RandomValidUtf8) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(0, 400)(rng);
    const Bytes input = random_utf8(rng, size);
    ASSERT_EQ(utf8_valid_prefix_scalar(input.data(), input.size()), input.size());
    check(input, 4);
  }
}

TEST_P(KernelsVsScalar, RandomValidUtf8WithOneCorruptByte) {
  std::mt19937_64 rng(6);
  for (int round = 0; round < 2000; ++round) {
    Bytes input = random_utf8(rng, std::uniform_int_distribution<std::size_t>(1, 400)(rng));
    input[rng() % input.size()] = static_cast<std::uint8_t>(rng());
    check(input);
  }
}

TEST_P(KernelsVsScalar, LargeInputs) {
  std::mt19937_64 rng(7);
  for (const std::size_t size : {1000u, 4096u + 17u, 65536u + 3u, 1u << 20}) {
    Bytes text = plain_text(rng, size);
    check(text, 3);
    Bytes utf8 = random_utf8(rng, size);
    check(utf8, 3);
    // One error far into an otherwise valid buffer.
    utf8[size - 100] = 0xFF;
    check(utf8);
  }
}

// Each class of invalid UTF-8, placed at every offset 0..130 (so it straddles the 16/32/64-byte
// block boundaries), before a valid tail of several lengths, and cut by the end of the buffer.
TEST_P(KernelsVsScalar, InvalidUtf8AtEveryOffset) {
  const std::vector<Bytes> invalid = {
      {0xC0, 0xAF},
      {0xC1, 0xBF},
      {0xE0, 0x80, 0xAF},
      {0xE0, 0x9F, 0xBF},
      {0xF0, 0x80, 0x80, 0xAF},
      {0xF0, 0x8F, 0xBF, 0xBF},
      {0xED, 0xA0, 0x80},
      {0xED, 0xBF, 0xBF},
      {0xF4, 0x90, 0x80, 0x80},
      {0xF4, 0xBF, 0xBF, 0xBF},
      {0xF5, 0x80, 0x80, 0x80},
      {0xF7, 0xBF, 0xBF, 0xBF},
      {0xF8, 0x88, 0x80, 0x80},
      {0xFE},
      {0xFF},
      {0xC3, 0x41},
      {0xE6, 0x97, 0x41},
      {0xE6, 0x41},
      {0xF0, 0x9F, 0x98, 0x41},
      {0xF0, 0x9F, 0x41},
      {0xF0, 0x41},
      {0x80},
      {0xBF},
      {0xC3, 0xA9, 0x80},
      {0xF0, 0x9F, 0x98, 0x80, 0x80},
      {0xC3, 0xC3, 0xA9},
      {0xE6, 0xC3, 0xA9},
      {0xC3},
      {0xE6, 0x97},
      {0xF0, 0x9F, 0x98},
      {0xE0},
      {0xF4},
  };
  std::mt19937_64 rng(8);
  const Bytes ascii_background(260, 'a');
  const Bytes utf8_background = random_utf8(rng, 260);
  for (const Bytes& bad : invalid) {
    for (std::size_t offset = 0; offset <= 130; ++offset) {
      for (const std::size_t tail : {0u, 1u, 2u, 3u, 5u, 33u, 70u}) {
        for (const Bytes* background : {&ascii_background, &utf8_background}) {
          Bytes input(background->begin(),
                      background->begin() + static_cast<std::ptrdiff_t>(offset));
          input.insert(input.end(), bad.begin(), bad.end());
          input.insert(input.end(), ascii_background.begin(),
                       ascii_background.begin() + static_cast<std::ptrdiff_t>(tail));
          check(input, tail == 0 ? bad.size() : 0);
        }
      }
    }
  }
}

// A valid multi-byte character at every offset, so leads and continuations straddle the block
// boundaries without any error.
TEST_P(KernelsVsScalar, ValidCharactersAcrossBlockBoundaries) {
  const std::vector<Bytes> chars = {
      {0xC3, 0xA9},       {0xE6, 0x97, 0xA5},       {0xF0, 0x9F, 0x98, 0x80},
      {0xEF, 0xBF, 0xBF}, {0xF4, 0x8F, 0xBF, 0xBF}, {0xED, 0x9F, 0xBF},
      {0xE0, 0xA0, 0x80}, {0xF0, 0x90, 0x80, 0x80}};
  for (const Bytes& c : chars) {
    for (std::size_t offset = 0; offset <= 130; ++offset) {
      for (const std::size_t tail : {0u, 1u, 64u, 70u}) {
        Bytes input(offset, 'a');
        input.insert(input.end(), c.begin(), c.end());
        input.insert(input.end(), tail, 'b');
        check(input, tail == 0 ? c.size() : 0);
      }
    }
  }
}

// Controls, tab, CR, DEL and NUL at every offset of plain text, and runs of whitespace that cross
// the block boundaries.
TEST_P(KernelsVsScalar, ControlsAndWhitespaceAtEveryOffset) {
  std::mt19937_64 rng(9);
  const Bytes text = plain_text(rng, 300);
  const Bytes letters(300, 'w');
  const Bytes stoppers[] = {{0x00},       {0x09},       {0x0D},       {0x0D, 0x0A}, {0x1F},
                            {0x7F},       {0x0B},       {0x20, 0x20}, {0x0A, 0x0A}, {0x20, 0x0A},
                            {0x0A, 0x20}, {0x20, 0x09}, {0x20},       {0x0A}};
  for (const Bytes& stop : stoppers) {
    for (std::size_t offset = 0; offset <= 130; ++offset) {
      for (const std::size_t tail : {0u, 1u, 2u, 3u, 4u, 40u, 70u}) {
        for (const Bytes* background : {&text, &letters}) {
          Bytes input(background->begin(),
                      background->begin() + static_cast<std::ptrdiff_t>(offset));
          input.insert(input.end(), stop.begin(), stop.end());
          input.insert(input.end(), letters.begin(),
                       letters.begin() + static_cast<std::ptrdiff_t>(tail));
          check(input);
        }
      }
    }
  }
  for (std::size_t offset = 0; offset <= 130; ++offset) {
    for (const std::size_t run : {2u, 15u, 31u, 33u, 64u, 100u}) {
      for (const std::uint8_t space :
           {std::uint8_t{0x20}, std::uint8_t{0x0A}, std::uint8_t{0x09}}) {
        Bytes input(offset, 'q');
        input.insert(input.end(), run, space);
        input.insert(input.end(), 5, 'r');
        check(input, 6);
      }
    }
  }
}

// Each special sequence, and near misses that are ordinary characters, at every offset; alone,
// after a space or newline, and cut by the end of the buffer.
TEST_P(KernelsVsScalar, SpecialSequencesAtEveryOffset) {
  std::vector<Bytes> sequences = special_sequences();
  const std::vector<Bytes> near_misses = {
      {0xC2, 0xA1},       {0xC2, 0x7F},       {0xC3, 0x80},       {0xE1, 0x9A, 0x81},
      {0xE1, 0x9B, 0x80}, {0xE2, 0x80, 0x8B}, {0xE2, 0x80, 0x7F}, {0xE2, 0x80, 0xAE},
      {0xE2, 0x80, 0xB0}, {0xE2, 0x81, 0x9E}, {0xE2, 0x81, 0xA0}, {0xE2, 0x82, 0x80},
      {0xE3, 0x80, 0x81}, {0xE3, 0x81, 0x80}, {0xE4, 0x80, 0x80}, {0xE0, 0x80, 0x80}};
  sequences.insert(sequences.end(), near_misses.begin(), near_misses.end());
  const Bytes letters(100, 'z');
  for (const Bytes& seq : sequences) {
    for (std::size_t offset = 0; offset <= 130; ++offset) {
      for (const std::uint8_t before : {std::uint8_t{0}, std::uint8_t{0x20}, std::uint8_t{0x0A}}) {
        for (const std::size_t tail : {0u, 1u, 2u, 3u, 4u, 40u, 70u}) {
          Bytes input(offset, 'y');
          if (before != 0 && offset > 0) input.back() = before;
          input.insert(input.end(), seq.begin(), seq.end());
          input.insert(input.end(), letters.begin(),
                       letters.begin() + static_cast<std::ptrdiff_t>(tail));
          check(input, tail == 0 ? seq.size() : 0);
        }
      }
    }
  }
  // Two special sequences (or a sequence and a space) back to back across a boundary.
  for (std::size_t offset = 20; offset <= 70; ++offset) {
    for (const Bytes& a : special_sequences()) {
      Bytes input(offset, 'k');
      input.push_back(0x20);
      input.insert(input.end(), a.begin(), a.end());
      input.insert(input.end(), a.begin(), a.end());
      input.insert(input.end(), 8, 'k');
      check(input, 4);
    }
  }
}

TEST(KernelsDispatch, ActiveKernelsMatchActiveIsa) {
  EXPECT_EQ(active_kernels().isa, active_isa());
  EXPECT_EQ(kernels_for(Isa::kScalar).utf8_valid_prefix, &utf8_valid_prefix_scalar);
}

TEST(KernelsDispatch, UnsupportedIsaIsRejected) {
  for (const Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (!isa_supported(isa)) {
      EXPECT_THROW(kernels_for(isa), InvalidArgument);
    }
  }
}

}  // namespace
}  // namespace luminamoon::data::cleaner_internal
