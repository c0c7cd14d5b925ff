// The UTF-8 validator registry (one table per ISA through common/internal/isa_dispatch.h) and the
// repair and counting helpers of common/internal/utf8.h.
#include "common/internal/utf8.h"

#include <cstring>

#include "common/internal/isa_dispatch.h"

namespace luminamoon::data::utf8_internal {
namespace {

constexpr Utf8Kernel kScalar{Isa::kScalar, utf8_valid_prefix_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr Utf8Kernel kAvx2{Isa::kAvx2, utf8_valid_prefix_avx2};
constexpr Utf8Kernel kAvx512{Isa::kAvx512, utf8_valid_prefix_avx512};
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
constexpr Utf8Kernel kNeon{Isa::kNeon, utf8_valid_prefix_neon};
#endif

constexpr internal::IsaKernels<Utf8Kernel> kTables {
  .scalar = &kScalar,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx512,
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
  .neon = &kNeon,
#endif
};

// Whether the 8 bytes at p are all ASCII.
inline bool ascii8(const std::uint8_t* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return (w & 0x8080808080808080ull) == 0;
}

}  // namespace

const Utf8Kernel& utf8_kernel_for(Isa isa) {
  return internal::select_kernel(kTables, isa, "UTF-8 validator");
}

const Utf8Kernel& active_utf8_kernel() {
  static const Utf8Kernel& active = utf8_kernel_for(active_isa());
  return active;
}

std::size_t valid_prefix(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  return active_utf8_kernel().valid_prefix(data, size);
}

std::size_t count_code_points(std::string_view bytes) noexcept {
  const auto* d = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t count = 0;
  std::size_t i = 0;
  while (i < n) {
    if (i + 8 <= n && ascii8(d + i)) {
      i += 8;
      count += 8;
      continue;
    }
    i += decode(d + i, n - i).length;
    ++count;
  }
  return count;
}

void append_repaired(std::string_view bytes, std::string& out) {
  const auto* d = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  std::size_t clean = 0;  // [clean, i) is valid and not yet copied
  while (i < n) {
    // Valid stretches go through the SIMD validator; only an ill-formed part is decoded here.
    i += valid_prefix(d + i, n - i);
    if (i == n) break;
    const Decoded bad = decode_multibyte(d + i, n - i);
    out.append(bytes.data() + clean, i - clean);
    out.append(kReplacementUtf8);
    i += bad.length;
    clean = i;
  }
  out.append(bytes.data() + clean, n - clean);
}

}  // namespace luminamoon::data::utf8_internal
