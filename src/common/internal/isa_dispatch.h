// The one definition of what each ISA level lets a kernel use, and the one way a stage picks its
// kernel table for the live ISA (LUMINAMOON_SIMD or the CPU probe in common/cpu_isa.cc).
//
// Levels (the probe guarantees exactly these, with the OS saving the registers' state):
//   avx2    AVX2                                   -> LUMINAMOON_AVX2 on every AVX2 function
//   avx512  AVX-512 F + BW + DQ + VL (x86-64-v4    -> LUMINAMOON_AVX512 on every AVX-512
//           without CD, which no kernel uses)         function
//   neon    Advanced SIMD (mandatory on AArch64; no attribute needed)
// A kernel file enables its ISA per function with these attributes, never with global -m flags,
// so the library still runs on any CPU of the architecture; a dispatcher reaches an ISA's
// functions only through select_kernel(), which refuses an ISA the CPU or build cannot run.
#pragma once

#include <string_view>

#include "luminamoon/data/common/cpu_isa.h"

#if defined(__x86_64__) || defined(_M_X64)
#define LUMINAMOON_AVX2 __attribute__((target("avx2")))
#define LUMINAMOON_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#endif

namespace luminamoon::data::internal {

// InvalidArgument: "<component>: instruction set '<isa>' is not supported by this CPU or build
// (check isa_supported first)".
[[noreturn]] void throw_unsupported_isa(std::string_view component, Isa isa);

// A stage's kernel tables, one per ISA; null where this build has no code for that ISA. Built as
// a constexpr aggregate in the stage's *_dispatch.cc, under #if LUMINAMOON_HAVE_X86_KERNELS /
// LUMINAMOON_HAVE_NEON_KERNELS for the entries whose functions exist only on that architecture.
// An entry may point at another ISA's table (minhash has no NEON kernel: neon = &scalar).
template <typename Kernel>
struct IsaKernels {
  const Kernel* scalar = nullptr;
  const Kernel* avx2 = nullptr;
  const Kernel* avx512 = nullptr;
  const Kernel* neon = nullptr;

  constexpr const Kernel* entry(Isa isa) const noexcept {
    switch (isa) {
      case Isa::kScalar:
        return scalar;
      case Isa::kAvx2:
        return avx2;
      case Isa::kAvx512:
        return avx512;
      case Isa::kNeon:
        return neon;
    }
    return nullptr;
  }
};

// The table for `isa`; throws (throw_unsupported_isa) when the build has none or this CPU/OS
// cannot run it, so an unsupported ISA's code is never reached.
template <typename Kernel>
const Kernel& select_kernel(const IsaKernels<Kernel>& kernels, Isa isa,
                            std::string_view component) {
  const Kernel* kernel = kernels.entry(isa);
  if (kernel == nullptr || !isa_supported(isa)) throw_unsupported_isa(component, isa);
  return *kernel;
}

}  // namespace luminamoon::data::internal
