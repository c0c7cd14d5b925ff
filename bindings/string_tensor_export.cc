// StringTensor bindings, export: read-only NumPy arrays over the tensor's own buffers (zero-copy,
// DLPack-capable) and the Arrow PyCapsule export (__arrow_c_array__, __arrow_c_stream__).
#include <memory>

#include "luminamoon/data/string_tensor/arrow_bridge.h"
#include "string_tensor_bindings.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

// A capsule holding one more reference to `owner`: the base object of a NumPy array over our
// memory. Destroyed with the GIL held, like every capsule.
nb::capsule owner_capsule(const std::shared_ptr<const void>& owner) {
  auto* held = new std::shared_ptr<const void>(owner);
  return nb::capsule(held,
                     [](void* p) noexcept { delete static_cast<std::shared_ptr<const void>*>(p); });
}

// A read-only 1-D (or n x 16) NumPy array over `data`, kept alive by `owner`.
template <typename T>
nb::object numpy_over(const void* data, std::size_t count, const std::shared_ptr<const void>& owner,
                      std::size_t columns = 0) {
  using Array = nb::ndarray<nb::numpy, const T>;
  const void* p = data != nullptr ? data : kEmptyBuffer;
  if (columns == 0) {
    const std::size_t shape[1] = {count};
    return nb::cast(Array(p, 1, shape, owner_capsule(owner)));
  }
  const std::size_t shape[2] = {count, columns};
  return nb::cast(Array(p, 2, shape, owner_capsule(owner)));
}

nb::object offsets_array(const ContiguousStrings& c) {
  if (c.width == OffsetWidth::k32) {
    return numpy_over<std::uint32_t>(c.offsets.data(), c.size + 1, c.offsets.owner());
  }
  return numpy_over<std::uint64_t>(c.offsets.data(), c.size + 1, c.offsets.owner());
}

// The type asked for through `requested_schema` (a schema capsule); unsupported requests get the
// default, utf8_view, as the PyCapsule protocol allows (the consumer checks what it received).
struct Requested {
  ArrowStringType type = ArrowStringType::kUtf8View;
  bool binary = false;
};

Requested requested_type(nb::handle requested_schema) {
  Requested r;
  if (requested_schema.is_none()) return r;
  const auto* schema =
      capsule_pointer<ArrowSchema>(requested_schema, "arrow_schema", "requested_schema");
  if (const auto type = arrow_string_type(schema->format)) {
    r.type = *type;
    r.binary = is_binary_format(schema->format);
  }
  return r;
}

template <typename T>
void release_and_delete(void* p) noexcept {
  auto* value = static_cast<T*>(p);
  if (value->release != nullptr) value->release(value);
  delete value;
}

nb::tuple export_array(const StringTensor& t, nb::handle requested_schema) {
  const Requested r = requested_type(requested_schema);
  auto* schema = new ArrowSchema{};
  nb::capsule schema_capsule(schema, "arrow_schema", release_and_delete<ArrowSchema>);
  auto* array = new ArrowArray{};
  nb::capsule array_capsule(array, "arrow_array", release_and_delete<ArrowArray>);
  export_arrow_schema(r.type, schema, r.binary);
  {
    nb::gil_scoped_release release;
    export_arrow_array(t, r.type, array);
  }
  return nb::make_tuple(schema_capsule, array_capsule);
}

nb::capsule export_stream(const StringTensor& t, nb::handle requested_schema) {
  const Requested r = requested_type(requested_schema);
  auto* stream = new ArrowArrayStream{};
  nb::capsule capsule(stream, "arrow_array_stream", release_and_delete<ArrowArrayStream>);
  nb::gil_scoped_release release;
  export_arrow_stream(t, r.type, stream, r.binary);
  return capsule;
}

}  // namespace

void def_string_tensor_export(StringTensorClass& cls) {
  cls.def_prop_ro(
         "views",
         [](const StringTensor& t) {
           return numpy_over<std::uint8_t>(t.views().data(), t.size(), t.views_owner(), 16);
         },
         nb::sig("def views(self) -> numpy.typing.NDArray[numpy.uint8]"),
         "The (n, 16) uint8 view buffer (Arrow utf8_view), read-only, no copy.")
      .def_prop_ro(
          "data_buffers",
          [](const StringTensor& t) {
            nb::list out;
            for (const SharedBytes& b : t.data_buffers()) {
              out.append(numpy_over<std::uint8_t>(b.data(), b.size(), b.owner()));
            }
            return out;
          },
          nb::sig("def data_buffers(self) -> list[numpy.typing.NDArray[numpy.uint8]]"),
          "The data buffers the views point into, as read-only uint8 arrays (no copy).")
      .def(
          "offsets_and_payload",
          [](const StringTensor& t) {
            ContiguousStrings c;
            {
              nb::gil_scoped_release release;
              c = t.contiguous();
            }
            return nb::make_tuple(
                offsets_array(c),
                numpy_over<std::uint8_t>(c.payload.data(), c.payload.size(), c.payload.owner()));
          },
          nb::sig("def offsets_and_payload(self) -> tuple[numpy.typing.NDArray[numpy.uint32] | "
                  "numpy.typing.NDArray[numpy.uint64], numpy.typing.NDArray[numpy.uint8]]"),
          "(offsets, payload) as read-only NumPy arrays: n + 1 offsets starting at 0 (uint32, "
          "uint64 past 4 GiB - 1) and the UTF-8 bytes. No copy when is_contiguous (a slice "
          "rebases its offsets); otherwise built in one pass.")
      .def(
          "compact",
          [](const StringTensor& t) {
            nb::gil_scoped_release release;
            return t.compact();
          },
          "A copy holding exactly these strings in one payload, with both layouts.")
      .def("__arrow_c_array__", &export_array, "requested_schema"_a.none() = nb::none(),
           nb::sig("def __arrow_c_array__(self, requested_schema: object | None = None) -> "
                   "tuple[object, object]"),
           "Arrow PyCapsule export: utf8_view by default; utf8/large_utf8 (or the binary "
           "types) when requested. Zero-copy where the layout allows.")
      .def("__arrow_c_stream__", &export_stream, "requested_schema"_a.none() = nb::none(),
           nb::sig("def __arrow_c_stream__(self, requested_schema: object | None = None) -> "
                   "object"),
           "Arrow PyCapsule stream of one array (same types as __arrow_c_array__).");
}

}  // namespace luminamoon::data::bindings
