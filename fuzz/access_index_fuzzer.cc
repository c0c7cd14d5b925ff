// Fuzz target: the access-point index decoder (readers/internal/access_index.h), which reads a
// file from disk that anything may have written. Any input must decode without a crash, and what
// decodes must re-encode to exactly the bytes it was decoded from (no field is lost or invented),
// with every invariant the resume code relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "readers/internal/access_index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data::readers_internal;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string why;
  const auto index = decode_index(input, &why);
  if (!index) {
    if (why.empty()) std::abort();
    return 0;
  }
  std::string again = encode_index_header(index->header);
  for (const AccessPoint& p : index->points) {
    if (p.bits > 7 || p.window.size() > kDeflateWindowBytes) std::abort();
    if (p.newlines > p.uncompressed_offset) std::abort();
    again += encode_access_point(p);
  }
  if (again.size() != index->valid_bytes || input.substr(0, again.size()) != again) std::abort();
  return 0;
}
