// CPU feature probing and the LUMINAMOON_SIMD override (contract in cpu_isa.h).
// This file is compiled with the default target flags: the only non-baseline instruction it
// executes is XGETBV, enabled by a target attribute on one function and reached only after
// CPUID says the OS supports it (OSXSAVE).
#include "luminamoon/data/common/cpu_isa.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/internal/cpu_isa_select.h"
#include "common/internal/isa_dispatch.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#include <immintrin.h>
#define LUMINAMOON_X86_64 1
#elif defined(__aarch64__) || defined(_M_ARM64)
#define LUMINAMOON_AARCH64 1
#endif

namespace luminamoon::data {
namespace {

constexpr std::array<std::string_view, 4> kIsaNames = {"scalar", "avx2", "avx512", "neon"};
constexpr std::array<Isa, 4> kAllIsas = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon};

struct CpuFeatures {
  bool avx2 = false;
  bool avx512 = false;  // AVX-512 F + BW + DQ + VL, with the OS saving opmask and ZMM state
  internal::Avx512Extensions extensions;
};

#if defined(LUMINAMOON_X86_64)

__attribute__((target("xsave"))) std::uint64_t read_xcr0() {
  return static_cast<std::uint64_t>(_xgetbv(0));
}

CpuFeatures probe_cpu() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  const bool osxsave = (ecx & (1u << 27)) != 0;
  const bool avx = (ecx & (1u << 28)) != 0;
  if (!osxsave || !avx) return f;  // without OSXSAVE, XGETBV itself would fault
  const std::uint64_t xcr0 = read_xcr0();
  // XCR0 bit 1 = SSE (XMM), bit 2 = AVX (upper YMM); bits 5..7 = opmask, ZMM0-15 upper halves,
  // ZMM16-31. A CPU can have AVX-512 while the OS (or a hypervisor) does not save its state.
  const bool os_ymm = (xcr0 & 0x6u) == 0x6u;
  const bool os_zmm = (xcr0 & 0xE6u) == 0xE6u;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool cpu_avx2 = (ebx & (1u << 5)) != 0;
  const bool cpu_avx512f = (ebx & (1u << 16)) != 0;
  const bool cpu_avx512dq = (ebx & (1u << 17)) != 0;
  const bool cpu_avx512bw = (ebx & (1u << 30)) != 0;
  const bool cpu_avx512vl = (ebx & (1u << 31)) != 0;
  // The levels of common/internal/isa_dispatch.h: what LUMINAMOON_AVX2 / LUMINAMOON_AVX512 allow.
  f.avx2 = os_ymm && cpu_avx2;
  f.avx512 = f.avx2 && os_zmm && cpu_avx512f && cpu_avx512bw && cpu_avx512dq && cpu_avx512vl;
  f.extensions.vbmi = (ecx & (1u << 1)) != 0;
  f.extensions.vbmi2 = (ecx & (1u << 6)) != 0;
  f.extensions.bmi2 = (ebx & (1u << 8)) != 0;
  return f;
}

#else

CpuFeatures probe_cpu() { return {}; }

#endif

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = probe_cpu();
  return features;
}

std::string join_names(std::span<const Isa> isas) {
  std::string out;
  for (const Isa isa : isas) {
    if (!out.empty()) out += ", ";
    out += isa_name(isa);
  }
  return out;
}

}  // namespace

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
  }
  return "unknown";
}

bool isa_supported(Isa isa) noexcept {
  switch (isa) {
    case Isa::kScalar:
      return true;
#if defined(LUMINAMOON_X86_64) && defined(LUMINAMOON_HAVE_X86_KERNELS)
    case Isa::kAvx2:
      return cpu_features().avx2;
    case Isa::kAvx512:
      return cpu_features().avx512;
#endif
#if defined(LUMINAMOON_AARCH64) && defined(LUMINAMOON_HAVE_NEON_KERNELS)
    case Isa::kNeon:
      return true;  // Advanced SIMD is mandatory in AArch64
#endif
    default:
      return false;
  }
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (const Isa isa : kAllIsas) {
    if (isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

Isa active_isa() {
  // A throwing initializer leaves the static uninitialised, so a bad LUMINAMOON_SIMD raises on
  // every call rather than only the first.
  static const Isa active = [] {
    const char* forced = std::getenv("LUMINAMOON_SIMD");
    const std::vector<Isa> supported = supported_isas();
    return internal::resolve_isa(forced != nullptr ? forced : "", supported);
  }();
  return active;
}

namespace internal {

const Avx512Extensions& avx512_extensions() noexcept { return cpu_features().extensions; }

void throw_unsupported_isa(std::string_view component, Isa isa) {
  throw InvalidArgument(std::string(component) + ": instruction set '" +
                        std::string(isa_name(isa)) +
                        "' is not supported by this CPU or build (check isa_supported first)");
}

Isa resolve_isa(std::string_view forced, std::span<const Isa> supported) {
  if (forced.empty()) return supported.empty() ? Isa::kScalar : supported.back();
  for (std::size_t i = 0; i < kIsaNames.size(); ++i) {
    if (forced != kIsaNames[i]) continue;
    const Isa isa = kAllIsas[i];
    for (const Isa s : supported) {
      if (s == isa) return isa;
    }
    throw ConfigError("LUMINAMOON_SIMD=" + std::string(forced) +
                      ": this CPU or build cannot run that instruction set; supported here: " +
                      join_names(supported) + " (unset LUMINAMOON_SIMD to pick the best)");
  }
  std::string message = "LUMINAMOON_SIMD: unknown instruction set '" + std::string(forced) + "'";
  std::string lowered(forced);
  for (char& c : lowered) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (auto best = did_you_mean(lowered, kIsaNames)) message += "; did you mean '" + *best + "'?";
  message += " (valid: " + join_names(kAllIsas) + "; supported here: " + join_names(supported) +
             "; unset it to pick the best)";
  throw ConfigError(message);
}

}  // namespace internal
}  // namespace luminamoon::data
