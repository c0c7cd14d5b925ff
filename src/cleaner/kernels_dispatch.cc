// The kernel registry: one table per ISA compiled into this build, chosen once per process by
// active_isa() through the common helper (common/internal/isa_dispatch.h). Compiled with default
// flags; it only takes the addresses of the ISA-specific functions, and never calls one the CPU
// cannot run. The UTF-8 validator in each table is the common one of the same ISA
// (common/internal/utf8.h), so the fused pass validates and classifies with one ISA.
#include "cleaner/internal/kernels.h"
#include "common/internal/isa_dispatch.h"
#include "common/internal/utf8.h"

namespace luminamoon::data::cleaner_internal {
namespace {

using utf8_internal::utf8_valid_prefix_scalar;
constexpr Kernels kScalar{Isa::kScalar, utf8_valid_prefix_scalar, clean_prefix_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
using utf8_internal::utf8_valid_prefix_avx2;
using utf8_internal::utf8_valid_prefix_avx512;
constexpr Kernels kAvx2{Isa::kAvx2, utf8_valid_prefix_avx2, clean_prefix_avx2};
constexpr Kernels kAvx512{Isa::kAvx512, utf8_valid_prefix_avx512, clean_prefix_avx512};
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
using utf8_internal::utf8_valid_prefix_neon;
constexpr Kernels kNeon{Isa::kNeon, utf8_valid_prefix_neon, clean_prefix_neon};
#endif

constexpr internal::IsaKernels<Kernels> kTables {
  .scalar = &kScalar,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx512,
#endif
#if defined(LUMINAMOON_HAVE_NEON_KERNELS)
  .neon = &kNeon,
#endif
};

constexpr std::string_view kComponent = "TextCleaner kernels";

}  // namespace

const Kernels& kernels_for(Isa isa) { return internal::select_kernel(kTables, isa, kComponent); }

const Kernels& active_kernels() {
  static const Kernels& active = kernels_for(active_isa());
  return active;
}

}  // namespace luminamoon::data::cleaner_internal
