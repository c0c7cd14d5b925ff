// The anchor-kernel registry: one entry per ISA compiled into this build, chosen once per process
// by active_isa() (CPUID probe or LUMINAMOON_SIMD). Compiled with default flags; it only takes the
// addresses of the ISA-specific functions and never calls one the CPU cannot run.
#include <string>

#include "luminamoon/data/common/error.h"
#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {
namespace {

constexpr AnchorKernel kScalar{Isa::kScalar, anchor_masks_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr AnchorKernel kAvx2{Isa::kAvx2, anchor_masks_avx2};
constexpr AnchorKernel kAvx512{Isa::kAvx512, anchor_masks_avx512};
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
constexpr AnchorKernel kNeon{Isa::kNeon, anchor_masks_neon};
#endif

const AnchorKernel* table_for(Isa isa) {
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

const AnchorKernel& anchor_kernel_for(Isa isa) {
  const AnchorKernel* kernel = table_for(isa);
  if (kernel == nullptr || !isa_supported(isa)) {
    throw InvalidArgument("PIIMasker anchor kernel: instruction set '" +
                          std::string(isa_name(isa)) +
                          "' is not supported by this CPU or build (check isa_supported first)");
  }
  return *kernel;
}

const AnchorKernel& active_anchor_kernel() {
  static const AnchorKernel& active = anchor_kernel_for(active_isa());
  return active;
}

}  // namespace luminamoon::data::pii_internal
