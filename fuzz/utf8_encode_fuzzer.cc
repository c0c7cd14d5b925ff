// Fuzz target: encode_utf8 over arbitrary code units (surrogates and values above U+10FFFF
// included). The first byte picks the width (1, 2 or 4 bytes a unit); the rest are the units, in
// host order, from an address that need not be aligned for them. Checks: every ISA kernel this
// CPU runs (internal/utf8_encode_kernels.h) writes, within utf8_encode_capacity bytes (an output
// of exactly that size, so AddressSanitizer sees any store past it), the bytes and the first
// invalid unit of the unit-by-unit reference (utf8_encode::reference_encode); a result with no
// invalid unit is valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/internal/utf8.h"
#include "common/internal/utf8_encode_kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/utf8_encode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  if (size == 0) return 0;
  static constexpr unsigned kWidths[] = {1, 2, 4};
  const unsigned width = kWidths[data[0] % 3];
  const std::size_t count = (size - 1) / width;
  const std::uint8_t* units = data + 1;  // (odd addresses: unaligned for 2 and 4)
  std::size_t first_invalid = 0;
  const std::string expected =
      internal::utf8_encode::reference_encode(units, count, width, first_invalid);
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
