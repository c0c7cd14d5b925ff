// Fuzz target: the MinHash word tokenizer over arbitrary bytes (invalid UTF-8 included). The first
// byte picks the n-gram size (1-8); the rest is the document. Checks: every block path this CPU
// runs (internal/shingles.h, AsciiPath) gives the same normalised text and shingle hashes, in
// order, as the code-point reference (kScalar); the signature through the live kernel (which on
// AVX-512 hashes word shingles itself, kernels.h) equals the scalar kernel over those hashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/minhash/minhash_signature.h"
#include "minhash/internal/kernels.h"
#include "minhash/internal/shingles.h"

namespace {

using namespace luminamoon::data;
using minhash_internal::AsciiPath;
using minhash_internal::Shingler;

struct Run {
  std::string normalized;
  std::vector<std::uint64_t> hashes;
};

Run shingle(AsciiPath path, std::uint32_t ngram, std::string_view doc) {
  Shingler shingler(ShingleKind::kWord, ngram, path);
  Run run;
  const std::size_t count = shingler.run(
      doc,
      [](void* context, const std::uint64_t* hashes, std::size_t n) {
        auto* out = static_cast<std::vector<std::uint64_t>*>(context);
        out->insert(out->end(), hashes, hashes + n);
      },
      &run.hashes);
  if (count != run.hashes.size()) std::abort();
  run.normalized = std::string(shingler.normalized());
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto ngram = static_cast<std::uint32_t>(data[0] % 8 + 1);
  const std::string_view doc(reinterpret_cast<const char*>(data + 1), size - 1);
  const Run expected = shingle(AsciiPath::kScalar, ngram, doc);
  for (const AsciiPath path : {AsciiPath::kTokens, AsciiPath::kCompact, AsciiPath::kCompress}) {
    if (!minhash_internal::ascii_path_supported(path)) continue;
    const Run got = shingle(path, ngram, doc);
    if (got.normalized != expected.normalized || got.hashes != expected.hashes) std::abort();
  }
  const MinHasher hasher(MinHashConfig{64, ShingleKind::kWord, ngram, 7});
  std::vector<std::uint32_t> reference(64, 0xFFFFFFFFU);
  minhash_internal::minhash_update_scalar(expected.hashes.data(), expected.hashes.size(),
                                          hasher.multipliers().data(), hasher.increments().data(),
                                          reference.data(), 64);
  if (hasher.signature(doc) != reference) std::abort();
  return 0;
}
