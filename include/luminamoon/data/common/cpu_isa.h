// Which SIMD instruction set the byte kernels use. Probed once per process (cached), from CPUID
// and XGETBV on x86-64 (the OS must save the wide registers) and always NEON on AArch64.
// LUMINAMOON_SIMD=scalar|avx2|avx512|neon forces one; forcing an ISA this CPU lacks is an error
// (ConfigError naming the ISAs available), never a silent fallback or a SIGILL.
// What each level guarantees, for every stage alike (src/common/internal/isa_dispatch.h):
//   avx2    AVX2;
//   avx512  AVX-512 F, BW, DQ and VL (a CPU with only some of them runs the avx2 kernels);
//   neon    Advanced SIMD (always present on AArch64).
// Details and the per-function target attributes: docs/architecture.md, "UTF-8 and SIMD dispatch".
#pragma once

#include <string_view>
#include <vector>

namespace luminamoon::data {

enum class Isa { kScalar, kAvx2, kAvx512, kNeon };

// "scalar", "avx2", "avx512", "neon".
std::string_view isa_name(Isa isa) noexcept;

// Whether this build contains kernels for `isa` and this CPU/OS can run them.
bool isa_supported(Isa isa) noexcept;

// Every supported ISA, scalar first.
std::vector<Isa> supported_isas();

// The live ISA: LUMINAMOON_SIMD if set (validated), else the best supported. Cached on first use.
Isa active_isa();

}  // namespace luminamoon::data
