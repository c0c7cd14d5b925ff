// The per-document cleaning pass behind TextCleaner, with the kernels passed in so that tests and
// the fuzzer can run one document through every ISA this CPU supports and compare.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include "cleaner/internal/kernels.h"
#include "luminamoon/data/cleaner/text_cleaner.h"

namespace luminamoon::data::cleaner_internal {

inline constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

// Cleans `text` (steps 1-8 of text_cleaner.h) and adds its counters to `stats` (only when it
// returns). With repair_utf8 off, invalid UTF-8 throws MalformedInputError naming the byte offset
// and the document: "texts[<index>]", or "text" when index is kNoIndex.
std::string clean_document(std::string_view text, const TextCleanerOptions& options,
                           const Kernels& kernels, CleanStats& stats, std::size_t index = kNoIndex);

}  // namespace luminamoon::data::cleaner_internal
