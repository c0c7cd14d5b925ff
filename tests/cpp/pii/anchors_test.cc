// Every supported anchor kernel against the scalar reference, and find_spans identical whatever
// the kernel.
#include "pii/internal/anchors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "pii/internal/scanner.h"

namespace luminamoon::data::pii_internal {
namespace {

// Masks of `text` through `kernel`, with the zero padding the scanner provides.
std::vector<std::uint64_t> masks_of(const AnchorKernel& kernel, const std::string& text) {
  const std::size_t blocks = (text.size() + 63) / 64;
  std::vector<std::uint8_t> padded(blocks * 64 + kAnchorLookahead, 0);
  std::copy(text.begin(), text.end(), padded.begin());
  std::vector<std::uint64_t> masks(blocks);
  kernel.masks(padded.data(), blocks, masks.data());
  return masks;
}

TEST(AnchorsScalar, GoldenPositions) {
  const std::string text =
      "a@b 1.2 123456 AKIA AIza ghp_ github_ xoxb- sk- sk_ rk_ eyJ -----BEGIN x:y=z 1.x Ax gh "
      "2023 was 4111 1111";
  const std::vector<std::uint64_t> masks = masks_of(anchor_kernel_for(Isa::kScalar), text);
  std::vector<std::size_t> got;
  for (std::size_t p = 0; p < text.size(); ++p) {
    if ((masks[p / 64] >> (p % 64)) & 1) got.push_back(p);
  }
  std::vector<std::size_t> want;
  for (std::string_view needle : {"@", "1.2", "123456", "AKIA", "AIza", "ghp_", "github_", "xoxb",
                                  "sk-", "sk_", "rk_", "eyJ", "-B", ":", "=", "4111 1"}) {
    want.push_back(text.find(needle));
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

class AnchorsVsScalar : public ::testing::TestWithParam<Isa> {
 protected:
  const AnchorKernel& kernel() const { return anchor_kernel_for(GetParam()); }
  const AnchorKernel& scalar() const { return anchor_kernel_for(Isa::kScalar); }
};

std::string isa_test_name(const ::testing::TestParamInfo<Isa>& param) {
  return std::string(isa_name(param.param));
}

INSTANTIATE_TEST_SUITE_P(Isa, AnchorsVsScalar, ::testing::ValuesIn(supported_isas()),
                         isa_test_name);

TEST_P(AnchorsVsScalar, ReportsItsIsa) { EXPECT_EQ(kernel().isa, GetParam()); }

TEST_P(AnchorsVsScalar, RandomTextFromTheAnchorAlphabet) {
  const std::string alphabet = "@:=0123456789.AKSBCIzghit_xoskr-yJeBEGN pu\x80\xff";
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string text(rng() % 700, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    ASSERT_EQ(masks_of(kernel(), text), masks_of(scalar(), text)) << text;
  }
}

TEST_P(AnchorsVsScalar, RandomBytes) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 100; ++round) {
    std::string text(rng() % 2000, ' ');
    for (char& c : text) c = static_cast<char>(rng());
    ASSERT_EQ(masks_of(kernel(), text), masks_of(scalar(), text));
  }
}

TEST_P(AnchorsVsScalar, EveryPatternAtEveryBlockOffset) {
  for (std::string_view pattern : {"1.2", "1234", "AKIA", "AI", "gh?_", "gith", "xox", "sk-", "rk_",
                                   "eyJ", "-B", "@", ":", "="}) {
    for (std::size_t offset = 0; offset < 130; ++offset) {
      std::string text(offset, ' ');
      text += pattern;
      text += std::string(offset % 7, ' ');
      ASSERT_EQ(masks_of(kernel(), text), masks_of(scalar(), text)) << pattern << " @" << offset;
    }
  }
}

TEST_P(AnchorsVsScalar, FindSpansIsTheSameWithEveryKernel) {
  const std::string text =
      "mail jo.doe@example.com, ip 8.8.8.8 and 2001:4860::8888, card 4111 1111 1111 1111, "
      "AKIAIOSFODNN7EXAMPLE, secret_key = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\" ";
  for (std::size_t pad = 0; pad < 70; ++pad) {
    const std::string padded = std::string(pad, 'z') + " " + text;
    std::vector<Candidate> a, b;
    find_spans(padded, ScanConfig{}, kernel(), a);
    find_spans(padded, ScanConfig{}, scalar(), b);
    ASSERT_EQ(a, b);
    EXPECT_EQ(a.size(), 6u);
  }
}

}  // namespace
}  // namespace luminamoon::data::pii_internal
