#include "luminamoon/data/common/build_info.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <regex>
#include <string>
#include <vector>

namespace luminamoon::data {
namespace {

TEST(BuildInfo, ListsCompilerAndEveryLinkedLibraryInOrder) {
  const auto info = build_info();
  std::vector<std::string> names;
  for (const auto& [name, version] : info) {
    names.push_back(name);
    EXPECT_FALSE(version.empty()) << name;
  }
  const std::vector<std::string> expected = {"compiler", "cxx_standard", "simdjson", "abseil",
                                             "utf8proc", "xxhash",       "zstd",     "zlib"};
  EXPECT_EQ(names, expected);
}

TEST(BuildInfo, LibraryVersionsAreDottedNumbers) {
  // "1.2.13", "20220623.1 (LTS)", "1.3 (built against 1.2.13)": a dotted number first.
  const std::regex dotted(R"(^[0-9]+(\.[0-9]+)+( .*)?$)");
  for (const auto& [name, version] : build_info()) {
    if (name == "compiler") continue;
    if (name == "cxx_standard") {
      EXPECT_GE(std::stol(version), 202002L) << "C++20 or later";
      continue;
    }
    EXPECT_TRUE(std::regex_match(version, dotted)) << name << ": " << version;
  }
}

TEST(BuildInfo, ZlibReportsTheLoadedLibrary) {
  for (const auto& [name, version] : build_info()) {
    if (name != "zlib") continue;
    const std::string loaded = zlibVersion();
    EXPECT_EQ(version.substr(0, loaded.size()), loaded);
    EXPECT_EQ(version == loaded, loaded == ZLIB_VERSION);
  }
}

}  // namespace
}  // namespace luminamoon::data
