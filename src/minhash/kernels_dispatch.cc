// The MinHash kernel registry: chosen once per process by active_isa() through the common helper
// (common/internal/isa_dispatch.h). Compiled with default flags; it only takes addresses of
// ISA-specific code.
//
// Isa::kNeon runs the scalar kernel (AArch64 has no 64-bit lane multiply; the compiler's scalar
// code is used). Isa::kAvx512 guarantees AVX-512DQ (VPMULLQ), which minhash_update_avx512 needs.
#include "common/internal/isa_dispatch.h"
#include "minhash/internal/kernels.h"

namespace luminamoon::data::minhash_internal {
namespace {

constexpr MinHashKernel kScalar{Isa::kScalar, minhash_update_scalar, minhash_update_words_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr MinHashKernel kAvx2{Isa::kAvx2, minhash_update_avx2, minhash_update_words_avx2};
constexpr MinHashKernel kAvx512{Isa::kAvx512, minhash_update_avx512, minhash_update_words_avx512};
#endif

constexpr internal::IsaKernels<MinHashKernel> kTables {
  .scalar = &kScalar,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx512,
#endif
  .neon = &kScalar,
};

}  // namespace

const MinHashKernel& minhash_kernel_for(Isa isa) {
  return internal::select_kernel(kTables, isa, "MinHash kernels");
}

const MinHashKernel& active_minhash_kernel() {
  static const MinHashKernel& active = minhash_kernel_for(active_isa());
  return active;
}

}  // namespace luminamoon::data::minhash_internal
