// Candidate finding and overlap resolution of the PIIMasker (rules: docs/pii.md). The anchor
// kernel (anchors.h) says where to look; the verifiers here decide, in plain C++ that mirrors the
// Python fallback (python/luminamoon/data/fallbacks/pii.py) rule for rule.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "luminamoon/data/pii/pii_masker.h"
#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {

struct Candidate {
  std::size_t start;
  std::size_t end;
  PiiCategory category;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

struct ScanConfig {
  std::array<bool, kPiiCategoryCount> enabled = {true, true, true, true};
  bool mask_private_ips = false;
  // Tests only: visit the ':' anchors that the scan otherwise drops before visiting them
  // (scanner.cc, Scan::drop_idle_colons), the reference the drop must agree with.
  bool visit_idle_colons = false;
};

// Every valid candidate of the enabled categories (in no particular order, possibly with
// duplicates), found by visiting the anchors that `kernel` reports.
void find_candidates(std::string_view text, const ScanConfig& config, const AnchorKernel& kernel,
                     std::vector<Candidate>& out);

// Leftmost-longest selection: sort by (start, longer first, category), keep each candidate that
// starts at or after the end of the last one kept. Leaves the kept ones in `candidates`.
void resolve_overlaps(std::vector<Candidate>& candidates);

// find_candidates + resolve_overlaps.
void find_spans(std::string_view text, const ScanConfig& config, const AnchorKernel& kernel,
                std::vector<Candidate>& out);

// ---- validators, exposed for the unit tests -------------------------------------------------

// A dotted quad of exactly four decimal octets, each 0..255 with no leading zero ("0" itself is
// fine). Returns the address as a big-endian integer.
std::optional<std::uint32_t> parse_ipv4(std::string_view s);
// RFC 4291 text form: eight groups of 1-4 hex digits, at most one "::" standing for one or more
// zero groups, an optional dotted-quad tail for the last 32 bits; "::" alone is rejected.
std::optional<std::array<std::uint8_t, 16>> parse_ipv6(std::string_view s);
bool ipv4_is_public(std::uint32_t address);
bool ipv6_is_public(const std::array<std::uint8_t, 16>& address);
bool luhn_valid(std::string_view digits);
// Whether a card number of these digits (13-19 of them) has a known issuer prefix and length.
bool card_issuer_known(std::string_view digits);

}  // namespace luminamoon::data::pii_internal
