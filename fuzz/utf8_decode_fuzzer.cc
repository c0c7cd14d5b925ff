// Fuzz target: utf8_shape, copy_ascii_prefix and decode_utf8 (how the bindings make a str of
// UTF-8) over arbitrary bytes. Checks: copy_ascii_prefix copies exactly the ASCII bytes that begin
// the input; decode_utf8 never writes past the capacity it is given (an output of exactly
// code_points units of the shape's width, so AddressSanitizer sees any store past it) nor reads
// past the input, whatever the bytes; and for valid UTF-8 the shape is the narrowest form of the
// code points CPython's reading gives (utf8_internal::for_each_code_point) and decode_utf8
// writes exactly them. The Latin-1 and UCS-2 kernels of every ISA this CPU runs are held to the
// same, on any bytes with the shape's code points as their capacity.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "common/internal/utf8.h"
#include "common/internal/utf8_decode_kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/utf8_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto copy = std::make_unique<char[]>(size + 1);
  const std::size_t ascii = copy_ascii_prefix(text, copy.get());
  std::size_t expected_ascii = 0;
  while (expected_ascii < size && data[expected_ascii] < 0x80) ++expected_ascii;
  if (ascii > expected_ascii || (expected_ascii == size && ascii != size) ||
      (ascii < expected_ascii && expected_ascii - ascii >= 32) ||
      (ascii != 0 && std::memcmp(copy.get(), data, ascii) != 0)) {
    std::abort();
  }
  const Utf8Shape shape = utf8_shape(text);
  const auto out = std::make_unique<std::byte[]>(shape.code_points * shape.width + 1);
  decode_utf8(text, shape.width, out.get(), shape.code_points);
  const bool valid = utf8_internal::is_valid(text);
  for (const Isa isa : supported_isas()) {
    // (an allocation of exactly the capacity: AddressSanitizer sees a store past it)
    const auto latin1 = std::make_unique<std::uint8_t[]>(shape.code_points);
    internal::utf8_decode_kernel_for(isa).latin1(data, size, latin1.get(), shape.code_points);
    if (valid && shape.width == 1 && std::memcmp(latin1.get(), out.get(), shape.code_points) != 0) {
      std::abort();
    }
    const auto ucs2 = std::make_unique<std::uint16_t[]>(shape.code_points);
    internal::utf8_decode_kernel_for(isa).ucs2(data, size, ucs2.get(), shape.code_points);
    if (valid && shape.width == 2 &&
        std::memcmp(ucs2.get(), out.get(), shape.code_points * 2) != 0) {
      std::abort();
    }
  }
  if (!valid) return 0;
  std::vector<std::uint32_t> points;
  utf8_internal::for_each_code_point(
      text, [&](char32_t c, std::size_t, std::size_t) { points.push_back(c); });
  std::uint32_t top = 0;
  for (const std::uint32_t c : points) top = c > top ? c : top;
  const unsigned width = top < 0x100 ? 1 : top < 0x10000 ? 2 : 4;
  if (shape.code_points != points.size() || shape.width != width || shape.ascii != (top < 0x80)) {
    std::abort();
  }
  for (std::size_t k = 0; k < points.size(); ++k) {
    std::uint32_t unit = 0;
    if (width == 1) unit = std::to_integer<std::uint32_t>(out[k]);
    if (width == 2) {
      std::uint16_t u = 0;
      std::memcpy(&u, out.get() + 2 * k, 2);
      unit = u;
    }
    if (width == 4) std::memcpy(&unit, out.get() + 4 * k, 4);
    if (unit != points[k]) std::abort();
  }
  return 0;
}
