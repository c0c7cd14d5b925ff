// Views over a contiguous payload: how a StringTensor built from offsets + payload gets its
// CPU layout, and where the payload is cut into Arrow data buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "luminamoon/data/string_tensor/shared_bytes.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data::string_tensor_internal {

struct ViewsAndBuffers {
  SharedBytes views;  // size * 16 bytes of BinaryView
  std::vector<SharedBytes> buffers;
};

// One view per string of `strings` (valid offsets assumed). Strings of at most 12 bytes are
// inlined; longer ones point into the payload. Data buffer 0 starts at payload byte 0; a new
// buffer starts at a long string's first byte when that string would otherwise end more than
// `max_buffer_bytes` past its buffer's start (views hold int32 offsets). Buffer k ends where
// buffer k + 1 starts, the last one at offset(size). Below 2 GiB: one buffer, view offsets equal
// the string offsets (the same views as pyarrow's cast from utf8 to utf8_view).
ViewsAndBuffers build_views(const ContiguousStrings& strings,
                            std::uint64_t max_buffer_bytes = kMaxViewBufferBytes);

}  // namespace luminamoon::data::string_tensor_internal
