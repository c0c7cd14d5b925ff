// Python bindings of StringTensor: the class, its iterator and its sequence protocol (len,
// indexing, slicing, take/filter, equality). Construction and import, export (NumPy views, Arrow
// PyCapsules) and the Python-side interop live in the string_tensor_*.cc files next to this one
// (string_tensor_bindings.h). Heavy copies run with the GIL released.
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "string_tensor_bindings.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

nb::str decode(std::string_view s) {
  // Valid UTF-8 (the tensor's invariant, checked on construction): this cannot fail.
  PyObject* str = new_str_from_utf8(s, true);
  if (str == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(str);
}

// Whether `obj` is a 1-D array of integers or bools from NumPy/DLPack/the buffer protocol.
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
  def_string_tensor_construction(cls);
  cls.def("__len__", &StringTensor::size)
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
                   "exports then copy no string bytes).");
  def_string_tensor_export(cls);
  def_string_tensor_interop(cls);
  // Unhashable like NumPy and pyarrow arrays: == compares contents. A __hash__ that raises (rather
  // than __hash__ = None) keeps the generated stub valid for mypy.
  cls.def(
      "__hash__",
      [](nb::handle) -> Py_ssize_t { throw nb::type_error("unhashable type: 'StringTensor'"); },
      nb::sig("def __hash__(self) -> int"));
}

}  // namespace luminamoon::data::bindings
