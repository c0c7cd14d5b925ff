// Fuzz target: encode_utf8 over arbitrary code units (surrogates and values above U+10FFFF
// included). The first byte picks the width (1, 2 or 4 bytes a unit); the rest are the units, in
// host order, from an address that need not be aligned for them. Checks: every ISA kernel this
// CPU runs (internal/utf8_encode_kernels.h) writes, within utf8_encode_capacity bytes (an output
// of exactly that size, so AddressSanitizer sees any store past it), the bytes and the first
// invalid unit of a unit-by-unit reference; a result with no invalid unit is valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "common/internal/utf8.h"
#include "common/internal/utf8_encode_kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/utf8_encode.h"

namespace {

using namespace luminamoon::data;

std::uint32_t unit_at(const std::uint8_t* units, std::size_t k, unsigned width) {
  std::uint32_t c = 0;
  if (width == 1) return units[k];
  if (width == 2) {
    std::uint16_t u;
    std::memcpy(&u, units + 2 * k, 2);
    return u;
  }
  std::memcpy(&c, units + 4 * k, 4);
  return c;
}

// Unit by unit: a surrogate in its 3-byte form, a value above U+10FFFF as U+FFFD.
std::string reference(const std::uint8_t* units, std::size_t count, unsigned width,
                      std::size_t& first_invalid) {
  std::string out;
  first_invalid = Utf8Encoded::npos;
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t c = unit_at(units, k, width);
    const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
    if ((surrogate || c > 0x10FFFF) && first_invalid == Utf8Encoded::npos) first_invalid = k;
    std::uint8_t bytes[4];
    std::size_t length = 0;
    if (surrogate) {
      bytes[0] = static_cast<std::uint8_t>(0xE0 | (c >> 12));
      bytes[1] = static_cast<std::uint8_t>(0x80 | ((c >> 6) & 0x3F));
      bytes[2] = static_cast<std::uint8_t>(0x80 | (c & 0x3F));
      length = 3;
    } else {
      length = utf8_internal::encode(c > 0x10FFFF ? 0xFFFD : c, bytes);
    }
    out.append(reinterpret_cast<const char*>(bytes), length);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr unsigned kWidths[] = {1, 2, 4};
  const unsigned width = kWidths[data[0] % 3];
  const std::size_t count = (size - 1) / width;
  const std::uint8_t* units = data + 1;  // (odd addresses: unaligned for 2 and 4)
  std::size_t first_invalid = 0;
  const std::string expected = reference(units, count, width, first_invalid);
  const std::size_t capacity = utf8_encode_capacity(count, width);
  for (const Isa isa : supported_isas()) {
    const internal::Utf8EncodeKernel& kernel = internal::utf8_encode_kernel_for(isa);
    const internal::Utf8EncodeFn fn = width == 1   ? kernel.latin1
                                      : width == 2 ? kernel.ucs2
                                                   : kernel.utf32;
    const auto out = std::make_unique<char[]>(capacity + 1);  // (+1: never 0 bytes)
    const Utf8Encoded r = fn(units, count, out.get());
    if (r.size > capacity || std::string(out.get(), r.size) != expected) std::abort();
    if (r.first_invalid != first_invalid) std::abort();
  }
  if (first_invalid == Utf8Encoded::npos && !utf8_internal::is_valid(expected)) std::abort();
  return 0;
}
