// StringTensor bindings, interop: the conversions to pyarrow/Polars/NumPy/torch objects, repr and
// pickling. They live in luminamoon/data/_string_tensor_interop.py, shared with the fallback so
// both backends behave the same; these methods delegate to it.
#include <nanobind/stl/string.h>

#include <string>

#include "string_tensor_bindings.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

nb::object string_tensor_interop(const char* name) {
  return nb::module_::import_("luminamoon.data._string_tensor_interop").attr(name);
}

void def_string_tensor_interop(StringTensorClass& cls) {
  cls.def(
         "to_arrow",
         [](nb::handle self, nb::handle type) {
           return string_tensor_interop("to_arrow")(self, type);
         },
         "type"_a.none() = nb::none(),
         nb::sig("def to_arrow(self, type: object = None) -> typing.Any"),
         "A pyarrow Array: utf8_view (default), 'utf8' or 'large_utf8'; zero-copy where the "
         "layout allows.")
      .def(
          "to_polars",
          [](nb::handle self, const std::string& name) {
            return string_tensor_interop("to_polars")(self, name);
          },
          "name"_a = "", nb::sig("def to_polars(self, name: str = '') -> typing.Any"),
          "A polars Series (String) sharing the views and data buffers.")
      .def(
          "to_numpy", [](nb::handle self) { return string_tensor_interop("to_numpy")(self); },
          nb::sig("def to_numpy(self) -> typing.Any"),
          "A NumPy array of str (StringDType; object on NumPy < 2). Copies.")
      .def(
          "to_torch",
          [](nb::handle self, nb::handle device) {
            return string_tensor_interop("to_torch")(self, device);
          },
          "device"_a = "cpu",
          nb::sig("def to_torch(self, device: object = 'cpu') -> tuple[typing.Any, typing.Any]"),
          "(offsets, payload) torch tensors (uint32/uint64 and uint8) through DLPack; on CPU "
          "they share memory, device='cuda' moves each buffer in one transfer.")
      .def(
          "__repr__", [](nb::handle self) { return string_tensor_interop("repr_of")(self); },
          nb::sig("def __repr__(self) -> str"))
      .def(
          "__reduce__", [](nb::handle self) { return string_tensor_interop("reduce")(self); },
          nb::sig("def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, ...]]"),
          "Pickle support: rebuilt with from_buffers from offsets + payload.");
}

}  // namespace luminamoon::data::bindings
