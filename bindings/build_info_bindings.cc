// build_info(): the compiler and linked library versions of this native module.
#include <nanobind/stl/string.h>

#include "common.h"
#include "luminamoon/data/common/build_info.h"

namespace luminamoon::data::bindings {

void bind_build_info(nb::module_& m) {
  m.def(
      "build_info",
      [] {
        nb::dict out;
        for (const auto& [name, version] : luminamoon::data::build_info()) {
          out[nb::str(name.c_str())] = nb::str(version.c_str());
        }
        return out;
      },
      nb::sig("def build_info() -> dict[str, str]"),
      "What this backend is built from, for bug reports: 'compiler', 'cxx_standard' and the "
      "version of every linked library ('simdjson', 'abseil', 'utf8proc', 'xxhash', 'zstd', "
      "'zlib'). A library with a runtime version call reports the version loaded.");
}

}  // namespace luminamoon::data::bindings
