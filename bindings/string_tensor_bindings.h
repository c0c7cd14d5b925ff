// Private to the StringTensor bindings: the pieces shared by the files that bind one concern
// each (string_tensor_bindings.cc: the class and its sequence protocol; string_tensor_import.cc:
// construction and import; string_tensor_export.cc: NumPy views and Arrow export;
// string_tensor_interop.cc: the conversions delegated to
// luminamoon/data/_string_tensor_interop.py). Methods are added in one fixed order (see
// bind_string_tensor), which the generated stub follows.
#pragma once

#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>

#include "common.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data::bindings {

using StringTensorClass = nb::class_<StringTensor>;

// A 1-D array from NumPy/DLPack/the buffer protocol.
using AnyArray = nb::ndarray<nb::ro, nb::ndim<1>, nb::device::cpu>;

// Stands in for the data pointer of an empty buffer (NumPy and Arrow want a non-null one).
alignas(64) inline constexpr std::uint8_t kEmptyBuffer[64] = {};

// An attribute of luminamoon.data._string_tensor_interop (imported on first use).
nb::object string_tensor_interop(const char* name);

// The pointer in a PyCapsule named `name`; TypeError naming `what` otherwise.
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

// Each adds one group of methods to the class, in this order.
void def_string_tensor_construction(StringTensorClass& cls);  // __init__, from_*, concat
void def_string_tensor_export(StringTensorClass& cls);        // views, buffers, Arrow export
void def_string_tensor_interop(StringTensorClass& cls);       // to_arrow/polars/numpy/torch, ...

}  // namespace luminamoon::data::bindings
