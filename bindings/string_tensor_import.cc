// StringTensor bindings, construction and import: from Python sequences of str/bytes, Arrow
// arrays and streams (PyCapsule interface), NumPy string arrays, (offsets, payload) buffers and
// torch tensors. Validation and copies run with the GIL released.
#include <nanobind/stl/string.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "luminamoon/data/string_tensor/arrow_bridge.h"
#include "string_tensor_bindings.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

StringTensor import_arrow_object(nb::handle obj) {
  if (nb::hasattr(obj, "__arrow_c_array__")) {
    nb::object pair = obj.attr("__arrow_c_array__")();
    if (!PyTuple_Check(pair.ptr()) || nb::len(pair) != 2) {
      throw nb::type_error("__arrow_c_array__ must return a (schema, array) tuple of capsules");
    }
    const auto* schema = capsule_pointer<ArrowSchema>(pair[0], "arrow_schema", "StringTensor");
    auto* array = capsule_pointer<ArrowArray>(pair[1], "arrow_array", "StringTensor");
    // The array is moved into the tensor; the schema capsule outlives this call.
    nb::gil_scoped_release release;
    return import_arrow_array(*schema, array);
  }
  nb::object capsule = obj.attr("__arrow_c_stream__")();
  auto* stream = capsule_pointer<ArrowArrayStream>(capsule, "arrow_array_stream", "StringTensor");
  nb::gil_scoped_release release;
  return import_arrow_stream(stream);
}

StringTensor from_sequence(nb::handle items) {
  // A tuple snapshot holds a reference to every element while the GIL is released.
  nb::tuple snapshot = nb::steal<nb::tuple>(PySequence_Tuple(items.ptr()));
  if (!snapshot.is_valid()) throw nb::python_error();
  const auto n = static_cast<std::size_t>(PyTuple_Size(snapshot.ptr()));
  std::vector<std::string_view> strings(n);
  DocumentViews others;  // every other bytes-like type, and the error messages
  bool all_str = true;   // CPython's UTF-8 of a str is valid: no check needed then
  for (std::size_t i = 0; i < n; ++i) {
    // The common types inline: this loop runs once per string with the GIL held.
    PyObject* item = PyTuple_GetItem(snapshot.ptr(), static_cast<Py_ssize_t>(i));
    Py_ssize_t size = 0;
    if (PyUnicode_Check(item)) {
#if !defined(Py_LIMITED_API)
      // Not ASCII: encoded by the engine, the str left as it was (DocumentViews, common.h).
      if (!PyUnicode_IS_ASCII(item)) {
        strings[i] = others.add(item, "items[" + std::to_string(i) + "]");
        continue;
      }
#endif
      if (const char* data = PyUnicode_AsUTF8AndSize(item, &size); data != nullptr) {
        strings[i] = std::string_view(data, static_cast<std::size_t>(size));
        continue;
      }
      PyErr_Clear();  // a lone surrogate: DocumentViews raises the standard message
    }
    all_str = false;
    if (PyBytes_Check(item)) {
      strings[i] =
          std::string_view(PyBytes_AsString(item), static_cast<std::size_t>(PyBytes_Size(item)));
      continue;
    }
    strings[i] = others.add(item, "items[" + std::to_string(i) + "]");
  }
  nb::gil_scoped_release release;
  return StringTensor::from_strings(
      strings, all_str ? StringTensor::Utf8::kTrusted : StringTensor::Utf8::kValidate);
}

bool is_numpy_array(nb::handle obj) {
  nb::handle type = obj.type();
  return std::strcmp(nb::str(type.attr("__module__")).c_str(), "numpy") == 0 &&
         std::strcmp(nb::str(type.attr("__name__")).c_str(), "ndarray") == 0;
}

StringTensor coerce(nb::handle data, nb::handle cls) {
  if (data.is_none()) return StringTensor::from_strings({});
  if (nb::isinstance<StringTensor>(data)) return nb::cast<const StringTensor&>(data);
  if (PyList_Check(data.ptr()) || PyTuple_Check(data.ptr())) return from_sequence(data);
  if (nb::hasattr(data, "__arrow_c_array__") || nb::hasattr(data, "__arrow_c_stream__")) {
    return import_arrow_object(data);
  }
  if (is_numpy_array(data)) {
    return nb::cast<const StringTensor&>(string_tensor_interop("from_numpy")(cls, data));
  }
  if (PyUnicode_Check(data.ptr()) || PyBytes_Check(data.ptr()) || PyByteArray_Check(data.ptr()) ||
      PyMemoryView_Check(data.ptr())) {
    throw nb::type_error("StringTensor: got a single string; pass a list of strings (e.g. [text])");
  }
  if (nb::hasattr(data, "__iter__")) {
    nb::object list = nb::steal(PySequence_List(data.ptr()));
    if (!list.is_valid()) throw nb::python_error();
    return from_sequence(list);
  }
  throw nb::type_error(
      ("StringTensor: expected a list/tuple/iterable of str or bytes, an Arrow string array "
       "(__arrow_c_array__ / __arrow_c_stream__), a NumPy string array or a StringTensor, got " +
       std::string(nb::type_name(data.type()).c_str()))
          .c_str());
}

StringTensor from_buffers(nb::handle offsets_obj, nb::handle payload_obj) {
  AnyArray offsets;
  AnyArray payload;
  if (!nb::try_cast(offsets_obj, offsets, false)) {
    throw nb::type_error(("from_buffers: offsets must be a 1-D integer array on the CPU (NumPy, "
                          "DLPack or buffer protocol), got " +
                          std::string(nb::type_name(offsets_obj.type()).c_str()))
                             .c_str());
  }
  if (!nb::try_cast(payload_obj, payload, false)) {
    throw nb::type_error(("from_buffers: payload must be a 1-D uint8 array or bytes-like object "
                          "on the CPU, got " +
                          std::string(nb::type_name(payload_obj.type()).c_str()))
                             .c_str());
  }
  const nb::dlpack::dtype odt = offsets.dtype();
  const bool integer = odt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) ||
                       odt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt);
  if (!integer || (odt.bits != 32 && odt.bits != 64) || odt.lanes != 1) {
    throw nb::type_error("from_buffers: offsets must be int32, uint32, int64 or uint64");
  }
  const nb::dlpack::dtype pdt = payload.dtype();
  if (pdt.bits != 8 || pdt.lanes != 1 ||
      (pdt.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) &&
       pdt.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int))) {
    throw nb::type_error("from_buffers: payload must be uint8 (or int8) bytes");
  }
  const std::size_t width = odt.bits / 8;
  if (offsets.shape(0) == 0) throw nb::value_error("from_buffers: offsets need n + 1 >= 1 entries");
  if (offsets.stride(0) != 1 || (payload.shape(0) > 1 && payload.stride(0) != 1)) {
    throw nb::value_error("from_buffers: offsets and payload must be contiguous");
  }
  // The ndarrays hold the producers' objects; dropping them takes the GIL (nanobind does that).
  auto offsets_owner = std::make_shared<AnyArray>(offsets);
  auto payload_owner = std::make_shared<AnyArray>(payload);
  ContiguousStrings c;
  c.width = width == 4 ? OffsetWidth::k32 : OffsetWidth::k64;
  c.size = offsets.shape(0) - 1;
  c.offsets = SharedBytes(offsets_owner, static_cast<const std::uint8_t*>(offsets.data()),
                          offsets.shape(0) * width);
  const auto* payload_data = static_cast<const std::uint8_t*>(payload.data());
  c.payload = SharedBytes(payload_owner, payload_data != nullptr ? payload_data : kEmptyBuffer,
                          payload.shape(0));
  if (reinterpret_cast<std::uintptr_t>(c.offsets.data()) % width != 0) {
    c.offsets = SharedBytes::copy_of(c.offsets.span());  // keep NumPy/DLPack exports aligned
  }
  nb::gil_scoped_release release;
  return StringTensor::from_contiguous(std::move(c));
}

}  // namespace

void def_string_tensor_construction(StringTensorClass& cls) {
  cls.def(
         "__init__",
         [](StringTensor* self, nb::handle data) {
           nb::handle type = nb::type<StringTensor>();
           new (self) StringTensor(coerce(data, type));
         },
         "data"_a.none() = nb::none(),
         nb::sig("def __init__(self, data: object = None, /) -> None"),
         "From a list/tuple/iterable of str or bytes (UTF-8 checked), an Arrow string array or "
         "stream (PyCapsule interface), a NumPy string array, or another StringTensor.")
      .def_static(
          "from_pylist", [](nb::handle items) { return from_sequence(items); }, "items"_a,
          nb::sig("def from_pylist(items: collections.abc.Sequence[str | bytes | bytearray | "
                  "memoryview]) -> StringTensor"),
          "From str (UTF-8) and bytes-like items (UTF-8 validated; the error names the index).")
      .def_static(
          "from_arrow",
          [](nb::handle obj) {
            if (!nb::hasattr(obj, "__arrow_c_array__") && !nb::hasattr(obj, "__arrow_c_stream__")) {
              throw nb::type_error(("from_arrow: expected an object with __arrow_c_array__ or "
                                    "__arrow_c_stream__, got " +
                                    std::string(nb::type_name(obj.type()).c_str()))
                                       .c_str());
            }
            return import_arrow_object(obj);
          },
          "obj"_a, nb::sig("def from_arrow(obj: object) -> StringTensor"),
          "From an Arrow utf8/large_utf8/utf8_view (or binary) array or chunked array; zero-copy "
          "for one chunk.")
      .def_static(
          "from_numpy",
          [](nb::handle arr) {
            return nb::cast<StringTensor>(
                string_tensor_interop("from_numpy")(nb::type<StringTensor>(), arr));
          },
          "array"_a, nb::sig("def from_numpy(array: object) -> StringTensor"),
          "From a 1-D NumPy array of str ('U', StringDType, object) or bytes ('S').")
      .def_static("from_buffers", &from_buffers, "offsets"_a, "payload"_a,
                  nb::sig("def from_buffers(offsets: object, payload: object) -> StringTensor"),
                  "Zero-copy from n + 1 offsets (int32/uint32/int64/uint64) and a UTF-8 payload "
                  "(uint8), as NumPy arrays, DLPack tensors or bytes-like objects; validated.")
      .def_static(
          "from_torch",
          [](nb::handle offsets, nb::handle payload) {
            return nb::cast<StringTensor>(
                string_tensor_interop("from_torch")(nb::type<StringTensor>(), offsets, payload));
          },
          "offsets"_a, "payload"_a,
          nb::sig("def from_torch(offsets: object, payload: object) -> StringTensor"),
          "From (offsets, payload) torch tensors; CUDA tensors are copied to the CPU first.")
      .def_static(
          "_from_utf32",
          [](nb::ndarray<nb::ro, const std::uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>
                 units,
             std::size_t width) {
            nb::gil_scoped_release release;
            return StringTensor::from_utf32({units.data(), units.shape(0)}, width);
          },
          "code_units"_a, "width"_a)
      .def_static(
          "_from_fixed_width",
          [](nb::ndarray<nb::ro, const std::uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>
                 bytes,
             std::size_t width) {
            nb::gil_scoped_release release;
            return StringTensor::from_fixed_width({bytes.data(), bytes.shape(0)}, width);
          },
          "data"_a, "width"_a)
      .def_static(
          "concat",
          [](nb::iterable tensors) {
            std::vector<StringTensor> parts;
            for (nb::handle t : tensors) {
              if (!nb::isinstance<StringTensor>(t)) {
                throw nb::type_error(("concat: expected StringTensor items, got " +
                                      std::string(nb::type_name(t.type()).c_str()))
                                         .c_str());
              }
              parts.push_back(nb::cast<const StringTensor&>(t));
            }
            nb::gil_scoped_release release;
            return StringTensor::concat(parts);
          },
          "tensors"_a,
          nb::sig("def concat(tensors: collections.abc.Iterable[StringTensor]) -> StringTensor"),
          "One tensor of all strings in order; views are copied, string bytes are shared.");
}

}  // namespace luminamoon::data::bindings
