// StringTensor <-> the Arrow C Data Interface (and C Stream Interface), zero-copy both ways.
//
// Export: the ArrowArray's private_data holds a copy of the tensor (shared_ptrs to its views,
// data buffers and offsets), so the exported buffers stay valid after the tensor is destroyed,
// until the consumer calls release. Formats: "vu" utf8_view (views + data buffers + the
// variadic buffer-sizes buffer), "u" utf8 and "U" large_utf8 (offsets + payload).
// Import: the tensor takes the producer's ArrowArray over (moves it; the producer's release runs
// when the last tensor sharing those buffers is gone). "vu"/"vz" arrays are used as they are,
// "u"/"U"/"z"/"Z" arrays become views into the producer's payload (its offsets are kept as the
// contiguous layout). Binary types are accepted when every element is valid UTF-8.
#pragma once

#include <optional>

#include "luminamoon/data/arrow/c_data_interface.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data {

enum class ArrowStringType { kUtf8View, kUtf8, kLargeUtf8 };

// "vu" -> kUtf8View, "u" -> kUtf8, "U" -> kLargeUtf8 (also "vz", "z", "Z"); else nullopt.
std::optional<ArrowStringType> arrow_string_type(const char* format) noexcept;
// "vz", "z" and "Z": the binary twins (same buffers, no UTF-8 promise).
bool is_binary_format(const char* format) noexcept;
// "vu", "u", "U"; with `binary`: "vz", "z", "Z".
const char* arrow_format(ArrowStringType type, bool binary = false) noexcept;

// Fills `schema` for `type` (a binary type when `binary`, for consumers that ask for one): name
// "", no metadata, flagged nullable as pyarrow does (the tensor itself never holds a null).
void export_arrow_schema(ArrowStringType type, ArrowSchema* schema, bool binary = false);
// Fills `array` with `tensor` in `type`: utf8_view shares the views and data buffers; utf8 and
// large_utf8 share the kept contiguous layout when its width matches, else build the offsets
// (and, without a kept layout, the payload). Throws InvalidArgument for utf8 over 2 GiB.
// On success the consumer owns `array` and must call its release.
void export_arrow_array(const StringTensor& tensor, ArrowStringType type, ArrowArray* array);
// A stream of one array (the whole tensor) in `type`, built now: errors are thrown here.
void export_arrow_stream(const StringTensor& tensor, ArrowStringType type, ArrowArrayStream* stream,
                         bool binary = false);

// Imports one array of a string/binary type. Moves `array` (array->release becomes null) unless
// it throws: InvalidType for another format, InvalidArgument for a null element (naming it),
// malformed buffers or invalid UTF-8. `base_index` offsets element numbers in messages.
StringTensor import_arrow_array(const ArrowSchema& schema, ArrowArray* array,
                                std::size_t base_index = 0);
// Imports every chunk of a stream and concatenates them (one chunk: zero-copy as above). Does
// not release the stream.
StringTensor import_arrow_stream(ArrowArrayStream* stream);

}  // namespace luminamoon::data
