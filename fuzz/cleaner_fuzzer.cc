// Fuzz target: the TextCleaner over arbitrary bytes. The first byte picks the options (bits 0-6:
// normalize_newlines, remove_controls, whitespace=collapse, strip_trailing_spaces,
// limit_newlines, strip, nfc; bit 7 set: repair_utf8 off); the rest is the document. With bit 2
// clear the document is checked under both whitespace=preserve_indent and whitespace=keep.
// Checks: every ISA this CPU supports gives the scalar kernels' text and counters (or the same
// error, only possible with repair off and only for invalid UTF-8); the output is valid UTF-8;
// cleaning is idempotent; TextCleaner::clean and clean_batch agree with the per-document pass.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cleaner/internal/clean_document.h"
#include "cleaner/internal/kernels.h"
#include "luminamoon/data/cleaner/text_cleaner.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/error.h"

namespace {

using namespace luminamoon::data;

struct Outcome {
  bool ok = false;
  std::string text;  // the output, or the error message
  CleanStats stats;
  bool operator==(const Outcome&) const = default;
};

Outcome run(std::string_view doc, const TextCleanerOptions& options, Isa isa) {
  Outcome o;
  try {
    o.text =
        cleaner_internal::clean_document(doc, options, cleaner_internal::kernels_for(isa), o.stats);
    o.ok = true;
  } catch (const MalformedInputError& e) {
    if (options.repair_utf8) std::abort();  // with repair on nothing may throw
    o.text = e.what();
  }
  return o;
}

bool valid_utf8(std::string_view s) {
  return utf8_internal::utf8_valid_prefix_scalar(reinterpret_cast<const std::uint8_t*>(s.data()),
                                                 s.size()) == s.size();
}

void check(std::string_view doc, const TextCleanerOptions& options);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t bits = data[0];
  TextCleanerOptions options{.repair_utf8 = (bits & 0x80u) == 0,
                             .normalize_newlines = (bits & 0x01u) != 0,
                             .remove_controls = (bits & 0x02u) != 0,
                             .whitespace = Whitespace::kCollapse,
                             .strip_trailing_spaces = (bits & 0x08u) != 0,
                             .limit_newlines = (bits & 0x10u) != 0,
                             .strip = (bits & 0x20u) != 0,
                             .nfc = (bits & 0x40u) != 0,
                             .threads = 1};
  const std::string_view doc(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((bits & 0x04u) != 0) {
    check(doc, options);
  } else {
    options.whitespace = Whitespace::kPreserveIndent;
    check(doc, options);
    options.whitespace = Whitespace::kKeep;
    check(doc, options);
  }
  return 0;
}

namespace {

void check(std::string_view doc, const TextCleanerOptions& options) {
  const Outcome reference = run(doc, options, Isa::kScalar);
  for (const Isa isa : supported_isas()) {
    if (run(doc, options, isa) != reference) std::abort();
  }
  if (!reference.ok) {
    if (valid_utf8(doc)) std::abort();  // errors only for invalid input
    return;
  }
  const std::string& out = reference.text;
  if (!valid_utf8(out)) std::abort();
  if (out.size() > 3 * doc.size()) std::abort();  // one byte at most becomes a 3-byte U+FFFD

  // Idempotence: the clean output is a fixed point.
  const Outcome again = run(out, options, Isa::kScalar);
  if (!again.ok || again.text != out || again.stats.documents_changed != 0) std::abort();

  // The public API (live ISA) agrees, also in a batch with the document split in two.
  TextCleaner cleaner(options);
  if (cleaner.clean(doc) != out || !(cleaner.stats() == reference.stats)) std::abort();
  const std::string_view half = doc.substr(0, doc.size() / 2);  // may cut a character in two
  const std::vector<std::string_view> batch = {doc, half, out};
  try {
    const std::vector<std::string> cleaned = cleaner.clean_batch(batch);
    if (cleaned.size() != 3 || cleaned[0] != out || cleaned[2] != out) std::abort();
    if (!valid_utf8(cleaned[1])) std::abort();
  } catch (const MalformedInputError&) {
    if (options.repair_utf8 || valid_utf8(half)) std::abort();
  }
}

}  // namespace
