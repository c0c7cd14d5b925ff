// Fuzz target: StreamCoordinate::from_bytes. Any input must decode (32 bytes) and round-trip, or
// raise InvalidArgument; nothing else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "luminamoon/data/checkpoint/stream_coordinate.h"
#include "luminamoon/data/common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using luminamoon::data::StreamCoordinate;
  try {
    const StreamCoordinate c = StreamCoordinate::from_bytes({data, size});
    const auto bytes = c.to_bytes();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] != data[i]) std::abort();  // decode/encode must be the identity
    }
  } catch (const luminamoon::data::InvalidArgument&) {
    if (size == StreamCoordinate::kEncodedSize) std::abort();
  }
  return 0;
}
