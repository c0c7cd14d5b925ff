// StringTensor export to and import from the Arrow C Data / C Stream interfaces.
#include "luminamoon/data/string_tensor/arrow_bridge.h"

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

// Stands in for the null pointer of an empty buffer: consumers may reject null data pointers.
alignas(64) constexpr std::uint8_t kEmptyBuffer[64] = {};

const void* nonnull(const void* p) noexcept { return p != nullptr ? p : kEmptyBuffer; }

// Everything an exported array points at. The tensor copy holds shared references to the views
// and data buffers, `contiguous` to the offsets and payload of a utf8/large_utf8 export.
struct ExportedArray {
  StringTensor tensor;
  ContiguousStrings contiguous;
  std::vector<std::int64_t> variadic_sizes;
  std::vector<const void*> buffers;
};

void release_schema(ArrowSchema* schema) { schema->release = nullptr; }

void release_array(ArrowArray* array) {
  delete static_cast<ExportedArray*>(array->private_data);
  array->release = nullptr;
}

// The offsets + payload of a utf8 (k32, int32 offsets) or large_utf8 (k64) export: the kept
// layout as stored when its width matches and it fits, else contiguous(width).
ContiguousStrings contiguous_for(const StringTensor& tensor, OffsetWidth width) {
  const std::uint64_t limit = width == OffsetWidth::k32
                                  ? std::uint64_t{std::numeric_limits<std::int32_t>::max()}
                                  : std::uint64_t{std::numeric_limits<std::int64_t>::max()};
  const auto& kept = tensor.kept_contiguous();
  if (kept && kept->width == width && kept->offset(kept->size) <= limit) return *kept;
  ContiguousStrings c = tensor.contiguous(width);
  if (c.offset(c.size) > limit) {
    throw InvalidArgument(
        "utf8 (int32 offsets) addresses at most 2^31 - 1 payload bytes; this "
        "tensor holds " +
        std::to_string(c.offset(c.size)) + ": request large_utf8 instead");
  }
  return c;
}

struct ExportedStream {
  ArrowStringType type;
  bool binary = false;
  ArrowArray pending{};  // exported eagerly; handed out by the first get_next
  std::string last_error;
};

int stream_get_schema(ArrowArrayStream* stream, ArrowSchema* out) {
  const auto* state = static_cast<ExportedStream*>(stream->private_data);
  export_arrow_schema(state->type, out, state->binary);
  return 0;
}

int stream_get_next(ArrowArrayStream* stream, ArrowArray* out) {
  auto* state = static_cast<ExportedStream*>(stream->private_data);
  *out = state->pending;  // a released (end-of-stream) array once handed out
  state->pending.release = nullptr;
  return 0;
}

const char* stream_get_last_error(ArrowArrayStream* stream) {
  const std::string& error = static_cast<ExportedStream*>(stream->private_data)->last_error;
  return error.empty() ? nullptr : error.c_str();
}

void stream_release(ArrowArrayStream* stream) {
  auto* state = static_cast<ExportedStream*>(stream->private_data);
  if (state->pending.release != nullptr) state->pending.release(&state->pending);
  delete state;
  stream->release = nullptr;
}

void check_no_nulls(const ArrowArray& array, std::size_t base_index) {
  if (array.null_count == 0 || array.buffers[0] == nullptr) return;
  const auto* bitmap = static_cast<const std::uint8_t*>(array.buffers[0]);
  for (std::int64_t i = 0; i < array.length; ++i) {
    const auto bit = static_cast<std::uint64_t>(array.offset + i);
    if (((bitmap[bit >> 3] >> (bit & 7)) & 1) == 0) {
      throw InvalidArgument("element " + std::to_string(base_index + static_cast<std::size_t>(i)) +
                            " is null; a StringTensor holds no nulls: drop or fill them first "
                            "(e.g. pyarrow.compute.drop_null or fill_null(''))");
    }
  }
}

[[noreturn]] void throw_malformed(const std::string& what) {
  throw InvalidArgument("malformed Arrow array: " + what);
}

template <typename Offset>
StringTensor import_offsets(const std::shared_ptr<const ArrowArray>& holder,
                            std::size_t base_index) {
  const ArrowArray& a = *holder;
  if (a.n_buffers != 3) throw_malformed(std::to_string(a.n_buffers) + " buffers, expected 3");
  const auto n = static_cast<std::size_t>(a.length);
  const auto* offsets = static_cast<const std::uint8_t*>(a.buffers[1]);
  if (offsets == nullptr) throw_malformed("no offsets buffer");
  offsets += static_cast<std::size_t>(a.offset) * sizeof(Offset);
  Offset first;
  Offset last;
  std::memcpy(&first, offsets, sizeof(Offset));
  std::memcpy(&last, offsets + n * sizeof(Offset), sizeof(Offset));
  // Arrow offsets are signed. With the first and the last non-negative, from_contiguous's
  // monotonicity check (on the unsigned values) rejects any negative one in between.
  if (first < 0 || last < 0) throw_malformed("negative offsets");
  const auto* payload = static_cast<const std::uint8_t*>(a.buffers[2]);
  if (payload == nullptr && last > 0) throw_malformed("no data buffer");
  ContiguousStrings c;
  c.width = sizeof(Offset) == 4 ? OffsetWidth::k32 : OffsetWidth::k64;
  c.size = n;
  c.offsets = SharedBytes(holder, offsets, (n + 1) * sizeof(Offset));
  // Offsets are read with memcpy everywhere, but NumPy/DLPack exports want aligned arrays.
  if (reinterpret_cast<std::uintptr_t>(offsets) % sizeof(Offset) != 0) {
    c.offsets = SharedBytes::copy_of(c.offsets.span());
  }
  // The C Data Interface does not carry buffer sizes; the last offset bounds what is read.
  c.payload = SharedBytes(holder, payload, static_cast<std::size_t>(last));
  return StringTensor::from_contiguous(std::move(c), base_index);
}

StringTensor import_views(const std::shared_ptr<const ArrowArray>& holder, std::size_t base_index) {
  const ArrowArray& a = *holder;
  // Buffers: validity, views, data buffers..., variadic buffer sizes (int64[]).
  if (a.n_buffers < 3) {
    throw_malformed(std::to_string(a.n_buffers) + " buffers, expected at least 3 for a view type");
  }
  const auto n = static_cast<std::size_t>(a.length);
  const auto n_data = static_cast<std::size_t>(a.n_buffers - 3);
  const auto* sizes = static_cast<const std::int64_t*>(a.buffers[a.n_buffers - 1]);
  if (n_data > 0 && sizes == nullptr) throw_malformed("no variadic buffer sizes");
  std::vector<SharedBytes> data;
  data.reserve(n_data);
  for (std::size_t k = 0; k < n_data; ++k) {
    std::int64_t size;
    std::memcpy(&size, sizes + k, sizeof(size));
    const auto* p = static_cast<const std::uint8_t*>(a.buffers[2 + k]);
    if (size < 0 || (p == nullptr && size > 0)) {
      throw_malformed("data buffer " + std::to_string(k) + " has a bad size or no data");
    }
    data.emplace_back(holder, p, static_cast<std::size_t>(size));
  }
  const auto* views = static_cast<const std::uint8_t*>(a.buffers[1]);
  if (views == nullptr) throw_malformed("no views buffer");
  views += static_cast<std::size_t>(a.offset) * sizeof(BinaryView);
  return StringTensor::from_views(SharedBytes(holder, views, n * sizeof(BinaryView)), n,
                                  std::move(data), base_index);
}

struct SchemaGuard {
  ArrowSchema schema{};
  ~SchemaGuard() {
    if (schema.release != nullptr) schema.release(&schema);
  }
};

[[noreturn]] void throw_stream_error(ArrowArrayStream* stream, int code) {
  const char* message =
      stream->get_last_error != nullptr ? stream->get_last_error(stream) : nullptr;
  throw InvalidArgument(std::string("Arrow stream error: ") + std::strerror(code) +
                        (message != nullptr ? std::string(": ") + message : std::string()));
}

}  // namespace

std::optional<ArrowStringType> arrow_string_type(const char* format) noexcept {
  if (format == nullptr) return std::nullopt;
  if (std::strcmp(format, "vu") == 0 || std::strcmp(format, "vz") == 0) {
    return ArrowStringType::kUtf8View;
  }
  if (std::strcmp(format, "u") == 0 || std::strcmp(format, "z") == 0) return ArrowStringType::kUtf8;
  if (std::strcmp(format, "U") == 0 || std::strcmp(format, "Z") == 0) {
    return ArrowStringType::kLargeUtf8;
  }
  return std::nullopt;
}

bool is_binary_format(const char* format) noexcept {
  return format != nullptr && (std::strcmp(format, "vz") == 0 || std::strcmp(format, "z") == 0 ||
                               std::strcmp(format, "Z") == 0);
}

const char* arrow_format(ArrowStringType type, bool binary) noexcept {
  switch (type) {
    case ArrowStringType::kUtf8View:
      return binary ? "vz" : "vu";
    case ArrowStringType::kUtf8:
      return binary ? "z" : "u";
    case ArrowStringType::kLargeUtf8:
      return binary ? "Z" : "U";
  }
  return "vu";
}

void export_arrow_schema(ArrowStringType type, ArrowSchema* schema, bool binary) {
  *schema = ArrowSchema{};
  schema->format = arrow_format(type, binary);
  schema->name = "";
  schema->flags = ARROW_FLAG_NULLABLE;
  schema->release = release_schema;
}

void export_arrow_array(const StringTensor& tensor, ArrowStringType type, ArrowArray* array) {
  auto exported = std::make_unique<ExportedArray>();
  exported->tensor = tensor;
  auto& buffers = exported->buffers;
  buffers.push_back(nullptr);  // validity: the tensor has no nulls
  if (type == ArrowStringType::kUtf8View) {
    const auto& data = tensor.data_buffers();
    exported->variadic_sizes.reserve(data.size());
    buffers.reserve(data.size() + 3);
    buffers.push_back(nonnull(tensor.views().data()));
    for (const SharedBytes& b : data) {
      buffers.push_back(nonnull(b.data()));
      exported->variadic_sizes.push_back(static_cast<std::int64_t>(b.size()));
    }
    buffers.push_back(nonnull(exported->variadic_sizes.data()));
  } else {
    exported->contiguous = contiguous_for(
        tensor, type == ArrowStringType::kUtf8 ? OffsetWidth::k32 : OffsetWidth::k64);
    buffers.push_back(nonnull(exported->contiguous.offsets.data()));
    buffers.push_back(nonnull(exported->contiguous.payload.data()));
  }
  *array = ArrowArray{};
  array->length = static_cast<std::int64_t>(tensor.size());
  array->null_count = 0;
  array->offset = 0;
  array->n_buffers = static_cast<std::int64_t>(buffers.size());
  array->buffers = buffers.data();
  array->release = release_array;
  array->private_data = exported.release();
}

void export_arrow_stream(const StringTensor& tensor, ArrowStringType type, ArrowArrayStream* stream,
                         bool binary) {
  auto state = std::make_unique<ExportedStream>();
  state->type = type;
  state->binary = binary;
  export_arrow_array(tensor, type, &state->pending);  // errors surface here, not in get_next
  *stream = ArrowArrayStream{};
  stream->get_schema = stream_get_schema;
  stream->get_next = stream_get_next;
  stream->get_last_error = stream_get_last_error;
  stream->release = stream_release;
  stream->private_data = state.release();
}

StringTensor import_arrow_array(const ArrowSchema& schema, ArrowArray* array,
                                std::size_t base_index) {
  if (array->release == nullptr) throw InvalidArgument("the Arrow array was already released");
  // Take the array over first, so that every path (errors included) releases it exactly once;
  // the tensor's buffers share `holder`, so the producer's release runs after the last of them.
  std::shared_ptr<const ArrowArray> holder(new ArrowArray(*array), [](const ArrowArray* a) {
    auto* owned = const_cast<ArrowArray*>(a);
    if (owned->release != nullptr) owned->release(owned);
    delete owned;
  });
  array->release = nullptr;
  const std::optional<ArrowStringType> type = arrow_string_type(schema.format);
  if (!type) {
    throw InvalidType(std::string("unsupported Arrow type (format '") +
                      (schema.format != nullptr ? schema.format : "?") +
                      "'); a StringTensor imports utf8, large_utf8 and utf8_view (and binary, "
                      "large_binary and binary_view holding UTF-8)");
  }
  const ArrowArray& a = *holder;
  if (a.length < 0 || a.offset < 0) throw_malformed("negative length or offset");
  if (a.n_buffers < 1 || a.buffers == nullptr) throw_malformed("no buffers");
  check_no_nulls(a, base_index);
  if (a.length == 0) return StringTensor::from_strings({});
  switch (*type) {
    case ArrowStringType::kUtf8View:
      return import_views(holder, base_index);
    case ArrowStringType::kUtf8:
      return import_offsets<std::int32_t>(holder, base_index);
    case ArrowStringType::kLargeUtf8:
      return import_offsets<std::int64_t>(holder, base_index);
  }
  return StringTensor::from_strings({});
}

StringTensor import_arrow_stream(ArrowArrayStream* stream) {
  if (stream == nullptr || stream->release == nullptr) {
    throw InvalidArgument("the Arrow stream was already released");
  }
  SchemaGuard schema;
  if (const int rc = stream->get_schema(stream, &schema.schema); rc != 0) {
    throw_stream_error(stream, rc);
  }
  std::vector<StringTensor> parts;
  std::size_t base_index = 0;
  for (;;) {
    ArrowArray chunk{};
    if (const int rc = stream->get_next(stream, &chunk); rc != 0) throw_stream_error(stream, rc);
    if (chunk.release == nullptr) break;  // end of stream
    parts.push_back(import_arrow_array(schema.schema, &chunk, base_index));
    base_index += parts.back().size();
  }
  return StringTensor::concat(parts);
}

}  // namespace luminamoon::data
