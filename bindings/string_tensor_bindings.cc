// Python bindings of StringTensor: the Arrow PyCapsule interface (export and import), NumPy
// arrays over the tensor's own buffers (zero-copy, read-only, DLPack-capable), and conversion
// of Python inputs. Heavy copies and validation run with the GIL released. The conversions to
// pyarrow/Polars/NumPy/torch objects live in luminamoon/data/_string_tensor_interop.py, shared
// with the fallback so both backends behave the same.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "luminamoon/data/string_tensor/arrow_bridge.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

constexpr const char* kInterop = "luminamoon.data._string_tensor_interop";

nb::object interop(const char* name) { return nb::module_::import_(kInterop).attr(name); }

alignas(64) constexpr std::uint8_t kEmpty[64] = {};

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
  const void* p = data != nullptr ? data : kEmpty;
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

nb::str decode(std::string_view s) {
  // Valid UTF-8 by construction: this cannot fail.
  PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (str == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(str);
}

template <typename T>
T* capsule_pointer(nb::handle capsule, const char* name, const char* what) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (p == nullptr) {
    PyErr_Clear();
    throw nb::type_error(
        (std::string(what) + ": expected a PyCapsule named '" + name + "'").c_str());
  }
  return static_cast<T*>(p);
}

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
    return nb::cast<const StringTensor&>(interop("from_numpy")(cls, data));
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

// A 1-D array of integers or bools from NumPy/DLPack/the buffer protocol, if `obj` is one.
using AnyArray = nb::ndarray<nb::ro, nb::ndim<1>, nb::device::cpu>;

bool as_array(nb::handle obj, AnyArray& out) {
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) return false;
  return nb::try_cast(obj, out, false);
}

template <typename T>
void append_as_u64(const AnyArray& a, std::vector<std::uint64_t>& out) {
  const auto* p = static_cast<const T*>(a.data());
  const std::int64_t stride = a.stride(0);
  for (std::size_t i = 0; i < a.shape(0); ++i) {
    const T v = p[static_cast<std::int64_t>(i) * stride];
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) {
        throw nb::index_error(("take: indices[" + std::to_string(i) + "] = " + std::to_string(v) +
                               " is negative; indices count from 0")
                                  .c_str());
      }
    }
    out.push_back(static_cast<std::uint64_t>(v));
  }
}

std::vector<std::uint64_t> to_indices(nb::handle obj) {
  std::vector<std::uint64_t> out;
  AnyArray a;
  if (as_array(obj, a)) {
    const nb::dlpack::dtype dt = a.dtype();
    if (dt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int)) {
      switch (dt.bits) {
        case 8:
          append_as_u64<std::int8_t>(a, out);
          return out;
        case 16:
          append_as_u64<std::int16_t>(a, out);
          return out;
        case 32:
          append_as_u64<std::int32_t>(a, out);
          return out;
        case 64:
          append_as_u64<std::int64_t>(a, out);
          return out;
        default:
          break;
      }
    } else if (dt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt)) {
      switch (dt.bits) {
        case 8:
          append_as_u64<std::uint8_t>(a, out);
          return out;
        case 16:
          append_as_u64<std::uint16_t>(a, out);
          return out;
        case 32:
          append_as_u64<std::uint32_t>(a, out);
          return out;
        case 64:
          append_as_u64<std::uint64_t>(a, out);
          return out;
        default:
          break;
      }
    }
    throw nb::type_error("take: indices must be integers (use filter() for a boolean mask)");
  }
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) {
    throw nb::type_error(("take: expected a sequence or array of int, got " +
                          std::string(nb::type_name(obj.type()).c_str()))
                             .c_str());
  }
  nb::tuple items = nb::steal<nb::tuple>(PySequence_Tuple(obj.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  out.reserve(nb::len(items));
  for (std::size_t i = 0; i < nb::len(items); ++i) {
    nb::handle item = items[i];
    if (!PyLong_Check(item.ptr()) || PyBool_Check(item.ptr())) {
      throw nb::type_error(("take: indices[" + std::to_string(i) + "] must be an int, got " +
                            std::string(nb::type_name(item.type()).c_str()))
                               .c_str());
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    if (overflow != 0 || v < 0) {
      throw nb::index_error(("take: indices[" + std::to_string(i) +
                             "] = " + std::string(nb::repr(item).c_str()) +
                             " is out of range (indices count from 0)")
                                .c_str());
    }
    out.push_back(static_cast<std::uint64_t>(v));
  }
  return out;
}

std::vector<std::uint8_t> to_mask(nb::handle obj) {
  std::vector<std::uint8_t> out;
  AnyArray a;
  if (as_array(obj, a)) {
    if (a.dtype() != nb::dtype<bool>()) {
      throw nb::type_error("filter: the mask must be booleans (use take() for indices)");
    }
    const auto* p = static_cast<const std::uint8_t*>(a.data());
    out.reserve(a.shape(0));
    for (std::size_t i = 0; i < a.shape(0); ++i) {
      out.push_back(p[static_cast<std::int64_t>(i) * a.stride(0)] != 0 ? 1 : 0);
    }
    return out;
  }
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) {
    throw nb::type_error(("filter: expected a sequence or array of bool, got " +
                          std::string(nb::type_name(obj.type()).c_str()))
                             .c_str());
  }
  nb::tuple items = nb::steal<nb::tuple>(PySequence_Tuple(obj.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  out.reserve(nb::len(items));
  for (std::size_t i = 0; i < nb::len(items); ++i) {
    nb::handle item = items[i];
    if (item.ptr() == Py_True) {
      out.push_back(1);
    } else if (item.ptr() == Py_False) {
      out.push_back(0);
    } else {
      throw nb::type_error(("filter: mask[" + std::to_string(i) + "] must be a bool, got " +
                            std::string(nb::type_name(item.type()).c_str()))
                               .c_str());
    }
  }
  return out;
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
  c.payload =
      SharedBytes(payload_owner, payload_data != nullptr ? payload_data : kEmpty, payload.shape(0));
  if (reinterpret_cast<std::uintptr_t>(c.offsets.data()) % width != 0) {
    c.offsets = SharedBytes::copy_of(c.offsets.span());  // keep NumPy/DLPack exports aligned
  }
  nb::gil_scoped_release release;
  return StringTensor::from_contiguous(std::move(c));
}

struct StringTensorIterator {
  StringTensor tensor;
  std::size_t next = 0;
};

std::size_t normalize_index(const StringTensor& t, nb::handle key) {
  PyObject* index = PyNumber_Index(key.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw nb::type_error(("StringTensor indices must be integers or slices, not " +
                          std::string(nb::type_name(key.type()).c_str()))
                             .c_str());
  }
  const Py_ssize_t i = PyLong_AsSsize_t(index);
  Py_DECREF(index);
  if (i == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::index_error("StringTensor index out of range");
  }
  const auto n = static_cast<Py_ssize_t>(t.size());
  const Py_ssize_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n) {
    throw nb::index_error(("StringTensor index " + std::to_string(i) + " out of range for length " +
                           std::to_string(n))
                              .c_str());
  }
  return static_cast<std::size_t>(j);
}

}  // namespace

void bind_string_tensor(nb::module_& m) {
  nb::class_<StringTensorIterator>(m, "_StringTensorIterator")
      .def("__iter__", [](nb::handle self) { return self; })
      .def(
          "__next__",
          [](StringTensorIterator& it) {
            if (it.next >= it.tensor.size()) throw nb::stop_iteration();
            return decode(it.tensor[it.next++]);
          },
          nb::sig("def __next__(self) -> str"));

  auto cls = nb::class_<StringTensor>(
      m, "StringTensor",
      "Immutable UTF-8 strings: Arrow utf8_view on CPU, offsets + payload for GPU/Arrow.");
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
            return nb::cast<StringTensor>(interop("from_numpy")(nb::type<StringTensor>(), arr));
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
                interop("from_torch")(nb::type<StringTensor>(), offsets, payload));
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
          "One tensor of all strings in order; views are copied, string bytes are shared.")
      .def("__len__", &StringTensor::size)
      .def(
          "__getitem__",
          [](const StringTensor& t, nb::handle key) -> nb::object {
            if (PySlice_Check(key.ptr())) {
              Py_ssize_t start = 0, stop = 0, step = 0;
              if (PySlice_Unpack(key.ptr(), &start, &stop, &step) != 0) throw nb::python_error();
              const Py_ssize_t count =
                  PySlice_AdjustIndices(static_cast<Py_ssize_t>(t.size()), &start, &stop, step);
              if (step == 1) {
                return nb::cast(
                    t.slice(static_cast<std::size_t>(start), static_cast<std::size_t>(count)));
              }
              std::vector<std::uint64_t> indices(static_cast<std::size_t>(count));
              for (Py_ssize_t k = 0; k < count; ++k) {
                indices[static_cast<std::size_t>(k)] = static_cast<std::uint64_t>(start + k * step);
              }
              StringTensor taken;
              {
                nb::gil_scoped_release release;
                taken = t.take(indices);
              }
              return nb::cast(std::move(taken));
            }
            return decode(t[normalize_index(t, key)]);
          },
          "key"_a,
          nb::sig("def __getitem__(self, key: typing.SupportsIndex | slice) -> str | StringTensor"),
          "An int gives a str; a slice gives a StringTensor (step 1: a view sharing all memory; "
          "other steps: gathered views, shared bytes).")
      .def(
          "__iter__",
          [](const StringTensor& t) {
            return StringTensorIterator{t, 0};
          },
          nb::sig("def __iter__(self) -> collections.abc.Iterator[str]"))
      .def(
          "to_pylist",
          [](const StringTensor& t) {
            PyObject* list = PyList_New(static_cast<Py_ssize_t>(t.size()));
            if (list == nullptr) throw nb::python_error();
            nb::list result = nb::steal<nb::list>(list);
            for (std::size_t i = 0; i < t.size(); ++i) {
              PyList_SetItem(list, static_cast<Py_ssize_t>(i), decode(t[i]).release().ptr());
            }
            return result;
          },
          nb::sig("def to_pylist(self) -> list[str]"), "Every string as a Python str.")
      .def(
          "take",
          [](const StringTensor& t, nb::handle indices) {
            const std::vector<std::uint64_t> idx = to_indices(indices);
            nb::gil_scoped_release release;
            return t.take(idx);
          },
          "indices"_a,
          nb::sig("def take(self, indices: collections.abc.Sequence[int] | typing.Any) -> "
                  "StringTensor"),
          "Strings at `indices` (0 <= i < len; IndexError otherwise); bytes are shared.")
      .def(
          "filter",
          [](const StringTensor& t, nb::handle mask) {
            const std::vector<std::uint8_t> keep = to_mask(mask);
            nb::gil_scoped_release release;
            return t.filter(keep);
          },
          "mask"_a,
          nb::sig("def filter(self, mask: collections.abc.Sequence[bool] | typing.Any) -> "
                  "StringTensor"),
          "Strings whose mask entry is True (mask of the same length); bytes are shared.")
      .def(
          "__eq__",
          [](const StringTensor& a, nb::handle b) -> nb::object {
            if (!nb::isinstance<StringTensor>(b)) return nb::borrow(Py_NotImplemented);
            const StringTensor& other = nb::cast<const StringTensor&>(b);
            bool equal;
            {
              nb::gil_scoped_release release;
              equal = a.equals(other);
            }
            return nb::bool_(equal);
          },
          "other"_a, nb::sig("def __eq__(self, other: object) -> bool"))
      .def(
          "__ne__",
          [](const StringTensor& a, nb::handle b) -> nb::object {
            if (!nb::isinstance<StringTensor>(b)) return nb::borrow(Py_NotImplemented);
            return nb::bool_(!a.equals(nb::cast<const StringTensor&>(b)));
          },
          "other"_a, nb::sig("def __ne__(self, other: object) -> bool"))
      .def_prop_ro("nbytes", &StringTensor::nbytes,
                   "Bytes referenced: 16 per view, every data buffer in full (shared with "
                   "slices), and the kept offsets.")
      .def_prop_ro("is_contiguous", &StringTensor::has_contiguous,
                   "Whether offsets + payload are kept (offsets_and_payload, to_torch and utf8 "
                   "exports then copy no string bytes).")
      .def_prop_ro(
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
           "Arrow PyCapsule stream of one array (same types as __arrow_c_array__).")
      .def(
          "to_arrow",
          [](nb::handle self, nb::handle type) { return interop("to_arrow")(self, type); },
          "type"_a.none() = nb::none(),
          nb::sig("def to_arrow(self, type: object = None) -> typing.Any"),
          "A pyarrow Array: utf8_view (default), 'utf8' or 'large_utf8'; zero-copy where the "
          "layout allows.")
      .def(
          "to_polars",
          [](nb::handle self, const std::string& name) { return interop("to_polars")(self, name); },
          "name"_a = "", nb::sig("def to_polars(self, name: str = '') -> typing.Any"),
          "A polars Series (String) sharing the views and data buffers.")
      .def(
          "to_numpy", [](nb::handle self) { return interop("to_numpy")(self); },
          nb::sig("def to_numpy(self) -> typing.Any"),
          "A NumPy array of str (StringDType; object on NumPy < 2). Copies.")
      .def(
          "to_torch",
          [](nb::handle self, nb::handle device) { return interop("to_torch")(self, device); },
          "device"_a = "cpu",
          nb::sig("def to_torch(self, device: object = 'cpu') -> tuple[typing.Any, typing.Any]"),
          "(offsets, payload) torch tensors (uint32/uint64 and uint8) through DLPack; on CPU "
          "they share memory, device='cuda' moves each buffer in one transfer.")
      .def(
          "__repr__", [](nb::handle self) { return interop("repr_of")(self); },
          nb::sig("def __repr__(self) -> str"))
      .def(
          "__reduce__", [](nb::handle self) { return interop("reduce")(self); },
          nb::sig("def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, ...]]"),
          "Pickle support: rebuilt with from_buffers from offsets + payload.");
  // Unhashable like NumPy and pyarrow arrays: == compares contents. A __hash__ that raises (rather
  // than __hash__ = None) keeps the generated stub valid for mypy.
  cls.def(
      "__hash__",
      [](nb::handle) -> Py_ssize_t { throw nb::type_error("unhashable type: 'StringTensor'"); },
      nb::sig("def __hash__(self) -> int"));
}

}  // namespace luminamoon::data::bindings
