// UTF-8 checks of StringTensor construction, on the common runtime-dispatched validator
// (common/internal/utf8.h): one kernel, one definition of "valid".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/internal/utf8.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data::string_tensor_internal {

inline bool is_valid_utf8(std::string_view bytes) { return utf8_internal::is_valid(bytes); }

// InvalidArgument: "element <index> is not valid UTF-8 (...)", with the first bad byte.
[[noreturn]] void throw_invalid_utf8(std::size_t index, std::string_view bytes);

// Checks every string of `strings`. Fast path: one kernel pass over the whole payload range,
// then each non-empty string must start on a code-point boundary (so no sequence straddles two
// strings); that holds iff every string is valid on its own. On failure, a per-string pass finds
// the first bad element, reported as `base_index + i`.
void validate_contiguous_utf8(const ContiguousStrings& strings, std::size_t base_index);

}  // namespace luminamoon::data::string_tensor_internal
