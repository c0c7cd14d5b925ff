// The common ISA helper: one meaning per level (what the probe guarantees and what the target
// macros enable), and select_kernel's table lookup and refusals.
#include "common/internal/isa_dispatch.h"

#include <gtest/gtest.h>

#include <string>

#include "cleaner/internal/kernels.h"
#include "common/internal/utf8.h"
#include "luminamoon/data/common/error.h"
#include "minhash/internal/kernels.h"
#include "pii/internal/anchors.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace luminamoon::data::internal {
namespace {

struct FakeKernel {
  int id;
};

constexpr FakeKernel kScalarFake{0};
constexpr FakeKernel kAvx2Fake{2};
constexpr FakeKernel kNeonFake{4};

std::string unsupported_message(const IsaKernels<FakeKernel>& table, Isa isa) {
  try {
    (void)select_kernel(table, isa, "Fake kernels");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument for " << isa_name(isa);
  return {};
}

TEST(IsaDispatch, EntryMapsEachIsaToItsSlot) {
  constexpr IsaKernels<FakeKernel> table{.scalar = &kScalarFake, .avx2 = &kAvx2Fake};
  static_assert(table.entry(Isa::kScalar) == &kScalarFake);
  static_assert(table.entry(Isa::kAvx2) == &kAvx2Fake);
  static_assert(table.entry(Isa::kAvx512) == nullptr);
  static_assert(table.entry(Isa::kNeon) == nullptr);
  EXPECT_EQ(select_kernel(table, Isa::kScalar, "Fake kernels").id, 0);
}

TEST(IsaDispatch, SelectsTheSupportedEntries) {
  constexpr IsaKernels<FakeKernel> table{
      .scalar = &kScalarFake, .avx2 = &kAvx2Fake, .avx512 = &kAvx2Fake, .neon = &kNeonFake};
  for (const Isa isa : supported_isas()) {
    EXPECT_EQ(&select_kernel(table, isa, "Fake kernels"), table.entry(isa)) << isa_name(isa);
  }
}

TEST(IsaDispatch, RefusesAMissingEntryNamingComponentAndIsa) {
  constexpr IsaKernels<FakeKernel> table{.scalar = &kScalarFake};
  for (const Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    const std::string message = unsupported_message(table, isa);
    EXPECT_NE(message.find("Fake kernels: instruction set '" + std::string(isa_name(isa)) + "'"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("not supported by this CPU or build"), std::string::npos) << message;
  }
}

TEST(IsaDispatch, RefusesAnIsaThisCpuCannotRunEvenWithAnEntry) {
  constexpr IsaKernels<FakeKernel> table{
      .scalar = &kScalarFake, .avx2 = &kAvx2Fake, .avx512 = &kAvx2Fake, .neon = &kNeonFake};
  for (const Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    if (isa_supported(isa)) continue;
    EXPECT_FALSE(unsupported_message(table, isa).empty()) << isa_name(isa);
  }
}

TEST(IsaDispatch, EveryStageRunsTheLiveIsa) {
  const Isa live = active_isa();
  EXPECT_EQ(utf8_internal::active_utf8_kernel().isa, live);
  EXPECT_EQ(cleaner_internal::active_kernels().isa, live);
  EXPECT_EQ(pii_internal::active_anchor_kernel().isa, live);
  // MinHash has no NEON kernel: kNeon runs the scalar one (minhash/kernels_dispatch.cc).
  EXPECT_EQ(minhash_internal::active_minhash_kernel().isa,
            live == Isa::kNeon ? Isa::kScalar : live);
}

TEST(IsaDispatch, AStageTableForAnIsaIsThatIsasCode) {
  for (const Isa isa : supported_isas()) {
    EXPECT_EQ(utf8_internal::utf8_kernel_for(isa).isa, isa);
    EXPECT_EQ(cleaner_internal::kernels_for(isa).isa, isa);
    EXPECT_EQ(cleaner_internal::kernels_for(isa).utf8_valid_prefix,
              utf8_internal::utf8_kernel_for(isa).valid_prefix);
    EXPECT_EQ(pii_internal::anchor_kernel_for(isa).isa, isa);
    EXPECT_EQ(minhash_internal::minhash_kernel_for(isa).isa,
              isa == Isa::kNeon ? Isa::kScalar : isa);
  }
}

#if defined(__x86_64__) || defined(_M_X64)

// The probe promises what the macros enable: AVX2 for avx2; F, BW, DQ and VL for avx512.
TEST(IsaDispatch, ProbedLevelsHaveTheirCpuFeatures) {
  __builtin_cpu_init();
  if (isa_supported(Isa::kAvx2)) {
    EXPECT_TRUE(__builtin_cpu_supports("avx2"));
  }
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_TRUE(isa_supported(Isa::kAvx2));
    EXPECT_TRUE(__builtin_cpu_supports("avx512f"));
    EXPECT_TRUE(__builtin_cpu_supports("avx512bw"));
    EXPECT_TRUE(__builtin_cpu_supports("avx512dq"));
    EXPECT_TRUE(__builtin_cpu_supports("avx512vl"));
  }
}

// VPMULLQ on 256-bit registers needs AVX-512 DQ and VL: it compiles under LUMINAMOON_AVX512 and
// runs wherever the avx512 level is reported.
LUMINAMOON_AVX512 long long dq_vl_product(long long a, long long b) {
  const __m256i p = _mm256_mullo_epi64(_mm256_set1_epi64x(a), _mm256_set1_epi64x(b));
  return _mm256_extract_epi64(p, 3);
}

// VPERMQ needs AVX2.
LUMINAMOON_AVX2 long long avx2_last_lane(long long a) {
  const __m256i v = _mm256_permute4x64_epi64(_mm256_setr_epi64x(a, 0, 0, 0), 0x00);
  return _mm256_extract_epi64(v, 3);
}

TEST(IsaDispatch, TargetMacrosEnableTheirLevel) {
  if (!isa_supported(Isa::kAvx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  EXPECT_EQ(avx2_last_lane(7), 7);
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_EQ(dq_vl_product(-3, 5), -15);
  }
}

#endif

}  // namespace
}  // namespace luminamoon::data::internal
