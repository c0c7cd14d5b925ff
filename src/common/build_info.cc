// Versions of the compiler and of the linked third-party libraries, read from their version
// macros (compile time) and, where a library has one, its runtime version call.
#include "luminamoon/data/common/build_info.h"

#include <absl/base/config.h>
#include <simdjson.h>
#include <utf8proc.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include <string_view>

namespace luminamoon::data {
namespace {

#define LUMINAMOON_STR_(x) #x
#define LUMINAMOON_STR(x) LUMINAMOON_STR_(x)

// "runtime" alone when it equals the version the headers declared, else both.
std::string loaded_version(std::string_view runtime, std::string_view built) {
  std::string out(runtime);
  if (runtime != built) {
    out += " (built against ";
    out += built;
    out += ')';
  }
  return out;
}

std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "unknown";
#endif
}

std::string abseil() {
#if defined(ABSL_LTS_RELEASE_VERSION)
  std::string out = std::to_string(ABSL_LTS_RELEASE_VERSION);
#if defined(ABSL_LTS_RELEASE_PATCH_LEVEL)
  out += '.';
  out += std::to_string(ABSL_LTS_RELEASE_PATCH_LEVEL);
#endif
  return out + " (LTS)";
#else
  return "head (not an LTS release)";
#endif
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_info() {
  const std::string utf8proc_built = std::to_string(UTF8PROC_VERSION_MAJOR) + "." +
                                     std::to_string(UTF8PROC_VERSION_MINOR) + "." +
                                     std::to_string(UTF8PROC_VERSION_PATCH);
  return {
      {"compiler", compiler()},
      {"cxx_standard", std::to_string(__cplusplus)},
      {"simdjson", LUMINAMOON_STR(SIMDJSON_VERSION)},
      {"abseil", abseil()},
      {"utf8proc", loaded_version(utf8proc_version(), utf8proc_built)},
      {"xxhash", std::to_string(XXH_VERSION_MAJOR) + "." + std::to_string(XXH_VERSION_MINOR) + "." +
                     std::to_string(XXH_VERSION_RELEASE)},
      {"zstd", loaded_version(ZSTD_versionString(), ZSTD_VERSION_STRING)},
      {"zlib", loaded_version(zlibVersion(), ZLIB_VERSION)},
  };
}

}  // namespace luminamoon::data
