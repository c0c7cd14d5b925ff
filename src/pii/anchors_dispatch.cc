// The anchor-kernel registry: one entry per ISA compiled into this build, chosen once per process
// by active_isa() through the common helper (common/internal/isa_dispatch.h). Compiled with
// default flags; it only takes the addresses of the ISA-specific functions and never calls one the
// CPU cannot run.
#include "common/internal/isa_dispatch.h"
#include "pii/internal/anchors.h"

namespace luminamoon::data::pii_internal {
namespace {

constexpr AnchorKernel kScalar{Isa::kScalar, anchor_masks_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr AnchorKernel kAvx2{Isa::kAvx2, anchor_masks_avx2};
constexpr AnchorKernel kAvx512{Isa::kAvx512, anchor_masks_avx512};
constexpr AnchorKernel kAvx512Vbmi{Isa::kAvx512, anchor_masks_avx512_vbmi};
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
constexpr AnchorKernel kNeon{Isa::kNeon, anchor_masks_neon};
#endif

constexpr internal::IsaKernels<AnchorKernel> kTables {
  .scalar = &kScalar,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx512,
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
  .neon = &kNeon,
#endif
};

}  // namespace

const AnchorKernel& anchor_kernel_for(Isa isa) {
  const AnchorKernel& kernel = internal::select_kernel(kTables, isa, "PIIMasker anchor kernel");
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  // The avx512 level with AVX512_VBMI: one table lookup per byte instead of two (same masks).
  if (&kernel == &kAvx512 && internal::avx512_extensions().vbmi) return kAvx512Vbmi;
#endif
  return kernel;
}

const AnchorKernel& active_anchor_kernel() {
  static const AnchorKernel& active = anchor_kernel_for(active_isa());
  return active;
}

}  // namespace luminamoon::data::pii_internal
