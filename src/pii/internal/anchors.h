// Anchor kernels of the PIIMasker, one implementation per ISA (anchors_scalar.cc is the reference;
// anchors_avx2.cc, anchors_avx512.cc and anchors_neon.cc must return exactly the same masks for
// every input). An anchor is a position where a candidate of some category may start or be
// recognised; every valid candidate contains at least one, so the verifiers (scanner.cc) only
// look there. Text without PII has few anchors, which is what makes the scan fast.
#pragma once

#include <cstddef>
#include <cstdint>

#include "luminamoon/data/common/cpu_isa.h"

namespace luminamoon::data::pii_internal {

// Bytes a kernel may read past the last position it classifies.
inline constexpr std::size_t kAnchorWindow = 6;
inline constexpr std::size_t kAnchorLookahead = kAnchorWindow - 1;

// An anchor is the start of a 6-byte window that fits one of these rules (position 0..5 of the
// window; "*" = any byte, bytes past the text count as 0; positions 4-5 are "*" unless shown):
//   R0  [:=]     *        *        *          IPv6 ':'; secret-key assignments ':' '='
//   R1  digit    .        digit    *          IPv4
//   R2  digit    digit    digit    digit   [digit space -]  digit   credit cards
//   R3  [A-]     [KSBCI]  *        *          AKIA ASIA ABIA ACCA AIza; "-B" ends "-----BEGIN "
//   R4  g        [hi]     *        [_h]       gh?_ github_pat_
//   R5  [xe]     [oy]     [xJ]     *          xox? (Slack), eyJ (JWT)
//   R6  [sr]     k        [-_]     *          sk- sk_live_ rk_live_
//   R7  @        *        *        *          e-mail
// R2 looks six bytes ahead so that years and short numbers ("2023 was") are not anchors: a card
// starts with 13+ digits or a 4-digit group, a separator and more digits.
// Each set is widened to the product of its low and high nibbles ([digit space -] also admits
// ! " # $ % & ' ( ) =), so that a byte's class is two 16-entry table lookups, the vpshufb/tbl
// idiom of simdjson: bit r of lo[k][b & 15] & hi[k][b >> 4] says whether byte b fits rule r at
// window position k, and p is an anchor iff the AND of the six classes of T[p..p+5] is non-zero.
// Widening only adds anchors; the verifiers decide, so every kernel (and the scalar reference)
// uses these very tables.
struct AnchorTables {
  std::uint8_t lo[kAnchorWindow][16];
  std::uint8_t hi[kAnchorWindow][16];
};

constexpr AnchorTables make_anchor_tables() {
  // rules[r][k]: the bytes allowed at window position k by rule r; nullptr = any byte.
  constexpr const char* kDigits = "0123456789";
  const char* const rules[8][kAnchorWindow] = {
      {":=", nullptr, nullptr, nullptr, nullptr, nullptr},
      {kDigits, ".", kDigits, nullptr, nullptr, nullptr},
      {kDigits, kDigits, kDigits, kDigits, "0123456789 -", kDigits},
      {"A-", "KSBCI", nullptr, nullptr, nullptr, nullptr},
      {"g", "hi", nullptr, "_h", nullptr, nullptr},
      {"xe", "oy", "xJ", nullptr, nullptr, nullptr},
      {"sr", "k", "-_", nullptr, nullptr, nullptr},
      {"@", nullptr, nullptr, nullptr, nullptr, nullptr},
  };
  AnchorTables t{};
  for (int r = 0; r < 8; ++r) {
    const auto bit = static_cast<std::uint8_t>(1u << r);
    for (std::size_t k = 0; k < kAnchorWindow; ++k) {
      const char* set = rules[r][k];
      for (int n = 0; n < 16; ++n) {
        if (set == nullptr) {
          t.lo[k][n] |= bit;
          t.hi[k][n] |= bit;
        }
      }
      for (const char* c = set; c != nullptr && *c != 0; ++c) {
        const auto b = static_cast<unsigned char>(*c);
        t.lo[k][b & 15] |= bit;
        t.hi[k][b >> 4] |= bit;
      }
    }
  }
  return t;
}

inline constexpr AnchorTables kAnchorTables = make_anchor_tables();

// Computes bit i of masks[k] = whether position 64 * k + i is an anchor, for `blocks` blocks of
// 64 bytes; data must be readable up to 64 * blocks + kAnchorLookahead bytes.
using AnchorMasksFn = void (*)(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks);

struct AnchorKernel {
  Isa isa;
  AnchorMasksFn masks;
};

// The kernel of one ISA (must be supported: see isa_supported), and of the live ISA.
const AnchorKernel& anchor_kernel_for(Isa isa);
const AnchorKernel& active_anchor_kernel();

void anchor_masks_scalar(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks);
void anchor_masks_avx2(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks);
void anchor_masks_avx512(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks);
// The avx512 level's kernel where the CPU also has AVX512_VBMI (internal::avx512_extensions()): the
// dispatcher gives it for Isa::kAvx512 there (same masks, fewer instructions).
void anchor_masks_avx512_vbmi(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks);
void anchor_masks_neon(const std::uint8_t* data, std::size_t blocks, std::uint64_t* masks);

// The rule above for one position of a buffer of `size` bytes (T[j] = 0 for j >= size).
inline bool is_anchor(const std::uint8_t* data, std::size_t size, std::size_t p) {
  std::uint8_t acc = 0xFF;
  for (std::size_t k = 0; k < kAnchorWindow; ++k) {
    const std::uint8_t b = p + k < size ? data[p + k] : 0;
    acc &= static_cast<std::uint8_t>(kAnchorTables.lo[k][b & 15] & kAnchorTables.hi[k][b >> 4]);
  }
  return acc != 0;
}

}  // namespace luminamoon::data::pii_internal
