// NFC on utf8proc's Unicode tables: canonical decomposition per code point, canonical ordering
// by a stable sort on the combining class, then utf8proc's (linear) canonical composition.
//
// Most text is already NFC, so only the stretches that can change are normalised. A code point c
// is *inert* when NFC(c) == c and the first code point d1 of its canonical decomposition has
// combining class 0 and is never the second code point of a composition. Then nothing before c
// interacts with c or anything after it (d1 is a starter, so no reordering crosses it and it
// blocks every later composition with an earlier starter), hence
// NFC(x + c + y) == NFC(x) + NFC(c + y), and an inert c followed by another inert code point is
// its own NFC. So the text is copied inert code point by inert code point, and each maximal run
// of non-inert code points is normalised together with the inert one just before it (which may
// compose with the run: e + U+0301). Letters, CJK, Hangul syllables and precomposed characters
// are inert; combining marks, singletons (U+212B) and composition exclusions (U+0958) are not.
#include "cleaner/internal/nfc.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data::cleaner_internal {
namespace {

constexpr std::uint32_t kCodePoints = 0x110000;
constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);

int combining_class(utf8proc_int32_t cp) { return utf8proc_get_property(cp)->combining_class; }

// Full canonical decomposition of one code point into out[0, 8); returns its length.
std::size_t decompose(utf8proc_int32_t cp, utf8proc_int32_t (&out)[8]) {
  int boundclass = 0;
  const utf8proc_ssize_t n = utf8proc_decompose_char(cp, out, 8, UTF8PROC_DECOMPOSE, &boundclass);
  if (n < 1 || n > 8) {
    throw Error(std::string("TextCleaner: NFC decomposition failed: ") +
                utf8proc_errmsg(n < 0 ? n : UTF8PROC_ERROR_NOMEM));
  }
  return static_cast<std::size_t>(n);
}

// The inert code points as a bitmap, built once per process on first use (~20 ms).
class InertTable {
 public:
  InertTable() : bits_(kCodePoints / 64, 0) {
    // Every code point that occurs after the first position of a canonical decomposition is a
    // potential second code point of a composition (a superset of the real ones: every
    // composition pair X + Y -> P has Y in P's full decomposition, after X's part).
    std::vector<bool> second(kCodePoints, false);
    utf8proc_int32_t d[8];
    for (std::uint32_t cp = 0; cp < kCodePoints; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const std::size_t n = decompose(static_cast<utf8proc_int32_t>(cp), d);
      for (std::size_t k = 1; k < n; ++k) second[static_cast<std::uint32_t>(d[k])] = true;
    }
    for (std::uint32_t cp = 0; cp < kCodePoints; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const auto c = static_cast<utf8proc_int32_t>(cp);
      const std::size_t n = decompose(c, d);
      const auto d1 = static_cast<std::uint32_t>(d[0]);
      if (combining_class(d[0]) != 0 || second[d1]) continue;
      if (n == 1 && d1 != cp) continue;  // a singleton: U+212B -> U+00C5
      if (n > 1) {                       // is c its own NFC?
        std::stable_sort(d, d + n, [](utf8proc_int32_t a, utf8proc_int32_t b) {
          return combining_class(a) < combining_class(b);
        });
        const utf8proc_ssize_t m = utf8proc_normalize_utf32(
            d, static_cast<utf8proc_ssize_t>(n),
            static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
        if (m != 1 || d[0] != c) continue;
      }
      bits_[cp >> 6] |= std::uint64_t{1} << (cp & 63u);
    }
  }

  bool inert(std::uint32_t cp) const noexcept { return (bits_[cp >> 6] >> (cp & 63u)) & 1u; }

 private:
  std::vector<std::uint64_t> bits_;
};

const InertTable& inert_table() {
  static const InertTable table;
  return table;
}

// No byte >= 0xCC means no code point >= U+0300: nothing that decomposes differently, combines
// or reorders, so the text is NFC already and the table need not even be built.
bool may_need_nfc(std::string_view text) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {  // a max over a fixed block vectorises; an early exit would not
    std::uint8_t block_max = 0;
    for (std::size_t k = 0; k < 64; ++k) block_max = std::max(block_max, p[i + k]);
    if (block_max >= 0xCC) return true;
  }
  for (; i < n; ++i) {
    if (p[i] >= 0xCC) return true;
  }
  return false;
}

using utf8_internal::decode_valid;

// NFC of one stretch of valid UTF-8; the result stays valid until the next call.
class StretchNormalizer {
 public:
  std::string_view normalize(std::string_view stretch) {
    code_points_.clear();
    const auto* p = reinterpret_cast<const std::uint8_t*>(stretch.data());
    std::size_t i = 0;
    utf8proc_int32_t parts[8];
    while (i < stretch.size()) {
      const std::size_t n = decompose(static_cast<utf8proc_int32_t>(decode_valid(p, i)), parts);
      code_points_.insert(code_points_.end(), parts, parts + n);
    }
    reorder();
    const auto length = static_cast<utf8proc_ssize_t>(code_points_.size());
    code_points_.push_back(0);  // utf8proc_reencode writes a NUL after the UTF-8 it produces
    const utf8proc_ssize_t bytes =
        utf8proc_reencode(code_points_.data(), length,
                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
    if (bytes < 0) {
      throw Error(std::string("TextCleaner: NFC composition failed: ") + utf8proc_errmsg(bytes));
    }
    return {reinterpret_cast<const char*>(code_points_.data()), static_cast<std::size_t>(bytes)};
  }

 private:
  // Canonical ordering: every maximal run of non-starters sorted by combining class, stably.
  void reorder() {
    const auto by_class = [](utf8proc_int32_t a, utf8proc_int32_t b) {
      return combining_class(a) < combining_class(b);
    };
    const auto begin = code_points_.begin();
    const std::size_t n = code_points_.size();
    std::size_t i = 0;
    while (i < n) {
      if (combining_class(code_points_[i]) == 0) {
        ++i;
        continue;
      }
      std::size_t end = i + 1;
      while (end < n && combining_class(code_points_[end]) != 0) ++end;
      const auto first = begin + static_cast<std::ptrdiff_t>(i);
      const auto last = begin + static_cast<std::ptrdiff_t>(end);
      if (!std::is_sorted(first, last, by_class)) std::stable_sort(first, last, by_class);
      i = end;
    }
  }

  std::vector<utf8proc_int32_t> code_points_;
};

}  // namespace

bool nfc_in_place(std::string& text) {
  if (!may_need_nfc(text)) return false;
  const InertTable& table = inert_table();
  const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t n = text.size();
  StretchNormalizer normalizer;
  std::string result;  // built only once something changes
  bool changed = false;
  std::size_t settled = 0;               // text[0, settled) is accounted for in `result`
  std::size_t last_inert = kNoPosition;  // where the last inert code point starts
  std::size_t i = 0;
  while (i < n) {
    const std::size_t start = i;
    if (p[i] < 0x80 || table.inert(decode_valid(p, i))) {
      if (p[start] < 0x80) ++i;
      last_inert = start;
      continue;
    }
    // A non-inert run: from the inert code point before it (it may compose with the run) to the
    // next inert code point.
    const std::size_t begin = last_inert == kNoPosition ? settled : last_inert;
    std::size_t end = i;
    while (end < n) {
      std::size_t next = end;
      if (p[end] < 0x80 || table.inert(decode_valid(p, next))) break;
      end = next;
    }
    const std::string_view stretch(text.data() + begin, end - begin);
    const std::string_view normalized = normalizer.normalize(stretch);
    if (!changed && normalized != stretch) {
      changed = true;
      result.reserve(n + n / 8);
      result.append(text, 0, begin);
      settled = begin;
    }
    if (changed) {
      result.append(text, settled, begin - settled);
      result.append(normalized);
    }
    settled = end;
    last_inert = kNoPosition;
    i = end;
  }
  if (!changed) return false;
  result.append(text, settled, n - settled);
  text = std::move(result);
  return true;
}

}  // namespace luminamoon::data::cleaner_internal
