// Unicode normalization form C for the TextCleaner's last step, on utf8proc's tables.
#pragma once

#include <string>

namespace luminamoon::data::cleaner_internal {

// NFC of valid UTF-8, in place; returns whether the text changed. Canonical ordering uses a
// stable sort, so a long run of combining marks costs O(n log n) rather than the O(n^2) of the
// insertion sorts in utf8proc_map and CPython's unicodedata; the result is the same.
bool nfc_in_place(std::string& text);

}  // namespace luminamoon::data::cleaner_internal
