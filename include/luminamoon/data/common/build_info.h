// What this build of the engine is made of: the compiler and the version of every third-party
// library it links (statically or dynamically), for `luminamoon-data info` and bug reports.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace luminamoon::data {

// (name, version) pairs in a fixed order: "compiler", "cxx_standard", then the libraries
// "simdjson", "abseil", "utf8proc", "xxhash", "zstd", "zlib". A library with a runtime version
// call (utf8proc, zstd, zlib) reports the version actually loaded; when it differs from the
// headers the build saw, both are given ("1.3 (built against 1.2.13)"). The others are
// compile-time versions: header-only or linked into the same binary.
std::vector<std::pair<std::string, std::string>> build_info();

}  // namespace luminamoon::data
