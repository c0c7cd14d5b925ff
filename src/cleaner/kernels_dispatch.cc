// The kernel registry: one table per ISA compiled into this build, chosen once per process by
// active_isa() (CPUID probe or LUMINAMOON_SIMD). Compiled with default flags; it only takes the
// addresses of the ISA-specific functions, and never calls one the CPU cannot run.
#include <string>

#include "cleaner/internal/kernels.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data::cleaner_internal {
namespace {

constexpr Kernels kScalar{Isa::kScalar, utf8_valid_prefix_scalar, clean_prefix_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr Kernels kAvx2{Isa::kAvx2, utf8_valid_prefix_avx2, clean_prefix_avx2};
constexpr Kernels kAvx512{Isa::kAvx512, utf8_valid_prefix_avx512, clean_prefix_avx512};
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
constexpr Kernels kNeon{Isa::kNeon, utf8_valid_prefix_neon, clean_prefix_neon};
#endif

const Kernels* table_for(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return &kScalar;
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
    case Isa::kAvx2:
      return &kAvx2;
    case Isa::kAvx512:
      return &kAvx512;
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
    case Isa::kNeon:
      return &kNeon;
#endif
    default:
      return nullptr;
  }
}

}  // namespace

const Kernels& kernels_for(Isa isa) {
  const Kernels* kernels = table_for(isa);
  if (kernels == nullptr || !isa_supported(isa)) {
    throw InvalidArgument("TextCleaner kernels: instruction set '" + std::string(isa_name(isa)) +
                          "' is not supported by this CPU or build (check isa_supported first)");
  }
  return *kernels;
}

const Kernels& active_kernels() {
  static const Kernels& active = kernels_for(active_isa());
  return active;
}

}  // namespace luminamoon::data::cleaner_internal
