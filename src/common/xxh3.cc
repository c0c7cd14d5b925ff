// Thin wrapper over the xxHash library (Debian's libxxhash-dev), compiled inline so the hash is a
// direct call with no PLT hop. Inputs longer than 240 bytes (XXH3's striped loop) go to the
// build for the live ISA (internal/xxh3_kernels.h): same values, the loop in AVX2 or AVX-512.
#include "luminamoon/data/common/xxh3.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/internal/isa_dispatch.h"
#include "common/internal/xxh3_kernels.h"

namespace luminamoon::data {
namespace internal {
namespace {

constexpr std::size_t kLongInput = XXH3_MIDSIZE_MAX;  // 240: longer inputs run the striped loop

constexpr Xxh3Kernel kScalar{Isa::kScalar, xxh3_64_scalar};
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
constexpr Xxh3Kernel kAvx2{Isa::kAvx2, xxh3_64_avx2};
constexpr Xxh3Kernel kAvx512{Isa::kAvx512, xxh3_64_avx512};
#endif

// Every build, per ISA: what xxh3_kernel_for and the bulk entry point give.
constexpr IsaKernels<Xxh3Kernel> kTables {
  .scalar = &kScalar,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx512,
#endif
  .neon = &kScalar,  // the default flags already give xxHash's NEON loop on AArch64
};

// What xxh3_64 gives a long input: the same, but the AVX2 loop at the avx512 level. xxh3_64 is
// called here and there from scalar code (the quality rules hash a long line now and then), and
// a lone burst of 512-bit multiplies there costs more than it saves: on a Sapphire Rapids core a
// gopher_repetition pass took 37.3-38.0 ms with the AVX-512 loop behind xxh3_64 and 34.9-35.4 ms
// with the AVX2 one (process-alternated, 600 real documents), though the AVX-512 loop alone is
// faster from ~700 bytes up. Loops that hash long inputs back to back use xxh3_64_bulk.
constexpr IsaKernels<Xxh3Kernel> kScatteredTables {
  .scalar = &kScalar,
#if defined(LUMINAMOON_HAVE_X86_KERNELS)
  .avx2 = &kAvx2, .avx512 = &kAvx2,
#endif
  .neon = &kScalar,
};

const Xxh3Kernel& active_from(const IsaKernels<Xxh3Kernel>& tables) noexcept {
  // xxh3_64 is noexcept: a bad LUMINAMOON_SIMD (active_isa throws) keeps the scalar loop here,
  // the same values; the stages that pick kernels raise the error to the user.
  try {
    return select_kernel(tables, active_isa(), "XXH3");
  } catch (...) {
    return kScalar;
  }
}

const Xxh3Kernel& active_scattered_kernel() noexcept {
  static const Xxh3Kernel& active = active_from(kScatteredTables);
  return active;
}

}  // namespace

std::uint64_t xxh3_64_scalar(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  return XXH3_64bits_withSeed(data, size, seed);
}

const Xxh3Kernel& xxh3_kernel_for(Isa isa) { return select_kernel(kTables, isa, "XXH3"); }

const Xxh3Kernel& active_xxh3_kernel() noexcept {
  static const Xxh3Kernel& active = active_from(kTables);
  return active;
}

std::uint64_t xxh3_64_bulk(const void* data, std::size_t size) noexcept {
  if (size > kLongInput) return active_xxh3_kernel().hash(data, size, 0);
  return XXH3_64bits(data, size);
}

}  // namespace internal

std::uint64_t xxh3_64(const void* data, std::size_t size) noexcept {
  if (size > internal::kLongInput) return internal::active_scattered_kernel().hash(data, size, 0);
  return XXH3_64bits(data, size);
}

std::uint64_t xxh3_64(const void* data, std::size_t size, std::uint64_t seed) noexcept {
  if (size > internal::kLongInput) {
    return internal::active_scattered_kernel().hash(data, size, seed);
  }
  return XXH3_64bits_withSeed(data, size, seed);
}

}  // namespace luminamoon::data
