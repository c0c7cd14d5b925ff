// Element views over Arrow string/binary arrays (offsets or 16-byte views), with null checks.
#include "luminamoon/data/arrow/string_array.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

enum class Layout { kOffsets32, kOffsets64, kViews, kUnsupported };

Layout layout_of(const char* format) noexcept {
  if (format == nullptr) return Layout::kUnsupported;
  if (std::strcmp(format, "u") == 0 || std::strcmp(format, "z") == 0) return Layout::kOffsets32;
  if (std::strcmp(format, "U") == 0 || std::strcmp(format, "Z") == 0) return Layout::kOffsets64;
  if (std::strcmp(format, "vu") == 0 || std::strcmp(format, "vz") == 0) return Layout::kViews;
  return Layout::kUnsupported;
}

bool is_null(const ArrowArray& array, std::int64_t i) noexcept {
  if (array.null_count == 0 || array.buffers[0] == nullptr) return false;
  const auto* bitmap = static_cast<const std::uint8_t*>(array.buffers[0]);
  const std::int64_t bit = array.offset + i;
  return ((bitmap[bit >> 3] >> (bit & 7)) & 1) == 0;
}

[[noreturn]] void throw_null(std::size_t index) {
  throw InvalidArgument("element " + std::to_string(index) +
                        " is null; drop or fill nulls before deduplicating (e.g. "
                        "pyarrow.compute.drop_null)");
}

template <typename Offset>
void append_offsets(const ArrowArray& array, std::size_t base_index,
                    std::vector<std::string_view>& out) {
  const auto* offsets = static_cast<const Offset*>(array.buffers[1]);
  const auto* data = static_cast<const char*>(array.buffers[2]);
  for (std::int64_t i = 0; i < array.length; ++i) {
    const auto index = base_index + static_cast<std::size_t>(i);
    if (is_null(array, i)) throw_null(index);
    const Offset begin = offsets[array.offset + i];
    const Offset end = offsets[array.offset + i + 1];
    if (begin < 0 || end < begin) {
      throw InvalidArgument("element " + std::to_string(index) + ": malformed Arrow offsets (" +
                            std::to_string(begin) + ", " + std::to_string(end) + ")");
    }
    const auto size = static_cast<std::size_t>(end - begin);
    out.emplace_back(size == 0 ? "" : data + begin, size);
  }
}

void append_views(const ArrowArray& array, std::size_t base_index,
                  std::vector<std::string_view>& out) {
  // buffers: validity, views, data buffers..., variadic buffer sizes (int64[]).
  if (array.n_buffers < 3) {
    throw InvalidArgument("malformed Arrow view array: " + std::to_string(array.n_buffers) +
                          " buffers, expected at least 3");
  }
  const auto n_data = static_cast<std::size_t>(array.n_buffers - 3);
  const auto* sizes = static_cast<const std::int64_t*>(array.buffers[array.n_buffers - 1]);
  const auto* views = static_cast<const std::uint8_t*>(array.buffers[1]);
  for (std::int64_t i = 0; i < array.length; ++i) {
    const auto index = base_index + static_cast<std::size_t>(i);
    if (is_null(array, i)) throw_null(index);
    const std::uint8_t* view = views + 16 * (array.offset + i);
    std::int32_t length;
    std::memcpy(&length, view, 4);
    if (length < 0) {
      throw InvalidArgument("element " + std::to_string(index) + ": negative view length");
    }
    if (length <= 12) {
      out.emplace_back(reinterpret_cast<const char*>(view + 4), static_cast<std::size_t>(length));
      continue;
    }
    std::int32_t buffer_index;
    std::int32_t offset;
    std::memcpy(&buffer_index, view + 8, 4);
    std::memcpy(&offset, view + 12, 4);
    if (buffer_index < 0 || static_cast<std::size_t>(buffer_index) >= n_data || offset < 0 ||
        (sizes != nullptr && std::int64_t{offset} + length > sizes[buffer_index])) {
      throw InvalidArgument("element " + std::to_string(index) +
                            ": Arrow view points outside its data buffers");
    }
    const auto* data = static_cast<const char*>(array.buffers[2 + buffer_index]);
    out.emplace_back(data + offset, static_cast<std::size_t>(length));
  }
}

}  // namespace

bool is_string_format(const char* format) noexcept {
  return layout_of(format) != Layout::kUnsupported;
}

void append_string_views(const ArrowSchema& schema, const ArrowArray& array, std::size_t base_index,
                         std::vector<std::string_view>& out) {
  const Layout layout = layout_of(schema.format);
  if (layout == Layout::kUnsupported) {
    throw InvalidType(std::string("unsupported Arrow type (format '") +
                      (schema.format ? schema.format : "?") +
                      "'); expected utf8, large_utf8, utf8_view, binary, large_binary or "
                      "binary_view");
  }
  if (array.length < 0 || array.offset < 0) {
    throw InvalidArgument("malformed Arrow array: negative length or offset");
  }
  out.reserve(out.size() + static_cast<std::size_t>(array.length));
  if (array.length == 0) return;
  switch (layout) {
    case Layout::kOffsets32:
      if (array.n_buffers != 3) throw InvalidArgument("malformed Arrow string array: buffers");
      append_offsets<std::int32_t>(array, base_index, out);
      break;
    case Layout::kOffsets64:
      if (array.n_buffers != 3) throw InvalidArgument("malformed Arrow string array: buffers");
      append_offsets<std::int64_t>(array, base_index, out);
      break;
    case Layout::kViews:
      append_views(array, base_index, out);
      break;
    case Layout::kUnsupported:
      break;
  }
}

}  // namespace luminamoon::data
