// The PIIMasker's verifiers: from an anchor to a validated candidate, one function per rule of
// docs/pii.md, each mirrored line for line by python/luminamoon/data/fallbacks/pii.py. Every scan
// is bounded (a candidate never needs more than a fixed window, and each maximal run of digits,
// dots or hex characters is examined once), so the whole pass is linear in the text length.
#include "pii/internal/scanner.h"

#include <algorithm>
#include <cstring>
#include <span>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/bits.h"

namespace luminamoon::data::pii_internal {
namespace {

// ---- character classes (ASCII only: bytes >= 0x80 belong to none) --------------------------

enum : std::uint8_t {
  kDigit = 1 << 0,   // 0-9
  kHex = 1 << 1,     // 0-9 A-F a-f
  kAlpha = 1 << 2,   // A-Z a-z
  kLocal = 1 << 3,   // A-Z a-z 0-9 and RFC 5322 atext . ! # $ % & ' * + - / = ? ^ _ ` { | } ~
  kLabel = 1 << 4,   // A-Z a-z 0-9 -           (domain label)
  kWord = 1 << 5,    // A-Z a-z 0-9 _           (token boundary)
  kKey = 1 << 6,     // A-Z a-z 0-9 _ -         (key token / key boundary)
  kBase64 = 1 << 7,  // A-Z a-z 0-9 / +         (AWS secret access key)
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> c{};
  for (int b = 0; b < 128; ++b) {
    const bool digit = b >= '0' && b <= '9';
    const bool upper = b >= 'A' && b <= 'Z';
    const bool lower = b >= 'a' && b <= 'z';
    const bool alnum = digit || upper || lower;
    std::uint8_t v = 0;
    if (digit) v |= kDigit;
    if (digit || (b >= 'A' && b <= 'F') || (b >= 'a' && b <= 'f')) v |= kHex;
    if (upper || lower) v |= kAlpha;
    if (alnum || (b != 0 && std::string_view(".!#$%&'*+-/=?^_`{|}~").find(static_cast<char>(b)) !=
                                std::string_view::npos)) {
      v |= kLocal;
    }
    if (alnum || b == '-') v |= kLabel;
    if (alnum || b == '_') v |= kWord;
    if (alnum || b == '_' || b == '-') v |= kKey;
    if (alnum || b == '/' || b == '+') v |= kBase64;
    c[static_cast<std::size_t>(b)] = v;
  }
  return c;
}

constexpr std::array<std::uint8_t, 256> kClass = make_classes();

inline bool is(std::uint8_t b, std::uint8_t cls) { return (kClass[b] & cls) != 0; }
inline bool is_digit(std::uint8_t b) { return b >= '0' && b <= '9'; }
inline bool is_upper_or_digit(std::uint8_t b) { return (b >= 'A' && b <= 'Z') || is_digit(b); }
inline bool is_alnum(std::uint8_t b) { return is(b, kWord) && b != '_'; }
inline bool is_ws(std::uint8_t b) { return b == ' ' || b == '\t'; }
inline bool is_quote(std::uint8_t b) { return b == '"' || b == '\''; }
inline std::uint8_t lower(std::uint8_t b) {
  return (b >= 'A' && b <= 'Z') ? static_cast<std::uint8_t>(b + 32) : b;
}

struct Text {
  const std::uint8_t* d;
  std::size_t n;
  std::uint8_t at(std::size_t i) const { return i < n ? d[i] : 0; }
  std::uint8_t before(std::size_t i) const { return i > 0 ? d[i - 1] : 0; }
  std::string_view view(std::size_t a, std::size_t b) const {
    return {reinterpret_cast<const char*>(d) + a, b - a};
  }
  bool starts_with(std::size_t i, std::string_view s) const {
    return i <= n && n - i >= s.size() && std::memcmp(d + i, s.data(), s.size()) == 0;
  }
  // Whether text[i - s.size(), i) equals s, ASCII case-insensitively (s is lower case).
  bool ends_with_ci(std::size_t i, std::string_view s) const {
    if (i < s.size()) return false;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (lower(d[i - s.size() + k]) != static_cast<std::uint8_t>(s[k])) return false;
    }
    return true;
  }
  // First occurrence of `needle` starting in [from, last_start], or npos.
  std::size_t find(std::string_view needle, std::size_t from, std::size_t last_start) const {
    if (n < needle.size()) return std::string_view::npos;
    last_start = std::min(last_start, n - needle.size());
    for (std::size_t i = from; i <= last_start;) {
      const void* hit = std::memchr(d + i, needle[0], last_start - i + 1);
      if (hit == nullptr) break;
      const std::size_t j = static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - d);
      if (std::memcmp(d + j, needle.data(), needle.size()) == 0) return j;
      i = j + 1;
    }
    return std::string_view::npos;
  }
};

// ---- EMAIL --------------------------------------------------------------------------------

constexpr std::size_t kMaxLocal = 64;
constexpr std::size_t kMaxLocalRun = 256;  // a longer atext run before '@' is no address
constexpr std::size_t kMaxDomain = 253;
constexpr std::size_t kDomainWindow = 256;  // > kMaxDomain + 2: see docs/pii.md

// File extensions that are not top-level domains: "icon@2x.png" is an asset name, not an address.
constexpr std::array<std::string_view, 28> kNotTlds = {
    "png",  "jpg",  "jpeg", "gif",  "svg",  "webp", "bmp", "ico", "tif", "tiff",
    "heic", "avif", "css",  "scss", "js",   "mjs",  "cjs", "jsx", "ts",  "tsx",
    "json", "xml",  "yml",  "yaml", "html", "htm",  "txt", "pdf"};

// Up to four lower-case letters packed into an integer, first letter lowest.
constexpr std::uint32_t pack_letters(std::string_view s) {
  std::uint32_t key = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    key |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[i])) << (8 * i);
  }
  return key;
}

// kNotTlds packed: a TLD of at most four letters is compared as one integer against each, all
// 28 compares without a branch (an e-mail's last label was compared with 28 strings; on
// address-dense text such as changelogs that was a third of the e-mail verifier's time). Letters
// are never 0, so the key also tells the length.
constexpr std::array<std::uint32_t, kNotTlds.size()> pack_not_tlds() {
  std::array<std::uint32_t, kNotTlds.size()> packed{};
  for (std::size_t i = 0; i < kNotTlds.size(); ++i) packed[i] = pack_letters(kNotTlds[i]);
  return packed;
}
constexpr std::array<std::uint32_t, kNotTlds.size()> kNotTldsPacked = pack_not_tlds();
static_assert([] {
  for (std::string_view ext : kNotTlds) {
    if (ext.size() > 4) return false;
    for (char c : ext) {
      if (c < 'a' || c > 'z') return false;
    }
  }
  return true;
}());

// kNotTldsPacked as an open-addressing hash set (64 slots, 0 = empty): one multiply and usually
// one compare per TLD instead of 28.
constexpr std::size_t kNotTldSlots = 64;
constexpr std::size_t not_tld_slot(std::uint32_t key) {
  return static_cast<std::size_t>((key * 0x9E3779B1u) >> 26);
}
constexpr std::array<std::uint32_t, kNotTldSlots> make_not_tld_set() {
  std::array<std::uint32_t, kNotTldSlots> set{};
  for (const std::uint32_t key : kNotTldsPacked) {
    std::size_t i = not_tld_slot(key);
    while (set[i] != 0) i = (i + 1) % kNotTldSlots;
    set[i] = key;
  }
  return set;
}
constexpr std::array<std::uint32_t, kNotTldSlots> kNotTldSet = make_not_tld_set();

constexpr bool not_tld_extension(std::uint32_t key) {
  for (std::size_t i = not_tld_slot(key);; i = (i + 1) % kNotTldSlots) {
    if (kNotTldSet[i] == key) return true;
    if (kNotTldSet[i] == 0) return false;
  }
}
static_assert([] {
  for (const std::uint32_t key : kNotTldsPacked) {
    if (!not_tld_extension(key)) return false;
  }
  return !not_tld_extension(pack_letters("org")) && !not_tld_extension(pack_letters("com"));
}());

bool tld_ok(const Text& t, std::size_t a, std::size_t b) {
  const std::size_t len = b - a;
  if (len < 2 || len > 63) return false;
  for (std::size_t i = a; i < b; ++i) {
    if (!is(t.d[i], kAlpha)) return false;
  }
  if (len > 4) return true;  // every extension of kNotTlds has at most four letters
  std::uint32_t key = 0;
  for (std::size_t i = 0; i < len; ++i) key |= std::uint32_t{lower(t.d[a + i])} << (8 * i);
  return !not_tld_extension(key);
}

// The atext characters that are not in the classic [A-Za-z0-9._%+-] set, and may not start a
// local part.
inline bool rfc5322_special(std::uint8_t b) {
  return b != 0 &&
         std::string_view("!#$&'*/=?^`{|}~").find(static_cast<char>(b)) != std::string_view::npos;
}

// Where the local part ending at `a` starts inside the atext run [l, a), or a when there is none:
// '?' and '&' (URL query) and a quote that is not between two letters/digits end what comes
// before them; so does '=' after a one-case key ("email=jo@x.org", "VALUE="); then the special
// characters are trimmed from the front ("'jo@x.org'", "*jo@x.org*").
std::size_t local_part_start(const Text& t, std::size_t l, std::size_t a) {
  std::size_t c = l;
  for (std::size_t i = l; i < a; ++i) {
    const std::uint8_t x = t.d[i];
    if (x == '?' || x == '&') {
      c = i + 1;
    } else if (x == '\'' || x == '`') {
      if (!(is_alnum(t.before(i)) && is_alnum(t.at(i + 1)))) c = i + 1;
    } else if (x == '=' && i > c && is(t.d[c], kAlpha)) {
      // A key: lower-case ("email=") or upper-case ("VALUE="), letters, digits, '_' and '-'.
      bool has_lower = false, has_upper = false, key = true;
      for (std::size_t k = c; k < i && key; ++k) {
        const std::uint8_t y = t.d[k];
        has_lower |= y >= 'a' && y <= 'z';
        has_upper |= y >= 'A' && y <= 'Z';
        key = is(y, kKey);
      }
      key = key && !(has_lower && has_upper);
      if (key) c = i + 1;
    }
  }
  while (c < a && rfc5322_special(t.d[c])) ++c;
  return c;
}

constexpr std::size_t kNoNewline = ~std::size_t{0};

// The index of the last '\n' in d[0, n), or kNoNewline: SSE2 compares where there are, glibc's
// vectorised memrchr or a byte at a time otherwise.
std::size_t last_newline(const std::uint8_t* d, std::size_t n) {
#if defined(__SSE2__)
  // 16 bytes at a time from the end, inline: the line start before an e-mail is usually 10-40
  // bytes back, where the call into memrchr (through the PLT) cost as much as the search.
  const __m128i newline = _mm_set1_epi8('\n');
  while (n >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + n - 16));
    const auto hits = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)));
    if (hits != 0) return n - 16 + static_cast<std::size_t>(31 - __builtin_clz(hits));
    n -= 16;
  }
  while (n > 0) {
    if (d[n - 1] == '\n') return n - 1;
    --n;
  }
  return kNoNewline;
#elif defined(__GLIBC__)
  const void* hit = memrchr(d, '\n', n);
  return hit == nullptr ? kNoNewline
                        : static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - d);
#else
  while (n > 0) {
    if (d[n - 1] == '\n') return n - 1;
    --n;
  }
  return kNoNewline;
#endif
}

// Header fields whose values are message identifiers, not mailboxes (lower case, with ':').
constexpr std::array<std::string_view, 5> kIdHeaders = {
    "message-id:", "content-id:", "in-reply-to:", "references:", "resent-message-id:"};

// Whether the local part starting at l is a message or queue identifier: on a line that starts
// with one of kIdHeaders, or right after the word "id" and a space ("with SMTP id <0.1@x.dk>").
bool message_id_context(const Text& t, std::size_t l) {
  std::size_t q = l;
  if (q > 0 && t.d[q - 1] == '<') --q;
  if (q >= 3 && t.d[q - 1] == ' ' && t.ends_with_ci(q - 1, "id") &&
      (q == 3 || !is(t.d[q - 4], kWord))) {
    return true;
  }
  // The start of the line: after the last '\n' among the 200 bytes before l (else 200 bytes
  // back, or the start of the text).
  const std::size_t lowest = l >= 200 ? l - 200 : 0;
  std::size_t line = lowest;
  if (const std::size_t nl = last_newline(t.d + lowest, l - lowest); nl != kNoNewline) {
    line = lowest + nl + 1;
  }
  if (line > 0 && t.d[line - 1] != '\n') return false;
  // Every header of kIdHeaders starts with one of these letters (most lines do not).
  const std::uint8_t first = lower(t.d[line]);
  if (first != 'm' && first != 'c' && first != 'i' && first != 'r') return false;
  for (std::string_view header : kIdHeaders) {
    if (line + header.size() <= l && t.ends_with_ci(line + header.size(), header)) return true;
  }
  return false;
}

#if defined(__SSE2__)
// ---- e-mail, 32 bytes at a time (SSE2, baseline x86-64) --------------------------------------
// email_at_simd classifies the 32 bytes before the '@' and the 32 after it with compares instead
// of a table lookup per byte, and answers the common case (a local part and a domain that both
// end inside those windows, no character that local_part_start acts on) with bit operations;
// everything else (a window that runs off the text, a run filling a window, a special character
// in the local part) is left to the byte loops of email_at_scalar, so the two agree on every
// input (tests/cpp/pii/pii_masker_test.cc puts addresses at every offset of both windows).

// Bit i of each mask describes byte p[i] of the 32 bytes at p.
struct EmailMasks32 {
  std::uint32_t local;    // kLocal
  std::uint32_t special;  // kLocal but not [A-Za-z0-9.%+_-]: what local_part_start acts on
  std::uint32_t label;    // kLabel
  std::uint32_t alpha;    // kAlpha
  std::uint32_t dot;      // '.'
  std::uint32_t hyphen;   // '-'
};

inline __m128i eq8(__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); }
// Bytes in [lo, hi] (both in 0x00..0x7F: a byte >= 0x80 is negative as a signed byte, so never).
inline __m128i in_range8(__m128i v, char lo, char hi) {
  return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                       _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
}
inline std::uint32_t bits16(__m128i m) {
  return static_cast<std::uint32_t>(_mm_movemask_epi8(m)) & 0xFFFFu;
}

// The masks of the 16 bytes at p: local and special before the '@' (kLocalSide), label, alpha
// and hyphen after it; dot on both sides.
struct Masks16 {
  std::uint32_t local = 0, special = 0, label = 0, alpha = 0, dot = 0, hyphen = 0;
};

template <bool kLocalSide>
inline Masks16 classify16(const std::uint8_t* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i digit = in_range8(v, '0', '9');
  const __m128i alpha = in_range8(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z');
  const __m128i alnum = _mm_or_si128(digit, alpha);
  const __m128i dot = eq8(v, '.');
  const __m128i hyphen = eq8(v, '-');
  Masks16 m;
  m.dot = bits16(dot);
  if constexpr (kLocalSide) {
    // kLocal: printable ASCII (0x21..0x7E) but " ( ) , : ; < > @ [ \ ].
    const __m128i pair = _mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xFE)));
    __m128i excluded = _mm_or_si128(eq8(pair, '('), eq8(pair, ':'));  // ( )  : ;
    excluded = _mm_or_si128(excluded, eq8(pair, '\\'));               // \ ]
    excluded = _mm_or_si128(excluded, _mm_or_si128(eq8(v, '"'), eq8(v, ',')));
    excluded = _mm_or_si128(excluded, _mm_or_si128(eq8(v, '<'), eq8(v, '>')));
    excluded = _mm_or_si128(excluded, _mm_or_si128(eq8(v, '@'), eq8(v, '[')));
    const __m128i local = _mm_andnot_si128(excluded, in_range8(v, '!', '~'));
    __m128i plain = _mm_or_si128(alnum, _mm_or_si128(dot, hyphen));
    plain = _mm_or_si128(plain, _mm_or_si128(eq8(v, '%'), eq8(v, '+')));
    plain = _mm_or_si128(plain, eq8(v, '_'));
    m.local = bits16(local);
    m.special = bits16(_mm_andnot_si128(plain, local));
  } else {
    m.label = bits16(_mm_or_si128(alnum, hyphen));
    m.alpha = bits16(alpha);
    m.hyphen = bits16(hyphen);
  }
  return m;
}

template <bool kLocalSide>
inline EmailMasks32 classify32(const std::uint8_t* p) {
  const Masks16 a = classify16<kLocalSide>(p), b = classify16<kLocalSide>(p + 16);
  return {a.local | (b.local << 16), a.special | (b.special << 16), a.label | (b.label << 16),
          a.alpha | (b.alpha << 16), a.dot | (b.dot << 16),         a.hyphen | (b.hyphen << 16)};
}
#endif

bool email_tail(const Text& t, std::size_t l, std::size_t a, std::vector<Candidate>& out);

void email_at_scalar(const Text& t, std::size_t a, std::vector<Candidate>& out) {
  std::size_t l = a;
  while (l > 0 && a - l <= kMaxLocalRun && is(t.d[l - 1], kLocal)) --l;
  if (l == a || a - l > kMaxLocalRun) return;
  l = local_part_start(t, l, a);
  if (l == a || a - l > kMaxLocal) return;
  if (t.d[l] == '.' || t.d[a - 1] == '.') return;
  for (std::size_t i = l + 1; i < a; ++i) {
    if (t.d[i] == '.' && t.d[i - 1] == '.') return;
  }
  email_tail(t, l, a, out);
}

// The domain after the '@' at a, and the message-id rule, for the local part [l, a).
bool email_tail(const Text& t, std::size_t l, std::size_t a, std::vector<Candidate>& out) {
  // Domain: the greedy match of LABEL(.LABEL)* (LABEL = [A-Za-z0-9-]+), looked for in a window of
  // kDomainWindow bytes; anything longer than kMaxDomain is rejected.
  const std::size_t p = a + 1;
  const std::size_t limit = std::min(t.n, p + kDomainWindow);
  std::size_t q = p;
  while (q < limit && is(t.d[q], kLabel)) ++q;
  if (q == p) return false;
  // Each label is checked as the scan passes it (at most 63 bytes, no '-' at either end): one
  // walk over the domain instead of a second one to split it at its dots.
  const auto bad_label = [&](std::size_t from, std::size_t to) {
    return to - from > 63 || t.d[from] == '-' || t.d[to - 1] == '-';
  };
  if (bad_label(p, q)) return false;
  std::size_t labels = 1, last = p, e = q;
  while (q + 1 < limit && t.d[q] == '.' && is(t.d[q + 1], kLabel)) {
    const std::size_t from = ++q;
    while (q < limit && is(t.d[q], kLabel)) ++q;
    if (bad_label(from, q)) return false;
    ++labels;
    last = from;
    e = q;
  }
  if (e - p > kMaxDomain || labels < 2 || !tld_ok(t, last, e)) return false;
  if (message_id_context(t, l)) return false;
  out.push_back({l, e, PiiCategory::kEmail});
  return true;
}

#if defined(__SSE2__)
// email_at_scalar's result, from the masks of the 32 bytes on each side of the '@' (see above).
void email_at_simd(const Text& t, std::size_t a, std::vector<Candidate>& out) {
  const std::size_t p = a + 1;
  if (a < 32 || t.n - p < 32) return email_at_scalar(t, a, out);
  // Local part: the run of kLocal bytes ending at a - 1 (bit 31 of the window before the '@').
  const EmailMasks32 before = classify32<true>(t.d + a - 32);
  const auto run = static_cast<std::size_t>(__builtin_clz(~before.local | 1u));
  if (run == 0) return;
  if (run >= 31 || (before.special >> (32 - run)) != 0) return email_at_scalar(t, a, out);
  // No special character: local_part_start leaves the run as it is; then no '.' first or last
  // and no "..".
  const std::uint32_t dots = before.dot >> (32 - run);  // bit 0 = the local part's first byte
  if ((dots & 1u) != 0 || (dots >> (run - 1)) != 0 || (dots & (dots >> 1)) != 0) return;
  const std::size_t l = a - run;
  // Domain: LABEL(.LABEL)*, greedy: a label byte, or a '.' followed by one, from p on.
  const EmailMasks32 after = classify32<false>(t.d + p);
  if ((after.label & 1u) == 0) return;
  const std::uint32_t go = after.label | (after.dot & (after.label >> 1));
  // Bit 31 of go does not know byte 32: a domain reaching it is left to the byte loops.
  const auto end = static_cast<std::size_t>(__builtin_ctz(~go | 0x80000000u));
  if (end >= 31) return email_at_scalar(t, a, out);
  const std::uint32_t inside = (1u << end) - 1;
  const std::uint32_t label_dots = after.dot & inside;
  // Labels (all shorter than 64 here) must neither start nor end with '-'.
  const std::uint32_t edges = 1u | (label_dots << 1) | (label_dots >> 1) | (1u << (end - 1));
  if ((after.hyphen & edges) != 0 || label_dots == 0) return;
  const auto last = static_cast<std::size_t>(32 - __builtin_clz(label_dots));
  // tld_ok(t, p + last, p + end) from the masks: the last label (2 to 30 bytes here) all letters,
  // and one of at most four letters not an extension of kNotTlds, its key read as one 4-byte load
  // (x86 is little-endian: the first letter lands lowest, as pack_letters puts it; last <= 28, so
  // the load stays inside the window) and lower-cased with | 0x20 (exact on letters).
  const std::size_t tld = end - last;
  const std::uint32_t tld_bits = inside & ~((1u << last) - 1);
  if (tld < 2 || (after.alpha & tld_bits) != tld_bits) return;
  if (tld <= 4) {
    std::uint32_t key;
    std::memcpy(&key, t.d + p + last, sizeof key);
    key |= 0x20202020u;
    if (tld < 4) key &= (1u << (8 * tld)) - 1;
    if (not_tld_extension(key)) return;
  }
  if (message_id_context(t, l)) return;
  out.push_back({l, p + end, PiiCategory::kEmail});
}
#endif

void email_at(const Text& t, std::size_t a, bool simd, std::vector<Candidate>& out) {
#if defined(__SSE2__)
  if (simd) return email_at_simd(t, a, out);
#else
  (void)simd;
#endif
  email_at_scalar(t, a, out);
}

// ---- IP_ADDRESS ---------------------------------------------------------------------------

constexpr std::size_t kMaxIpv6Text = 45;  // "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"

// Words that make the dotted quad after them a version or a section number (docs/pii.md,
// "IPv4 context rules"), lower case; matched as whole words, case-insensitively.
constexpr std::array<std::string_view, 29> kNotAddressWords = {
    "version",  "versions",  "revision", "revisions", "release", "releases",
    "released", "rev",       "ver",      "v",         "since",   "policy",
    "standard", "standards", "section",  "sections",  "sect",    "sec",
    "chapter",  "figure",    "fig",      "table",     "step",    "appendix",
    "clause",   "paragraph", "bump",     "gcc",       "nmu"};
// "to", "for", "in" and "from" count only after one of these ("release notes to 1.7.8.4").
constexpr std::array<std::string_view, 21> kBeforePreposition = {
    "notes",  "prepare", "preparing",  "update",  "updated", "upgrade",     "upgraded",
    "bump",   "bumped",  "changes",    "fixed",   "new",     "released",    "version",
    "broken", "added",   "introduced", "removed", "fixes",   "corrections", "references"};

// The letters (at most 10) ending at q as a whole word, or an empty view.
std::string_view word_before(const Text& t, std::size_t q) {
  std::size_t w = q;
  while (w > 0 && q - w < 10 && is(t.d[w - 1], kAlpha)) --w;
  if (w == q || (w > 0 && is(t.d[w - 1], kAlpha))) return {};
  return t.view(w, q);
}

bool word_in(std::string_view word, std::span<const std::string_view> words) {
  for (std::string_view candidate : words) {
    if (candidate.size() != word.size()) continue;
    bool same = true;
    for (std::size_t k = 0; k < word.size() && same; ++k) {
      same = lower(static_cast<std::uint8_t>(word[k])) == static_cast<std::uint8_t>(candidate[k]);
    }
    if (same) return true;
  }
  return false;
}

// A version constraint: ">= ", "<= ", ">> " or "<< " (one space optional) before a.
bool after_constraint(const Text& t, std::size_t a) {
  std::size_t q = a;
  if (q > 0 && t.d[q - 1] == ' ') --q;
  if (q < 2) return false;
  const std::uint8_t x = t.d[q - 2], y = t.d[q - 1];
  return (y == '=' && (x == '>' || x == '<')) || (x == y && (x == '>' || x == '<'));
}

// Up to 3 separators " \t:=." before a, then a context word (or a section sign U+00A7).
bool after_context_word(const Text& t, std::size_t a) {
  std::size_t q = a, skipped = 0;
  while (q > 0 && skipped < 3 && std::memchr(" \t:=.", t.d[q - 1], 5) != nullptr) {
    --q;
    ++skipped;
  }
  if (skipped == 0) return false;
  if (q >= 2 && t.d[q - 2] == 0xC2 && t.d[q - 1] == 0xA7) return true;
  const std::string_view word = word_before(t, q);
  if (word.empty()) return false;
  if (word_in(word, kNotAddressWords)) return true;
  static constexpr std::string_view kPrepositions[] = {"to", "for", "in", "from"};
  if (!word_in(word, kPrepositions)) return false;
  const std::size_t p = q - word.size();
  if (p == 0 || t.d[p - 1] != ' ') return false;
  return word_in(word_before(t, p - 1), kBeforePreposition);
}

// The line after the one holding b is an underline: 3+ of ". - = * ~" and nothing else.
bool underlined(const Text& t, std::size_t b) {
  const std::size_t limit = std::min(t.n, b + 200);
  std::size_t q = b;
  while (q < limit && t.d[q] != '\n') ++q;
  if (q == limit) return false;
  std::size_t r = q + 1, count = 0;
  while (r < t.n && std::memchr(".-=*~", t.d[r], 5) != nullptr && t.d[r] != 0) {
    ++r;
    ++count;
  }
  return count >= 3 && (r == t.n || t.d[r] == '\n');
}

// Only spaces and tabs between the start of the line and a.
bool starts_line(const Text& t, std::size_t a) {
  std::size_t q = a;
  while (q > 0 && is_ws(t.d[q - 1])) --q;
  return q == 0 || t.d[q - 1] == '\n';
}

// "pkg (1.2.3.4": a package name that starts its line, a space, an opening parenthesis.
bool after_package_name(const Text& t, std::size_t a) {
  if (a < 3 || t.d[a - 1] != '(' || t.d[a - 2] != ' ') return false;
  auto name = [](std::uint8_t c) {
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '+' || c == '.' || c == '-';
  };
  std::size_t q = a - 2;
  while (q > 0 && name(t.d[q - 1])) --q;
  if (q == a - 2 || !(is(t.d[q], kAlpha) || is_digit(t.d[q]))) return false;
  if (q != 0 && t.d[q - 1] != '\n') return false;
  // ... and the line is a Debian changelog entry header: "pkg (1.2.3.4) dist; urgency=low".
  const std::size_t limit = std::min(t.n, a + 200);
  std::size_t e = a;
  while (e < limit && t.d[e] != '\n') ++e;
  constexpr std::string_view kUrgency = "urgency=";
  return e - a >= kUrgency.size() &&
         t.find(kUrgency, a, e - kUrgency.size()) != std::string_view::npos;
}

// A release title alone on its line: indentation, one word starting with an upper-case letter,
// one space, the quad, trailing spaces ("      Git 1.7.4.4", "XFree86 4.3.0.1").
bool release_title(const Text& t, std::size_t a, std::size_t b) {
  if (a < 3 || t.d[a - 1] != ' ') return false;
  std::size_t w = a - 1;
  while (w > 0 && a - 1 - w < 32 &&
         (is(t.d[w - 1], kWord) || t.d[w - 1] == '+' || t.d[w - 1] == '-')) {
    --w;
  }
  if (w == a - 1 || !(t.d[w] >= 'A' && t.d[w] <= 'Z') || !starts_line(t, w)) return false;
  std::size_t e = b;
  while (e < t.n && is_ws(t.d[e])) ++e;
  return e == t.n || t.d[e] == '\n' || t.d[e] == '\r';
}

// "libxcb 1.1.90.1": a library's name (a whole word "lib" + 1-29 of [A-Za-z0-9_+-]), one space.
bool after_library_name(const Text& t, std::size_t a) {
  if (a < 5 || t.d[a - 1] != ' ') return false;
  auto name = [](std::uint8_t c) { return is(c, kWord) || c == '+' || c == '-'; };
  std::size_t w = a - 1;
  while (w > 0 && a - 1 - w < 32 && name(t.d[w - 1])) --w;
  const std::size_t length = a - 1 - w;
  if (length < 4 || length > 32 || (w > 0 && name(t.d[w - 1]))) return false;
  return t.d[w] == 'l' && t.d[w + 1] == 'i' && t.d[w + 2] == 'b';
}

// "2014-03-26 (3.8.4.2)": a release date, a space, an opening parenthesis.
bool after_date(const Text& t, std::size_t a) {
  if (a < 12 || t.d[a - 1] != '(' || t.d[a - 2] != ' ') return false;
  const std::size_t d = a - 12;  // YYYY-MM-DD
  for (std::size_t k = 0; k < 10; ++k) {
    const std::uint8_t c = t.d[d + k];
    if ((k == 4 || k == 7) ? c != '-' : !is_digit(c)) return false;
  }
  return d == 0 || !is(t.d[d - 1], kWord);
}

// The IPv4 context rules: the valid dotted quad [a, b) is a version or a section number.
bool ipv4_not_an_address(const Text& t, std::size_t a, std::size_t b) {
  const std::uint8_t next = t.at(b);
  if ((next == '-' || next == '~' || next == '+') && is_alnum(t.at(b + 1))) {
    // A version suffix ("2.10.0.27-0.cvs", "1.2.3.4~rc1", "3.0.0.1+dfsg"), unless it is the
    // second address of a range ("1.1.1.1-1.0.0.1").
    if (next != '-') return true;
    std::size_t c = b + 1;
    while (c < t.n && (is_digit(t.d[c]) || t.d[c] == '.')) ++c;
    std::size_t d = c;
    while (d > b + 1 && t.d[d - 1] == '.') --d;
    if (is(t.at(c), kWord) || !parse_ipv4(t.view(b + 1, d))) return true;
  }
  if (after_context_word(t, a) || after_package_name(t, a) || after_date(t, a) ||
      after_constraint(t, a) || release_title(t, a, b) || after_library_name(t, a)) {
    return true;
  }
  // Glued to a name by '-': "shadow-4.1.4.2", "RelNotes-1.7.10.1".
  if (a >= 2 && t.d[a - 1] == '-' && is(t.d[a - 2], kAlpha)) return true;
  // A section number heading its line: "12.3.2.2. Title", or "7.5.1.3 Title" underlined.
  if (starts_line(t, a)) {
    const std::uint8_t after = t.at(b + 1);
    if (next == '.' && (after == 0 || is_ws(after) || after == '\n')) return true;
    if (next == ' ' && underlined(t, b)) return true;
  }
  return false;
}

// `versions` collects the quads the document uses as versions (a context rule said so, or
// "v1.2.3.4"): once the scan is done, every other occurrence of them is dropped too.
void ipv4_run(const Text& t, std::size_t s, std::size_t e, bool mask_private,
              std::vector<Candidate>& out, std::vector<std::uint32_t>& versions) {
  if (is(t.at(e), kWord)) return;
  std::size_t a = s, b = e;
  while (a < b && t.d[a] == '.') ++a;
  while (b > a && t.d[b - 1] == '.') --b;
  if (is(t.before(s), kWord)) {
    // Glued to a word: never an address; "v1.2.3.4" (a whole-word v) names a version.
    const std::uint8_t v_letter = t.before(s);
    if ((v_letter == 'v' || v_letter == 'V') && (s < 2 || !is(t.d[s - 2], kWord))) {
      if (const auto v = parse_ipv4(t.view(a, b))) versions.push_back(*v);
    }
    return;
  }
  const std::optional<std::uint32_t> v = parse_ipv4(t.view(a, b));
  if (!v) return;
  if (ipv4_not_an_address(t, a, b)) {
    versions.push_back(*v);
    return;
  }
  if (!mask_private && !ipv4_is_public(*v)) return;
  out.push_back({a, b, PiiCategory::kIpAddress});
}

void ipv6_run(const Text& t, std::size_t s, std::size_t e, bool mask_private,
              std::vector<Candidate>& out) {
  std::size_t a = s, b = e;
  while (b > a && t.d[b - 1] == '.') --b;
  if (b - a >= 2 && t.d[b - 1] == ':' && t.d[b - 2] != ':') --b;
  if (b - a >= 2 && t.d[a] == ':' && t.d[a + 1] != ':') ++a;
  if (b - a > kMaxIpv6Text) return;
  if (is(t.before(a), kWord) || is(t.at(b), kWord)) return;
  const std::string_view text = t.view(a, b);
  const auto v = parse_ipv6(text);
  if (!v || (!mask_private && !ipv6_is_public(*v))) return;
  // A compressed form needs a group of 3+ hex digits or a dotted tail ("::1" aside), which
  // keeps C++ scopes ("A::B") and Python slices ("a[1::2]") out.
  if (text.find("::") != std::string_view::npos && text != "::1" &&
      text.find('.') == std::string_view::npos) {
    std::size_t longest = 0, run = 0;
    for (char c : text) {
      run = c == ':' ? 0 : run + 1;
      longest = std::max(longest, run);
    }
    if (longest < 3) return;
  }
  out.push_back({a, b, PiiCategory::kIpAddress});
}

// ---- CREDIT_CARD --------------------------------------------------------------------------

struct Group {
  std::size_t start;
  std::size_t len;
  std::uint8_t separator;  // the byte before the group (' ' or '-'); 0 for the first
};

// Whether the byte next to a card number (`b`, with `beyond` on its far side) ends it: not a
// "-" that glues it to an identifier ("mpath-35333333000002328"), not a
// letter or '_' (the digits would be part of a word), not a decimal point between digits.
bool card_edge_ok(std::uint8_t b, std::uint8_t beyond) {
  return !(is(b, kAlpha) || b == '_' || (b == '.' && is_digit(beyond)) ||
           (b == '-' && (is(beyond, kAlpha) || beyond == '_')));
}

void card_window(const Text& t, const std::vector<Group>& groups, std::size_t first,
                 std::size_t last, std::vector<Candidate>& out) {
  const std::size_t s = groups[first].start, e = groups[last].start + groups[last].len;
  if (!card_edge_ok(t.before(s), s >= 2 ? t.d[s - 2] : 0) || !card_edge_ok(t.at(e), t.at(e + 1))) {
    return;
  }
  char digits[19];
  std::size_t k = 0;
  for (std::size_t g = first; g <= last; ++g) {
    std::memcpy(digits + k, t.d + groups[g].start, groups[g].len);
    k += groups[g].len;
  }
  const std::string_view number(digits, k);
  if (!luhn_valid(number) || !card_issuer_known(number)) return;
  out.push_back({s, e, PiiCategory::kCreditCard});
}

void card_run(const Text& t, std::size_t s, std::size_t e, std::vector<Group>& groups,
              std::vector<Candidate>& out) {
  groups.clear();
  for (std::size_t i = s; i < e;) {
    std::size_t j = i;
    while (j < e && is_digit(t.d[j])) ++j;
    groups.push_back({i, j - i, i == s ? std::uint8_t{0} : t.d[i - 1]});
    i = j + 1;
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::size_t len = groups[g].len;
    if (len >= 13 && len <= 19) card_window(t, groups, g, g, out);
    if (len != 4) continue;
    std::size_t total = 4;
    const std::size_t stop = std::min(groups.size(), g + 5);
    for (std::size_t h = g + 1; h < stop; ++h) {
      if (groups[h].separator != groups[g + 1].separator) break;
      if (groups[h].len < 3 || groups[h].len > 6) break;
      total += groups[h].len;
      if (total > 19) break;
      if (total >= 13) card_window(t, groups, g, h, out);
    }
  }
}

// ---- API_KEY ------------------------------------------------------------------------------

constexpr std::size_t kMaxJwt = 16384;
constexpr std::size_t kMaxPemLabel = 64;
constexpr std::size_t kMaxPemBody = 65536;

// prefix + the maximal run of `cls` bytes, min_len..max_len of them, not followed by a key byte.
template <typename Cls>
bool key_body(const Text& t, std::size_t start, std::size_t body, Cls cls, std::size_t min_len,
              std::size_t max_len, std::vector<Candidate>& out) {
  const std::size_t limit = std::min(t.n, body + max_len + 1);
  std::size_t q = body;
  while (q < limit && cls(t.d[q])) ++q;
  const std::size_t len = q - body;
  if (len < min_len || len > max_len || is(t.at(q), kKey)) return false;
  out.push_back({start, q, PiiCategory::kApiKey});
  return true;
}

void jwt_at(const Text& t, std::size_t p, std::vector<Candidate>& out) {
  if (t.before(p) == '.') return;
  const std::size_t limit = std::min(t.n, p + kMaxJwt + 1);
  std::size_t q = p;
  while (q < limit && (is(t.d[q], kKey) || t.d[q] == '.')) ++q;
  if (q - p > kMaxJwt) return;
  while (q > p && t.d[q - 1] == '.') --q;
  std::size_t dots[3];
  std::size_t count = 0;
  for (std::size_t i = p; i < q; ++i) {
    if (t.d[i] != '.') continue;
    if (count == 2) return;  // a fourth segment
    dots[count++] = i;
  }
  if (count != 2) return;
  const std::size_t header = dots[0] - p, payload = dots[1] - dots[0] - 1,
                    signature = q - dots[1] - 1;
  if (header < 10 || payload < 10 || signature < 16 || !t.starts_with(dots[0] + 1, "eyJ")) return;
  out.push_back({p, q, PiiCategory::kApiKey});
}

bool pem_label_ok(std::string_view label) {
  for (char c : label) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ')) return false;
  }
  auto ends = [&](std::string_view s) {
    return label.size() >= s.size() && label.substr(label.size() - s.size()) == s;
  };
  return ends("PRIVATE KEY") || ends("PRIVATE KEY BLOCK");
}

// p is the last dash of "-----BEGIN ".
void pem_at(const Text& t, std::size_t p, std::vector<Candidate>& out) {
  if (p < 4 || !t.starts_with(p - 4, "-----BEGIN ")) return;
  const std::size_t s = p - 4;
  const std::size_t label_start = s + 11;
  const std::size_t close = t.find("-----", label_start, label_start + kMaxPemLabel);
  if (close == std::string_view::npos) return;
  const std::string_view label = t.view(label_start, close);
  if (!pem_label_ok(label)) return;
  const std::size_t body = close + 5;
  const std::size_t end_marker = t.find("-----", body, body + kMaxPemBody);
  if (end_marker == std::string_view::npos) return;
  // PEM bodies are ASCII; requiring it keeps every match ASCII (so code points = bytes).
  for (std::size_t i = body; i < end_marker; ++i) {
    if (t.d[i] >= 0x80) return;
  }
  const std::size_t after = end_marker + 9 + label.size() + 5;
  if (!t.starts_with(end_marker, "-----END ") ||
      !t.starts_with(end_marker + 9 + label.size(), "-----") ||
      t.view(end_marker + 9, end_marker + 9 + label.size()) != label) {
    return;
  }
  out.push_back({s, after, PiiCategory::kApiKey});
}

bool openai_body_mixed(const Text& t, std::size_t a, std::size_t b) {
  bool up = false, low = false, dig = false;
  for (std::size_t i = a; i < b; ++i) {
    const std::uint8_t c = t.d[i];
    up |= c >= 'A' && c <= 'Z';
    low |= c >= 'a' && c <= 'z';
    dig |= is_digit(c);
  }
  return up && low && dig;
}

void key_at(const Text& t, std::size_t p, std::vector<Candidate>& out) {
  const std::uint8_t b0 = t.d[p];
  if (b0 == '-') return pem_at(t, p, out);
  if (is(t.before(p), kKey)) return;
  auto key = [](std::uint8_t b) { return is(b, kKey); };
  switch (b0) {
    case 'A':
      if (t.starts_with(p, "AKIA") || t.starts_with(p, "ASIA") || t.starts_with(p, "ABIA") ||
          t.starts_with(p, "ACCA")) {
        key_body(t, p, p + 4, is_upper_or_digit, 16, 16, out);
      } else if (t.starts_with(p, "AIza")) {
        key_body(t, p, p + 4, key, 35, 35, out);
      }
      return;
    case 'g':
      if (t.starts_with(p, "github_pat_")) {
        key_body(
            t, p, p + 11, [](std::uint8_t b) { return is(b, kWord); }, 22, 244, out);
      } else if (t.at(p + 1) == 'h' && t.at(p + 3) == '_' &&
                 std::memchr("pousr", t.at(p + 2), 5) != nullptr && t.at(p + 2) != 0) {
        key_body(t, p, p + 4, is_alnum, 36, 251, out);
      }
      return;
    case 'x':
      if (t.starts_with(p, "xox") && t.at(p + 4) == '-' && t.at(p + 3) != 0 &&
          std::memchr("abprs", t.at(p + 3), 5) != nullptr) {
        key_body(
            t, p, p + 5, [](std::uint8_t b) { return is_alnum(b) || b == '-'; }, 10, 250, out);
      }
      return;
    case 's':
    case 'r':
      if (b0 == 's' && t.starts_with(p, "sk-")) {
        const std::size_t before = out.size();
        if (key_body(t, p, p + 3, key, 20, 252, out) &&
            !openai_body_mixed(t, p + 3, out.back().end)) {
          out.resize(before);
        }
      } else if (t.starts_with(p + 1, "k_live_")) {
        key_body(t, p, p + 8, is_alnum, 20, 247, out);
      }
      return;
    case 'e':
      if (t.starts_with(p, "eyJ")) jwt_at(t, p, out);
      return;
    default:
      return;
  }
}

// "secret[_-]?(access[_-]?)?key", then spaces and an optional quote, ending at q.
bool aws_key_before(const Text& t, std::size_t q);

// AWS secret access key: 40 base64 characters after "secret[_-]?(access[_-]?)?key" and an
// assignment. `v` is where the value starts; the context is matched backwards from there.

bool aws_context_before(const Text& t, std::size_t v) {
  std::size_t q = v;
  if (q > 0 && is_quote(t.d[q - 1])) --q;
  std::size_t w = 0;
  while (q > 0 && is_ws(t.d[q - 1])) {
    --q;
    if (++w > 16) return false;
  }
  if (q == 0) return false;
  const std::uint8_t sep = t.d[q - 1];
  if (sep == '>') {
    if (q < 2 || t.d[q - 2] != '=') return false;
    q -= 2;
  } else if (sep == '=') {
    --q;
    if (q > 0 && t.d[q - 1] == ':') --q;
  } else if (sep == ':') {
    --q;
  } else {
    return false;
  }
  return aws_key_before(t, q);
}

// aws_secret_at's early exit: aws_context_before(t, v) reaches the first byte of the
// assignment (":", "=", ":=", "=>") of anchor p before asking aws_key_before; that byte is p,
// or p - 1 for the '=' of a ":=" written as ':' '=' and met at the '='. Checked before the value
// is scanned, so the ':' and '=' of ordinary text ("Closes: #1", "urgency=low") end here.
bool aws_key_before_assignment(const Text& t, std::size_t p) {
  std::size_t q = p;
  if (t.d[p] == '=' && t.at(p + 1) != '>' && p > 0 && t.d[p - 1] == ':') --q;
  return aws_key_before(t, q);
}

bool aws_key_before(const Text& t, std::size_t q) {
  std::size_t w = 0;
  while (q > 0 && is_ws(t.d[q - 1])) {
    --q;
    if (++w > 16) return false;
  }
  if (q > 0 && is_quote(t.d[q - 1])) --q;
  if (!t.ends_with_ci(q, "key")) return false;
  q -= 3;
  if (q > 0 && (t.d[q - 1] == '_' || t.d[q - 1] == '-')) --q;
  if (t.ends_with_ci(q, "access")) {
    q -= 6;
    if (q > 0 && (t.d[q - 1] == '_' || t.d[q - 1] == '-')) --q;
  }
  return t.ends_with_ci(q, "secret");
}

// The driver's inline test before aws_secret_at: aws_key_before_assignment(t, p) needs the byte
// before the assignment to be a space, a quote or the 'y' of "key" (most ':' and '=' of text
// follow a letter, a digit or a bracket, and end here without a call).
inline bool aws_key_may_end_before(const Text& t, std::size_t p) {
  const std::size_t q =
      (t.d[p] == '=' && t.at(p + 1) != '>' && p > 0 && t.d[p - 1] == ':') ? p - 1 : p;
  const std::uint8_t c = t.before(q);
  return c == 'y' || c == 'Y' || is_ws(c) || is_quote(c);
}

// p is a ':' or '='.
void aws_secret_at(const Text& t, std::size_t p, std::vector<Candidate>& out) {
  if (!aws_key_before_assignment(t, p)) return;
  std::size_t q = p + 1;
  if ((t.d[p] == '=' && t.at(q) == '>') || (t.d[p] == ':' && t.at(q) == '=')) ++q;
  std::size_t w = 0;
  while (is_ws(t.at(q))) {
    ++q;
    if (++w > 16) return;
  }
  if (is_quote(t.at(q))) ++q;
  const std::size_t v = q;
  const std::size_t limit = std::min(t.n, v + 41);
  while (q < limit && is(t.d[q], kBase64)) ++q;
  if (q - v != 40 || is(t.at(q), kBase64) || t.at(q) == '=') return;
  if (!aws_context_before(t, v)) return;
  out.push_back({v, q, PiiCategory::kApiKey});
}

// ---- the driver ---------------------------------------------------------------------------

// What the bytes around a ':' anchor say about it (Scan::drop_idle_colons): after it, a byte of
// visit's IPv6 run (hex digit, ':' or '.'); before it, a byte aws_key_may_end_before accepts
// ("key" ends with 'y', or a space or quote comes between the name and the ':').
enum : std::uint8_t { kColonRunNext = 1, kColonKeyBefore = 2 };

constexpr std::array<std::uint8_t, 256> make_colon_context() {
  std::array<std::uint8_t, 256> c{};
  for (int b = 0; b < 256; ++b) {
    const auto u = static_cast<std::uint8_t>(b);
    std::uint8_t v = 0;
    if ((kClass[u] & kHex) != 0 || u == ':' || u == '.') v |= kColonRunNext;
    if (u == 'y' || u == 'Y' || u == ' ' || u == '\t' || u == '"' || u == '\'')
      v |= kColonKeyBefore;
    c[static_cast<std::size_t>(b)] = v;
  }
  return c;
}

constexpr std::array<std::uint8_t, 256> kColonContext = make_colon_context();

constexpr std::size_t kChunkBlocks = 64;     // 4 KiB of text per kernel call
constexpr std::size_t kDropMinAnchors = 32;  // see Scan::drop_idle_colons

struct Scan {
  Text t;
  const ScanConfig& config;
  std::vector<Candidate>& out;
  std::vector<Group> groups;
  std::vector<std::uint32_t> versions;  // quads used as versions (see ipv4_run)
  std::size_t ipv4_done = 0;            // end of the last maximal run examined, per rule
  std::size_t ipv6_done = 0;
  std::size_t card_done = 0;
  bool simd = false;  // the live kernel is not the scalar one: verifiers may use SSE2 too

  bool on(PiiCategory c) const { return config.enabled[static_cast<std::size_t>(c)]; }

  // The extent of a run through p in the masks of the 16 bytes on either side of p (bit 16 is p):
  // `up` bytes from p to the first byte above it outside `up_in`, `down` bytes from p - 1 down to
  // the first byte outside `down_in`. 16 or more: the run reaches that edge of the 32 bytes.
  static void run_extent(std::uint32_t up_in, std::uint32_t down_in, std::size_t& up,
                         std::size_t& down) {
    up = static_cast<std::size_t>(__builtin_ctz(~(up_in >> 16)));
    down = static_cast<std::size_t>(__builtin_clz(~(down_in << 16)));
  }

  // Whether the run of hex digits, ':' and '.' through the ':' at p (its maximal run, as visit
  // scans it) has fewer than six colons and no "::", found with SSE2 in the 16 bytes on either
  // side of p; then no part of it is an IPv6 address (parse_ipv6 needs one or the other), and
  // ipv6_done is moved to the run's end as visit would, without the two byte loops and
  // ipv6_run. Most ':' runs of text are times ("14:32:11" in every changelog trailer) and
  // ratios. False (nothing changed) where the simple test does not apply: a run reaching an
  // edge of the 32 bytes, a window past the text, or the scalar kernel (the reference path).
  bool short_ipv6_run(std::size_t p) {
#if defined(__SSE2__)
    if (!simd || p < 16 || t.n - p < 16) return false;
    const auto classes = [](const std::uint8_t* q, std::uint32_t& run, std::uint32_t& colon) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      const __m128i digit_or_colon = in_range8(v, '0', ':');
      const __m128i hex_letter = in_range8(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'f');
      run = bits16(_mm_or_si128(_mm_or_si128(digit_or_colon, hex_letter), eq8(v, '.')));
      colon = bits16(eq8(v, ':'));
    };
    std::uint32_t run_lo, colon_lo, run_hi, colon_hi;
    classes(t.d + p - 16, run_lo, colon_lo);
    classes(t.d + p, run_hi, colon_hi);
    const std::uint32_t run = run_lo | (run_hi << 16), colon = colon_lo | (colon_hi << 16);
    std::size_t up = 0, down = 0;
    run_extent(run, run, up, down);
    if (up >= 16 || down >= 16) return false;
    const std::uint32_t span = ((std::uint32_t{1} << (up + down)) - 1) << (16 - down);
    const std::uint32_t colons = colon & span;
    if ((colons & (colons >> 1)) != 0 || internal::popcount64(colons) >= 6) return false;
    ipv6_done = p + up;
    return true;
#else
    (void)p;
    return false;
#endif
  }

  // A digit anchor: the IPv4 run (digits and '.') through p, and the card run (digits, single
  // separators between digits). With SSE2, both runs' bounds come from the bit masks of the 16
  // bytes on either side of p (where they end inside them) instead of byte loops whose exits are
  // hard to predict (dates, bug numbers and versions end them after a few bytes).
  void visit_digit(std::size_t p) {
    const bool ipv4 = on(PiiCategory::kIpAddress) && p >= ipv4_done;
    const bool card = on(PiiCategory::kCreditCard) && p >= card_done && is_digit(t.at(p + 1)) &&
                      is_digit(t.at(p + 2)) && is_digit(t.at(p + 3));
    if (!ipv4 && !card) return;
#if defined(__SSE2__)
    if (simd && p >= 16 && t.n - p >= 16) {
      std::uint32_t digit = 0, dot = 0, sep = 0;
      for (std::size_t h = 0; h < 32; h += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.d + p - 16 + h));
        digit |= bits16(in_range8(v, '0', '9')) << h;
        dot |= bits16(eq8(v, '.')) << h;
        sep |= bits16(_mm_or_si128(eq8(v, ' '), eq8(v, '-'))) << h;
      }
      // Bit 16 is p (a digit). The run's extent is usable when it stops inside the 32 bytes,
      // `margin` bytes from their edges (a separator's test looks at the byte beyond it).
      const auto bounds = [](std::uint32_t up_in, std::uint32_t down_in, std::size_t margin,
                             std::size_t& up, std::size_t& down) {
        run_extent(up_in, down_in, up, down);
        return up + margin < 16 && down + margin < 16;
      };
      std::size_t up = 0, down = 0;
      if (ipv4 && bounds(digit | dot, digit | dot, 0, up, down)) {
        ipv4_at(p - down, p + up);
      } else if (ipv4) {
        ipv4_scan(p);
      }
      // A separator joins the card run going up when a digit follows it, going down when a
      // digit precedes it (the byte loops of card_scan take it and that digit together).
      if (card && bounds(digit | (sep & (digit >> 1)), digit | (sep & (digit << 1)), 1, up, down)) {
        card_at(p - down, p + up);
      } else if (card) {
        card_scan(p);
      }
      return;
    }
#endif
    if (ipv4) ipv4_scan(p);
    if (card) card_scan(p);
  }

  void ipv4_at(std::size_t s, std::size_t e) {
    ipv4_done = e;
    if (e - s >= 7) {  // "1.1.1.1" at least
      ipv4_run(t, s, e, config.mask_private_ips, out, versions);
    }
  }

  void ipv4_scan(std::size_t p) {
    auto run = [](std::uint8_t c) { return is_digit(c) || c == '.'; };
    std::size_t s = p, e = p;
    while (s > 0 && run(t.d[s - 1])) --s;
    while (e < t.n && run(t.d[e])) ++e;
    ipv4_at(s, e);
  }

  void card_at(std::size_t s, std::size_t e) {
    card_done = e;
    if (e - s >= 13) card_run(t, s, e, groups, out);  // 13 digits at least
  }

  void card_scan(std::size_t p) {
    auto sep = [](std::uint8_t c) { return c == ' ' || c == '-'; };
    std::size_t s = p, e = p;
    for (;;) {
      if (s > 0 && is_digit(t.d[s - 1])) {
        --s;
      } else if (s > 1 && sep(t.d[s - 1]) && is_digit(t.d[s - 2])) {
        s -= 2;
      } else {
        break;
      }
    }
    for (;;) {
      if (e < t.n && is_digit(t.d[e])) {
        ++e;
      } else if (e + 1 < t.n && sep(t.d[e]) && is_digit(t.d[e + 1])) {
        e += 2;
      } else {
        break;
      }
    }
    card_at(s, e);
  }

  void visit(std::size_t p) {
    const std::uint8_t b = t.d[p];
    if (b == '@') {
      if (on(PiiCategory::kEmail)) email_at(t, p, simd, out);
    } else if (b == ':' || b == '=') {
      auto run = [](std::uint8_t c) { return is(c, kHex) || c == ':' || c == '.'; };
      if (b == ':' && on(PiiCategory::kIpAddress) && p >= ipv6_done && !run(t.at(p + 1))) {
        // A ':' that ends its run ("Closes: #1", "http://", "CVE-2023-1234: ", "f00:"): the run
        // holds no other ':' (one would have been visited before p and moved ipv6_done past the
        // run's end, p + 1), so it is ":" alone or ipv6_run cuts this ':' off and finds no ':' to
        // parse: no address. Most ':' of text end here, without the two scans and ipv6_run.
        ipv6_done = p + 1;
      } else if (b == ':' && on(PiiCategory::kIpAddress) && p >= ipv6_done && short_ipv6_run(p)) {
        // Nothing to find in the run: ipv6_done was moved past it.
      } else if (b == ':' && on(PiiCategory::kIpAddress) && p >= ipv6_done) {
        std::size_t s = p, e = p;
        while (s > 0 && run(t.d[s - 1])) --s;
        while (e < t.n && run(t.d[e])) ++e;
        ipv6_done = e;
        ipv6_run(t, s, e, config.mask_private_ips, out);
      }
      if (on(PiiCategory::kApiKey) && aws_key_may_end_before(t, p)) aws_secret_at(t, p, out);
    } else if (is_digit(b)) {
      visit_digit(p);
    } else if (on(PiiCategory::kApiKey)) {
      key_at(t, p, out);
    }
  }

  // The anchors of `count` blocks at base (masks[k]: block k), in text order. Their offsets are
  // listed first, four per block without a branch (a fifth and more in a loop: rare), then
  // visited in one loop: a loop per block would end at an unpredictable point in every block.
  void visit_masks(std::size_t base, const std::uint64_t* masks, std::size_t count) {
    std::uint16_t at[kChunkBlocks * 64 + 4];  // offsets < 4096; room for four writes past the end
    std::size_t n = 0;
    for (std::size_t k = 0; k < count; ++k) {
      std::uint64_t m = masks[k];
      const auto block = static_cast<std::uint16_t>(k * 64);
      for (int j = 0; j < 4; ++j) {
        // m | bit 63: the written offset is ctz(m) while m has bits, and is not kept otherwise.
        at[n] = static_cast<std::uint16_t>(block + __builtin_ctzll(m | (std::uint64_t{1} << 63)));
        n += m != 0 ? 1 : 0;
        m &= m - 1;
      }
      for (; m != 0; m &= m - 1) at[n++] = static_cast<std::uint16_t>(block + __builtin_ctzll(m));
    }
    if (!config.visit_idle_colons && n >= kDropMinAnchors) n = drop_idle_colons(base, at, n);
    for (std::size_t i = 0; i < n; ++i) visit(base + at[i]);
  }

  // Removes from at[0, n) the ':' anchors that visit would pass over, without a branch per
  // anchor, and returns how many are left (in order). A ':' is idle when the byte after it
  // cannot continue an IPv6 run (visit then only moves ipv6_done to p + 1, which no later
  // anchor can tell from not moving it: each is past p, and ipv6_done is only compared with
  // anchor positions) and the byte before it cannot end an AWS key name (aws_key_may_end_before
  // is false). "Closes: #1", "Date: ", "http://", "foo.c: ": 135k of the 363k anchors of the
  // changelogs, each costing visit a hard-to-predict dispatch. Only chunks with kDropMinAnchors
  // anchors or more take this extra pass (about 100 per 4 KiB chunk in the changelogs): in prose,
  // with a few anchors per chunk and few idle ':' among them, the pass and its loop exit cost
  // more than they save (BM_Scan/no_pii was 9% slower with it on every chunk).
  std::size_t drop_idle_colons(std::size_t base, std::uint16_t* at, std::size_t n) const {
    const std::uint8_t busy = (on(PiiCategory::kIpAddress) ? kColonRunNext : 0) |
                              (on(PiiCategory::kApiKey) ? kColonKeyBefore : 0);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t p = base + at[i];
      const std::uint8_t around = (kColonContext[t.at(p + 1)] & kColonRunNext) |
                                  (kColonContext[t.before(p)] & kColonKeyBefore);
      const bool idle = (t.d[p] == ':') & ((around & busy) == 0);
      at[kept] = at[i];
      kept += idle ? 0 : 1;
    }
    return kept;
  }
};

}  // namespace

// ---- validators ---------------------------------------------------------------------------

std::optional<std::uint32_t> parse_ipv4(std::string_view s) {
  std::uint32_t value = 0;
  std::size_t parts = 0, i = 0;
  while (true) {
    std::size_t j = i;
    std::uint32_t octet = 0;
    while (j < s.size() && j - i < 4 && s[j] >= '0' && s[j] <= '9') {
      octet = octet * 10 + static_cast<std::uint32_t>(s[j] - '0');
      ++j;
    }
    const std::size_t len = j - i;
    if (len == 0 || len > 3 || octet > 255 || (len > 1 && s[i] == '0')) return std::nullopt;
    value = (value << 8) | octet;
    ++parts;
    if (j == s.size()) break;
    if (s[j] != '.' || parts == 4) return std::nullopt;
    i = j + 1;
  }
  if (parts != 4) return std::nullopt;
  return value;
}

std::optional<std::array<std::uint8_t, 16>> parse_ipv6(std::string_view s) {
  if (s.size() < 2 || s.size() > kMaxIpv6Text) return std::nullopt;
  // One pass first: no "::" and fewer than six colons is no address (times, ratios, MACs: most
  // runs end here), as the rules below would also conclude.
  {
    std::size_t colons = 0;
    bool pair = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != ':') continue;
      ++colons;
      pair = pair || (i > 0 && s[i - 1] == ':');
    }
    if (!pair && colons < 6) return std::nullopt;
  }
  const std::size_t gap = s.find("::");
  if (gap == std::string_view::npos) {
    // Eight groups need seven colons (six with a dotted tail): rejects times, ratios, MACs fast.
    if (std::count(s.begin(), s.end(), ':') < 6) return std::nullopt;
  } else if (s.find("::", gap + 1) != std::string_view::npos || s.size() == 2) {
    return std::nullopt;  // two gaps, or "::" alone (no hex digit at all)
  }
  // Parses one side of the "::" (or the whole address) into 16-bit groups; a dotted quad is
  // allowed as the very last piece of the address. Returns the group count, or -1.
  auto side = [](std::string_view part, bool last, std::uint16_t* groups) -> int {
    int count = 0;
    if (part.empty()) return 0;
    std::size_t i = 0;
    while (true) {
      const std::size_t colon = part.find(':', i);
      const bool final_piece = colon == std::string_view::npos;
      const std::string_view piece =
          part.substr(i, final_piece ? std::string_view::npos : colon - i);
      if (final_piece && last && piece.find('.') != std::string_view::npos) {
        const auto v4 = parse_ipv4(piece);
        if (!v4 || count > 6) return -1;
        groups[count++] = static_cast<std::uint16_t>(*v4 >> 16);
        groups[count++] = static_cast<std::uint16_t>(*v4 & 0xFFFF);
        return count;
      }
      if (piece.empty() || piece.size() > 4 || count == 8) return -1;
      std::uint16_t g = 0;
      for (char c : piece) {
        const auto b = static_cast<std::uint8_t>(c);
        if (!is(b, kHex)) return -1;
        const int digit = is_digit(b) ? b - '0' : (lower(b) - 'a' + 10);
        g = static_cast<std::uint16_t>((g << 4) | digit);
      }
      groups[count++] = g;
      if (final_piece) return count;
      i = colon + 1;
    }
  };
  std::uint16_t head[8] = {}, tail[8] = {};
  int head_n = 0, tail_n = 0;
  if (gap == std::string_view::npos) {
    head_n = side(s, true, head);
    if (head_n != 8) return std::nullopt;
  } else {
    head_n = side(s.substr(0, gap), false, head);
    tail_n = side(s.substr(gap + 2), true, tail);
    if (head_n < 0 || tail_n < 0 || head_n + tail_n > 7) return std::nullopt;
  }
  std::array<std::uint16_t, 8> words{};
  for (int k = 0; k < head_n; ++k) words[static_cast<std::size_t>(k)] = head[k];
  for (int k = 0; k < tail_n; ++k) words[static_cast<std::size_t>(8 - tail_n + k)] = tail[k];
  std::array<std::uint8_t, 16> out{};
  for (std::size_t k = 0; k < 8; ++k) {
    out[2 * k] = static_cast<std::uint8_t>(words[k] >> 8);
    out[2 * k + 1] = static_cast<std::uint8_t>(words[k] & 0xFF);
  }
  return out;
}

bool ipv4_is_public(std::uint32_t a) {
  struct Net {
    std::uint32_t base;
    int bits;
  };
  static constexpr Net kNonPublic[] = {
      {0x00000000u, 8},   // 0.0.0.0/8 "this network"
      {0x0A000000u, 8},   // 10.0.0.0/8 private
      {0x64400000u, 10},  // 100.64.0.0/10 carrier-grade NAT
      {0x7F000000u, 8},   // 127.0.0.0/8 loopback
      {0xA9FE0000u, 16},  // 169.254.0.0/16 link-local
      {0xAC100000u, 12},  // 172.16.0.0/12 private
      {0xC0000000u, 24},  // 192.0.0.0/24 IETF protocol assignments
      {0xC0000200u, 24},  // 192.0.2.0/24 TEST-NET-1
      {0xC0A80000u, 16},  // 192.168.0.0/16 private
      {0xC6120000u, 15},  // 198.18.0.0/15 benchmarking
      {0xC6336400u, 24},  // 198.51.100.0/24 TEST-NET-2
      {0xCB007100u, 24},  // 203.0.113.0/24 TEST-NET-3
      {0xE0000000u, 4},   // 224.0.0.0/4 multicast
      {0xF0000000u, 4},   // 240.0.0.0/4 reserved, 255.255.255.255 broadcast
  };
  for (const Net& net : kNonPublic) {
    const std::uint32_t mask = ~std::uint32_t{0} << (32 - net.bits);
    if ((a & mask) == net.base) return false;
  }
  return true;
}

bool ipv6_is_public(const std::array<std::uint8_t, 16>& a) {
  auto zero = [&](std::size_t from, std::size_t to) {
    return std::all_of(a.begin() + static_cast<std::ptrdiff_t>(from),
                       a.begin() + static_cast<std::ptrdiff_t>(to),
                       [](std::uint8_t b) { return b == 0; });
  };
  const std::uint32_t low = (std::uint32_t{a[12]} << 24) | (std::uint32_t{a[13]} << 16) |
                            (std::uint32_t{a[14]} << 8) | std::uint32_t{a[15]};
  const bool mapped = zero(0, 10) && a[10] == 0xFF && a[11] == 0xFF;  // ::ffff:0:0/96
  const bool compatible = zero(0, 12) && low > 1;                     // ::a.b.c.d
  const bool nat64 =
      a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xFF && a[3] == 0x9B && zero(4, 12);  // 64:ff9b::/96
  if (mapped || compatible || nat64) return ipv4_is_public(low);
  if ((a[0] & 0xE0) != 0x20) return false;                                 // not 2000::/3
  return !(a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0D && a[3] == 0xB8);  // 2001:db8::/32
}

bool luhn_valid(std::string_view digits) {
  int sum = 0;
  bool twice = false;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    int d = *it - '0';
    if (twice) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    twice = !twice;
  }
  return sum % 10 == 0;
}

bool card_issuer_known(std::string_view digits) {
  struct Range {
    int lo;
    int hi;
    int prefix_len;
    int min_len;
    int max_len;
  };
  // Visa (13, 16, 19 digits) is handled apart; everything else by prefix range and length.
  static constexpr Range kRanges[] = {
      {51, 55, 2, 16, 16},     {2221, 2720, 4, 16, 16},  // Mastercard
      {34, 34, 2, 15, 15},     {37, 37, 2, 15, 15},      // American Express
      {6011, 6011, 4, 16, 19}, {644, 649, 3, 16, 19},    // Discover
      {65, 65, 2, 16, 19},                               // Discover
      {300, 305, 3, 14, 19},   {3095, 3095, 4, 14, 19},  // Diners Club
      {36, 36, 2, 14, 19},     {38, 39, 2, 14, 19},      // Diners Club
      {3528, 3589, 4, 16, 19},                           // JCB
      {62, 62, 2, 16, 19},                               // UnionPay
      {5018, 5018, 4, 13, 19}, {5020, 5020, 4, 13, 19},  // Maestro
      {5038, 5038, 4, 13, 19}, {5893, 5893, 4, 13, 19},  // Maestro
      {6304, 6304, 4, 13, 19}, {6759, 6759, 4, 13, 19},  // Maestro
      {6761, 6763, 4, 13, 19},                           // Maestro
      {2200, 2204, 4, 16, 19},                           // Mir
  };
  const auto n = static_cast<int>(digits.size());
  if (n < 13 || n > 19) return false;
  if (digits[0] == '4') return n == 13 || n == 16 || n == 19;
  for (const Range& r : kRanges) {
    int prefix = 0;
    for (int k = 0; k < r.prefix_len; ++k) {
      prefix = prefix * 10 + (digits[static_cast<std::size_t>(k)] - '0');
    }
    if (prefix >= r.lo && prefix <= r.hi && n >= r.min_len && n <= r.max_len) return true;
  }
  return false;
}

// ---- entry points -------------------------------------------------------------------------

void find_candidates(std::string_view text, const ScanConfig& config, const AnchorKernel& kernel,
                     std::vector<Candidate>& out) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t n = text.size();
  const std::size_t first = out.size();  // candidates of earlier texts stay as they are
  Scan scan{Text{data, n}, config, out, {}, {}};
  scan.simd = kernel.isa != Isa::kScalar;
  std::uint64_t masks[kChunkBlocks];
  // Blocks whose 64 positions and lookahead lie inside the text go straight to the kernel.
  const std::size_t direct_blocks = n >= kAnchorLookahead ? (n - kAnchorLookahead) / 64 : 0;
  for (std::size_t block = 0; block < direct_blocks; block += kChunkBlocks) {
    const std::size_t count = std::min(kChunkBlocks, direct_blocks - block);
    kernel.masks(data + block * 64, count, masks);
    scan.visit_masks(block * 64, masks, count);
  }
  // The rest (< 64 + kAnchorLookahead bytes) is classified from a zero-padded copy; zero bytes
  // are never anchors, so the padding stands for "end of text".
  const std::size_t done = direct_blocks * 64;
  if (done < n) {
    std::uint8_t tail[2 * 64 + kAnchorLookahead] = {};
    std::memcpy(tail, data + done, n - done);
    const std::size_t count = (n - done + 63) / 64;
    kernel.masks(tail, count, masks);
    scan.visit_masks(done, masks, count);
  }
  // A quad the document uses as a version is a version everywhere in it (docs/pii.md, rule 11).
  if (!scan.versions.empty()) {
    std::sort(scan.versions.begin(), scan.versions.end());
    const auto version = [&](const Candidate& c) {
      if (c.category != PiiCategory::kIpAddress) return false;
      const auto v = parse_ipv4(scan.t.view(c.start, c.end));
      return v && std::binary_search(scan.versions.begin(), scan.versions.end(), *v);
    };
    const auto from = out.begin() + static_cast<std::ptrdiff_t>(first);
    out.erase(std::remove_if(from, out.end(), version), out.end());
  }
}

void resolve_overlaps(std::vector<Candidate>& c) {
  const auto before = [](const Candidate& x, const Candidate& y) {
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end > y.end;
    return x.category < y.category;
  };
  // The anchors are visited in text order, so the candidates usually come sorted already (one
  // pass to check instead of the sort's); the order is total, so either way the result is the
  // same.
  if (!std::is_sorted(c.begin(), c.end(), before)) std::sort(c.begin(), c.end(), before);
  std::size_t kept = 0, last_end = 0;
  for (const Candidate& x : c) {
    if (kept > 0 && x.start < last_end) continue;
    c[kept++] = x;
    last_end = x.end;
  }
  c.resize(kept);
}

void find_spans(std::string_view text, const ScanConfig& config, const AnchorKernel& kernel,
                std::vector<Candidate>& out) {
  out.clear();
  find_candidates(text, config, kernel, out);
  if (out.size() > 1) resolve_overlaps(out);
}

}  // namespace luminamoon::data::pii_internal
