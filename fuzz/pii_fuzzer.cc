// Fuzz target: the PIIMasker over arbitrary bytes (invalid UTF-8 included). The first byte picks
// the options (bits 0-3: categories on, bit 4: mask_private_ips); the rest is the document.
// Checks: spans sorted, disjoint, in bounds and ASCII; code-point offsets agree with the CPython
// replacement rule; the scalar and the live anchor kernels (with their verifiers: the SSE2 e-mail
// windows of the SIMD ones) find the same spans; the masked text is valid UTF-8 and equals the
// repaired pieces joined by the tags; find_batch gives the same matches and change flag, and
// splice (and, for valid UTF-8, splice_valid_into) the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/pii/pii_masker.h"
#include "pii/internal/scanner.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  if (size == 0) return 0;
  PiiMaskerOptions options;
  for (std::size_t k = 0; k < kPiiCategoryCount; ++k) options.enabled[k] = (data[0] >> k) & 1;
  options.mask_private_ips = (data[0] >> 4) & 1;
  options.tags[0] = "";  // an empty tag must not glue the neighbours into a new character
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const PiiMasker masker(options);

  const std::vector<PiiSpan> spans = masker.find(text);
  std::size_t last_end = 0;
  for (const PiiSpan& s : spans) {
    if (s.byte_start < last_end || s.byte_end <= s.byte_start || s.byte_end > text.size()) {
      std::abort();
    }
    for (std::size_t i = s.byte_start; i < s.byte_end; ++i) {
      if (static_cast<unsigned char>(text[i]) >= 0x80) std::abort();
    }
    if (s.start != utf8_code_points(text.substr(0, s.byte_start)) ||
        s.end - s.start != s.byte_end - s.byte_start) {
      std::abort();
    }
    last_end = s.byte_end;
  }

  const pii_internal::ScanConfig config{options.enabled, options.mask_private_ips};
  std::vector<pii_internal::Candidate> scalar, live;
  pii_internal::find_spans(text, config, pii_internal::anchor_kernel_for(Isa::kScalar), scalar);
  pii_internal::find_spans(text, config, pii_internal::active_anchor_kernel(), live);
  if (scalar != live || scalar.size() != spans.size()) std::abort();

  std::string out;
  PiiCounts counts{};
  const bool changed = masker.mask_into(text, out, counts);

  PiiBatchMatches found;
  masker.find_batch_into(std::span<const std::string_view>(&text, 1), found);
  if (found.size() != 1 || found.changed(0) != changed || found.of(0).size() != spans.size() ||
      (found.valid_utf8[0] != 0) != utf8_is_valid(text)) {
    std::abort();
  }
  for (std::size_t k = 0; k < spans.size(); ++k) {
    const PiiMatch& m = found.of(0)[k];
    if (m.byte_start != spans[k].byte_start || m.byte_end != spans[k].byte_end ||
        m.category != spans[k].category) {
      std::abort();
    }
  }
  if (changed) {
    std::string spliced;
    masker.splice(text, found.of(0), found.valid_utf8[0] != 0, spliced);
    if (spliced != out) std::abort();
    if (found.valid_utf8[0] != 0) {
      std::string direct(masker.spliced_size(text, found.of(0)), '\0');
      masker.splice_valid_into(text, found.of(0), direct.data());
      if (direct != out) std::abort();
    }
  }

  if (!changed) {
    if (!spans.empty() || !utf8_is_valid(text)) std::abort();
    return 0;
  }
  if (!utf8_is_valid(out)) std::abort();
  std::string expected;
  std::size_t pos = 0;
  for (const PiiSpan& s : spans) {
    append_utf8_repaired(text.substr(pos, s.byte_start - pos), expected);
    expected += options.tags[static_cast<std::size_t>(s.category)];
    pos = s.byte_end;
  }
  append_utf8_repaired(text.substr(pos), expected);
  if (expected != out) std::abort();
  return 0;
}
