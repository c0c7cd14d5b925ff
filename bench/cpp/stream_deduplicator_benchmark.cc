// Micro-benchmarks of StreamDeduplicator on 1M short (~100-byte) documents, ~20% exact duplicates.
//
//   BM_FilterBatch/threads:N   hashing (N workers) + sequential probing, fresh deduplicator
//   BM_HashDocuments/threads:N XXH3-64 of every document only
//   BM_FilterHashes            probing/staging only, hashes precomputed
//
// The corpus is built once, deterministically (fixed seed), in one contiguous arena: the same
// layout an Arrow utf8 array gives the Python binding. Times are wall-clock (UseRealTime), since
// hashing runs on worker threads. items_per_second is documents per second.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace {

using luminamoon::data::hash_documents;
using luminamoon::data::StreamDeduplicator;
using luminamoon::data::StreamDeduplicatorOptions;

constexpr std::size_t kDocuments = 1'000'000;
constexpr std::size_t kMeanLength = 100;
constexpr double kDuplicateFraction = 0.2;
constexpr std::uint64_t kSeed = 20240601;

struct Corpus {
  std::string arena;
  std::vector<std::string_view> documents;
  std::vector<std::uint64_t> hashes;
  std::size_t bytes = 0;
  std::size_t unique = 0;
};

// Document i is either a copy of an earlier document (probability kDuplicateFraction) or
// "%08zu " followed by a slice of a random lower-case/space text, 75..125 bytes in all.
Corpus build_corpus() {
  std::mt19937_64 rng(kSeed);
  constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz      ";
  std::string text(std::size_t{1} << 20, ' ');
  std::uniform_int_distribution<std::size_t> letter(0, kAlphabet.size() - 1);
  for (char& c : text) c = kAlphabet[letter(rng)];

  std::uniform_int_distribution<std::size_t> length(kMeanLength * 3 / 4, kMeanLength * 5 / 4);
  std::uniform_int_distribution<std::size_t> offset(0, text.size() - 2 * kMeanLength);
  std::bernoulli_distribution duplicate(kDuplicateFraction);

  Corpus corpus;
  std::vector<std::size_t> begins(kDocuments);
  std::vector<std::size_t> sizes(kDocuments);
  corpus.arena.reserve(kDocuments * kMeanLength * 5 / 4);
  for (std::size_t i = 0; i < kDocuments; ++i) {
    begins[i] = corpus.arena.size();
    if (i > 0 && duplicate(rng)) {
      const std::size_t source = std::uniform_int_distribution<std::size_t>(0, i - 1)(rng);
      corpus.arena.append(corpus.arena, begins[source], sizes[source]);
    } else {
      std::string prefix = std::to_string(i);
      prefix.insert(0, 8 - prefix.size(), '0');
      corpus.arena += prefix;
      corpus.arena += ' ';
      corpus.arena.append(text, offset(rng), length(rng) - prefix.size() - 1);
      ++corpus.unique;
    }
    sizes[i] = corpus.arena.size() - begins[i];
  }
  corpus.documents.reserve(kDocuments);
  for (std::size_t i = 0; i < kDocuments; ++i) {
    corpus.documents.emplace_back(corpus.arena.data() + begins[i], sizes[i]);
  }
  corpus.bytes = corpus.arena.size();
  corpus.hashes.resize(kDocuments);
  hash_documents(corpus.documents, corpus.hashes, 1);
  return corpus;
}

const Corpus& corpus() {
  static const Corpus instance = build_corpus();
  return instance;
}

void check_kept(benchmark::State& state, const std::vector<std::uint8_t>& keep) {
  std::size_t kept = 0;
  for (const std::uint8_t k : keep) kept += k;
  if (kept != corpus().unique) state.SkipWithError("wrong keep mask: kept != unique documents");
  state.counters["kept"] = static_cast<double>(kept);
}

void set_throughput(benchmark::State& state) {
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetItemsProcessed(iterations * static_cast<std::int64_t>(kDocuments));
  state.SetBytesProcessed(iterations * static_cast<std::int64_t>(corpus().bytes));
}

void BM_FilterBatch(benchmark::State& state) {
  const Corpus& c = corpus();
  const auto threads = static_cast<unsigned>(state.range(0));
  std::vector<std::uint8_t> keep(c.documents.size());
  for (auto _ : state) {
    StreamDeduplicator dedup(nullptr, StreamDeduplicatorOptions{threads});
    dedup.filter_batch(c.documents, keep);
    benchmark::DoNotOptimize(keep.data());
    benchmark::ClobberMemory();
  }
  check_kept(state, keep);
  set_throughput(state);
}
BENCHMARK(BM_FilterBatch)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_HashDocuments(benchmark::State& state) {
  const Corpus& c = corpus();
  const auto threads = static_cast<unsigned>(state.range(0));
  std::vector<std::uint64_t> hashes(c.documents.size());
  for (auto _ : state) {
    hash_documents(c.documents, hashes, threads);
    benchmark::DoNotOptimize(hashes.data());
    benchmark::ClobberMemory();
  }
  if (hashes != c.hashes) state.SkipWithError("hashes differ from the single-threaded ones");
  set_throughput(state);
}
BENCHMARK(BM_HashDocuments)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_FilterHashes(benchmark::State& state) {
  const Corpus& c = corpus();
  std::vector<std::uint8_t> keep(c.hashes.size());
  for (auto _ : state) {
    StreamDeduplicator dedup;
    dedup.filter_hashes(c.hashes, keep);
    benchmark::DoNotOptimize(keep.data());
    benchmark::ClobberMemory();
  }
  check_kept(state, keep);
  set_throughput(state);
}
BENCHMARK(BM_FilterHashes)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
