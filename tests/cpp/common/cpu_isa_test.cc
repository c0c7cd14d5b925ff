// CPU feature probing and the LUMINAMOON_SIMD rule. The rule is tested through resolve_isa with
// explicit values and supported lists, so no test needs setenv (and none races another).
#include "luminamoon/data/common/cpu_isa.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/internal/cpu_isa_select.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

using internal::resolve_isa;

std::string config_error_message(std::string_view forced, const std::vector<Isa>& supported) {
  try {
    resolve_isa(forced, supported);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for LUMINAMOON_SIMD=" << forced;
  return {};
}

TEST(CpuIsa, NamesAreTheEnvironmentValues) {
  EXPECT_EQ(isa_name(Isa::kScalar), "scalar");
  EXPECT_EQ(isa_name(Isa::kAvx2), "avx2");
  EXPECT_EQ(isa_name(Isa::kAvx512), "avx512");
  EXPECT_EQ(isa_name(Isa::kNeon), "neon");
}

TEST(CpuIsa, SupportedListStartsWithScalarAndMatchesIsaSupported) {
  const std::vector<Isa> supported = supported_isas();
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(supported.front(), Isa::kScalar);
  for (const Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    const bool listed = std::find(supported.begin(), supported.end(), isa) != supported.end();
    EXPECT_EQ(listed, isa_supported(isa)) << isa_name(isa);
  }
}

#if defined(__x86_64__)
TEST(CpuIsa, ProbeAgreesWithTheCompilerRuntime) {
  // libgcc / compiler-rt also check XCR0, so both probes must agree on this machine.
  __builtin_cpu_init();
  EXPECT_EQ(isa_supported(Isa::kAvx2), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(isa_supported(Isa::kAvx512),
            __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0);
  EXPECT_FALSE(isa_supported(Isa::kNeon));
}
#endif

TEST(CpuIsa, ActiveIsaIsSupportedAndStable) {
  const Isa active = active_isa();
  EXPECT_TRUE(isa_supported(active));
  EXPECT_EQ(active_isa(), active);
}

TEST(ResolveIsa, EmptyPicksTheBestSupported) {
  EXPECT_EQ(resolve_isa("", std::vector<Isa>{Isa::kScalar}), Isa::kScalar);
  EXPECT_EQ(resolve_isa("", std::vector<Isa>{Isa::kScalar, Isa::kAvx2}), Isa::kAvx2);
  EXPECT_EQ(resolve_isa("", std::vector<Isa>{Isa::kScalar, Isa::kAvx2, Isa::kAvx512}),
            Isa::kAvx512);
  EXPECT_EQ(resolve_isa("", std::vector<Isa>{Isa::kScalar, Isa::kNeon}), Isa::kNeon);
}

TEST(ResolveIsa, ForcesASupportedIsa) {
  const std::vector<Isa> x86 = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};
  EXPECT_EQ(resolve_isa("scalar", x86), Isa::kScalar);
  EXPECT_EQ(resolve_isa("avx2", x86), Isa::kAvx2);
  EXPECT_EQ(resolve_isa("avx512", x86), Isa::kAvx512);
  EXPECT_EQ(resolve_isa("neon", std::vector<Isa>{Isa::kScalar, Isa::kNeon}), Isa::kNeon);
}

TEST(ResolveIsa, KnownButUnsupportedListsTheSupportedOnes) {
  const std::string message = config_error_message("avx512", {Isa::kScalar, Isa::kAvx2});
  EXPECT_NE(message.find("LUMINAMOON_SIMD=avx512"), std::string::npos) << message;
  EXPECT_NE(message.find("supported here: scalar, avx2"), std::string::npos) << message;
  EXPECT_NE(config_error_message("neon", {Isa::kScalar, Isa::kAvx2, Isa::kAvx512})
                .find("supported here: scalar, avx2, avx512"),
            std::string::npos);
  EXPECT_NE(config_error_message("avx2", {Isa::kScalar}).find("supported here: scalar"),
            std::string::npos);
}

TEST(ResolveIsa, UnknownNameGetsASuggestion) {
  const std::vector<Isa> x86 = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};
  EXPECT_NE(config_error_message("avx3", x86).find("did you mean 'avx2'?"), std::string::npos);
  EXPECT_NE(config_error_message("avx-512", x86).find("did you mean 'avx512'?"), std::string::npos);
  EXPECT_NE(config_error_message("scaler", x86).find("did you mean 'scalar'?"), std::string::npos);
  EXPECT_NE(config_error_message("AVX2", x86).find("did you mean 'avx2'?"), std::string::npos);
  const std::string far = config_error_message("sse4.2", x86);
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_NE(far.find("valid: scalar, avx2, avx512, neon"), std::string::npos) << far;
  EXPECT_NE(far.find("unknown instruction set 'sse4.2'"), std::string::npos) << far;
}

}  // namespace
}  // namespace luminamoon::data
