// Zero-copy views over Arrow string and binary arrays received through the C Data Interface:
// utf8 ("u"), large_utf8 ("U"), utf8_view ("vu"), binary ("z"), large_binary ("Z") and
// binary_view ("vz"). The views point into the producer's buffers, so the ArrowArray must stay
// alive (not released) while they are used.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "luminamoon/data/arrow/c_data_interface.h"

namespace luminamoon::data {

// True for the six formats above.
bool is_string_format(const char* format) noexcept;

// Appends a view of every element of `array` to `out`. Element i is reported in errors as
// index `base_index + i` (the position in the whole, possibly chunked, input).
// Throws InvalidType for other formats (naming the format and the supported ones) and
// InvalidArgument for a null element (naming its index) or malformed buffers.
void append_string_views(const ArrowSchema& schema, const ArrowArray& array, std::size_t base_index,
                         std::vector<std::string_view>& out);

}  // namespace luminamoon::data
