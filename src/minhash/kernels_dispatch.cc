// The MinHash kernel registry: chosen once per process by active_isa() (CPUID probe or
// LUMINAMOON_SIMD). Compiled with default flags; it only takes addresses of ISA-specific code.
//
// Two mappings are not one-to-one: Isa::kAvx512 runs the AVX2 kernel on a CPU without AVX-512DQ
// (no such CPU with AVX-512BW is known, but the probe does not guarantee DQ), and Isa::kNeon runs
// the scalar kernel (AArch64 has no 64-bit lane multiply; the compiler's scalar code is used).
#include <string>

#include "luminamoon/data/common/error.h"
#include "minhash/internal/kernels.h"

namespace luminamoon::data::minhash_internal {
namespace {

constexpr MinHashKernel kScalar{Isa::kScalar, minhash_update_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr MinHashKernel kAvx2{Isa::kAvx2, minhash_update_avx2};
constexpr MinHashKernel kAvx512{Isa::kAvx512, minhash_update_avx512};
#endif

}  // namespace

bool cpu_has_avx512dq() noexcept {
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  static const bool dq = __builtin_cpu_supports("avx512dq") != 0;
  return dq;
#else
  return false;
#endif
}

const MinHashKernel& minhash_kernel_for(Isa isa) {
  if (!isa_supported(isa)) {
    throw InvalidArgument("MinHash kernels: instruction set '" + std::string(isa_name(isa)) +
                          "' is not supported by this CPU or build (check isa_supported first)");
  }
  switch (isa) {
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
    case Isa::kAvx2:
      return kAvx2;
    case Isa::kAvx512:
      return cpu_has_avx512dq() ? kAvx512 : kAvx2;
#endif
    default:
      return kScalar;
  }
}

const MinHashKernel& active_minhash_kernel() {
  static const MinHashKernel& active = minhash_kernel_for(active_isa());
  return active;
}

}  // namespace luminamoon::data::minhash_internal
