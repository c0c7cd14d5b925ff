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
// Extensions a few avx512-level kernels take when the CPU also has them (avx512_extensions()):
// VBMI (VPERMI2B: the PII anchor kernel) and VBMI2 + BMI2 (VPCOMPRESSB, PEXT: the MinHash
// shingler's compress path).
#define LUMINAMOON_AVX512_VBMI \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi")))
#define LUMINAMOON_AVX512_VBMI2 \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi2,bmi,bmi2,popcnt")))
#endif

namespace luminamoon::data::internal {

// CPUID leaf 7 extensions beyond the avx512 level (their registers' state is the avx512 level's,
// so a kernel that takes one also needs isa_supported(Isa::kAvx512)). Probed once; all false off
// x86-64.
struct Avx512Extensions {
  bool vbmi = false;   // AVX512_VBMI
  bool vbmi2 = false;  // AVX512_VBMI2
  bool bmi2 = false;   // BMI2
};
const Avx512Extensions& avx512_extensions() noexcept;

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
