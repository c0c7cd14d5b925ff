// Google Benchmark micro-benchmarks of the PIIMasker core, one set per supported ISA: the anchor
// kernel alone, the scan (anchors + verifiers) and mask_into, on 2 KB documents of synthetic prose
// without PII and with ~1 PII item per KB. Bytes/s are of input text; one thread.
//
// On real PII-dense text (the JSONL shards named by LUMINAMOON_BENCH_PII_REAL, written by
// `bench/bench_pii.py --real --write-real DIR`: mail and Debian changelogs): the scan per ISA,
// and the two ways of producing every masked text, mask_batch_into (one std::string per
// document, the path of the pipeline stage) and find_batch_into + splice_valid_into into one
// buffer (what the Python binding does, writing into each new str).
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "luminamoon/data/pii/pii_masker.h"
#include "pii/internal/scanner.h"
#include "real_text.h"

namespace luminamoon::data {
namespace {

std::vector<std::string> make_documents(bool with_pii) {
  static const char* const kWords[] = {
      "the",  "of",    "and",  "to",    "in",     "is",     "that",    "for",   "it",
      "was",  "with",  "be",   "on",    "not",    "this",   "are",     "from",  "at",
      "data", "model", "time", "value", "report", "server", "release", "über",  "données",
      "数据", "模型",  "year", "page",  "table",  "figure", "results", "where", "number"};
  std::mt19937_64 rng(7);
  std::vector<std::string> docs;
  for (int d = 0; d < 4000; ++d) {
    std::string doc;
    while (doc.size() < 2000) {
      const auto r = rng() % 1000;
      if (r < 40) {
        doc += std::to_string(rng() % 2030);
      } else if (r < 50) {
        doc += std::to_string(rng() % 28) + "." + std::to_string(rng() % 12) + ".2024";
      } else if (r < 55) {
        doc += std::to_string(rng() % 24) + ":" + std::to_string(10 + rng() % 50);
      } else if (with_pii && r < 60) {
        const std::string pii[] = {"jo.doe" + std::to_string(rng() % 99) + "@example.com",
                                   "8.8." + std::to_string(rng() % 256) + ".4",
                                   "4111 1111 1111 1111", "AKIAIOSFODNN7EXAMPLE"};
        doc += pii[rng() % 4];
      } else {
        doc += kWords[rng() % (sizeof(kWords) / sizeof(kWords[0]))];
      }
      doc += rng() % 12 == 0 ? ". " : " ";
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

const std::vector<std::string>& documents(bool with_pii) {
  static const std::vector<std::string> clean = make_documents(false);
  static const std::vector<std::string> pii = make_documents(true);
  return with_pii ? pii : clean;
}

std::int64_t total_bytes(const std::vector<std::string>& docs) {
  std::int64_t n = 0;
  for (const auto& d : docs) n += static_cast<std::int64_t>(d.size());
  return n;
}

void BM_AnchorKernel(benchmark::State& state, Isa isa) {
  const auto& kernel = pii_internal::anchor_kernel_for(isa);
  const auto& docs = documents(false);
  std::vector<std::uint64_t> masks(64);
  for (auto _ : state) {
    for (const auto& d : docs) {
      const std::size_t blocks = (d.size() - pii_internal::kAnchorLookahead) / 64;
      kernel.masks(reinterpret_cast<const std::uint8_t*>(d.data()), blocks, masks.data());
      benchmark::DoNotOptimize(masks.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(docs));
}

void BM_Scan(benchmark::State& state, Isa isa, bool with_pii) {
  const auto& kernel = pii_internal::anchor_kernel_for(isa);
  const auto& docs = documents(with_pii);
  std::vector<pii_internal::Candidate> out;
  for (auto _ : state) {
    for (const auto& d : docs) {
      pii_internal::find_spans(d, pii_internal::ScanConfig{}, kernel, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(docs));
}

void BM_MaskInto(benchmark::State& state, bool with_pii) {
  const PiiMasker masker;
  const auto& docs = documents(with_pii);
  std::string out;
  PiiCounts counts{};
  for (auto _ : state) {
    for (const auto& d : docs) benchmark::DoNotOptimize(masker.mask_into(d, out, counts));
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(docs));
}

const std::vector<std::string>& real_documents() {
  static const std::vector<std::string> docs = bench::load_real_text("LUMINAMOON_BENCH_PII_REAL");
  return docs;
}

bool skip_without_real_text(benchmark::State& state) {
  if (!real_documents().empty()) return false;
  state.SkipWithError("set LUMINAMOON_BENCH_PII_REAL to JSONL shards (bench_pii.py --write-real)");
  return true;
}

// What BM_RealScan runs: every category, the e-mail category alone, or none (the anchor kernel
// and the visit of every anchor, which then finds nothing to verify).
enum class RealScan { kAll, kEmail, kNone };

// The scan per ISA; with kEmail, only the e-mail category is on (the anchor kernel and the
// e-mail verifier: its byte loops under the scalar kernel, its SSE2 windows under the others;
// the scalar kernel itself is slower, so compare avx2 with the same row before this change).
void BM_RealScan(benchmark::State& state, Isa isa, RealScan what) {
  if (skip_without_real_text(state)) return;
  const auto& kernel = pii_internal::anchor_kernel_for(isa);
  const auto& docs = real_documents();
  pii_internal::ScanConfig config;
  if (what == RealScan::kEmail) config.enabled = {true, false, false, false};
  if (what == RealScan::kNone) config.enabled = {false, false, false, false};
  std::vector<pii_internal::Candidate> out;
  for (auto _ : state) {
    for (const auto& d : docs) {
      pii_internal::find_spans(d, config, kernel, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(docs));
}

// The anchor kernel alone on the real documents, one call per 4 KiB as find_candidates makes them
// (the tail of each document, classified from a padded copy there, is left out).
void BM_RealAnchorKernel(benchmark::State& state, Isa isa) {
  if (skip_without_real_text(state)) return;
  const auto& kernel = pii_internal::anchor_kernel_for(isa);
  const auto& docs = real_documents();
  std::uint64_t masks[64];
  std::uint64_t anchors = 0;
  for (auto _ : state) {
    anchors = 0;
    for (const auto& d : docs) {
      const auto* data = reinterpret_cast<const std::uint8_t*>(d.data());
      const std::size_t blocks = d.size() >= pii_internal::kAnchorLookahead
                                     ? (d.size() - pii_internal::kAnchorLookahead) / 64
                                     : 0;
      for (std::size_t b = 0; b < blocks; b += 64) {
        const std::size_t count = std::min<std::size_t>(64, blocks - b);
        kernel.masks(data + b * 64, count, masks);
        for (std::size_t k = 0; k < count; ++k)
          anchors += static_cast<std::uint64_t>(__builtin_popcountll(masks[k]));
      }
    }
    benchmark::DoNotOptimize(anchors);
  }
  state.counters["anchors"] = static_cast<double>(anchors);
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(docs));
}

// The real documents as one batch: a one-thread masker, views of the texts, every one valid UTF-8.
struct RealBatch {
  PiiMasker masker{[] {
    PiiMaskerOptions o;
    o.threads = 1;
    return o;
  }()};
  std::vector<std::string_view> views{real_documents().begin(), real_documents().end()};
  std::vector<std::uint8_t> valid = std::vector<std::uint8_t>(views.size(), 1);
};

// The masked texts as std::strings, one per document (the path before issue 15's binding work).
void BM_RealMaskBatch(benchmark::State& state) {
  if (skip_without_real_text(state)) return;
  const RealBatch batch;
  const PiiMasker& masker = batch.masker;
  const auto& views = batch.views;
  const auto& valid = batch.valid;
  std::vector<std::string> out;
  std::vector<std::uint8_t> changed;
  for (auto _ : state) {
    benchmark::DoNotOptimize(masker.mask_batch_into(views, out, changed, valid));
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(real_documents()));
}

// The matches of the batch, then each changed text written into a buffer of its exact size (the
// binding writes into a new str instead).
void BM_RealFindBatchSplice(benchmark::State& state) {
  if (skip_without_real_text(state)) return;
  const RealBatch batch;
  const PiiMasker& masker = batch.masker;
  const auto& views = batch.views;
  const auto& valid = batch.valid;
  PiiBatchMatches found;
  std::vector<char> buffer;
  for (auto _ : state) {
    masker.find_batch_into(views, found, valid);
    for (std::size_t i = 0; i < views.size(); ++i) {
      if (!found.changed(i)) continue;
      buffer.resize(masker.spliced_size(views[i], found.of(i)));
      masker.splice_valid_into(views[i], found.of(i), buffer.data());
      benchmark::DoNotOptimize(buffer.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(real_documents()));
}

}  // namespace
}  // namespace luminamoon::data

int main(int argc, char** argv) {
  using namespace luminamoon::data;
  for (const Isa isa : supported_isas()) {
    const std::string name(isa_name(isa));
    benchmark::RegisterBenchmark(("BM_AnchorKernel/" + name).c_str(), BM_AnchorKernel, isa);
    benchmark::RegisterBenchmark(("BM_Scan/no_pii/" + name).c_str(), BM_Scan, isa, false);
    benchmark::RegisterBenchmark(("BM_Scan/pii/" + name).c_str(), BM_Scan, isa, true);
  }
  for (const Isa isa : supported_isas()) {
    const std::string name(isa_name(isa));
    benchmark::RegisterBenchmark(("BM_RealAnchorKernel/" + name).c_str(), BM_RealAnchorKernel, isa);
    benchmark::RegisterBenchmark(("BM_RealScan/" + name).c_str(), BM_RealScan, isa, RealScan::kAll);
    benchmark::RegisterBenchmark(("BM_RealScanEmail/" + name).c_str(), BM_RealScan, isa,
                                 RealScan::kEmail);
    benchmark::RegisterBenchmark(("BM_RealScanNone/" + name).c_str(), BM_RealScan, isa,
                                 RealScan::kNone);
  }
  benchmark::RegisterBenchmark("BM_RealMaskBatch/live_isa", BM_RealMaskBatch);
  benchmark::RegisterBenchmark("BM_RealFindBatchSplice/live_isa", BM_RealFindBatchSplice);
  benchmark::RegisterBenchmark("BM_MaskInto/no_pii/live_isa", BM_MaskInto, false);
  benchmark::RegisterBenchmark("BM_MaskInto/pii/live_isa", BM_MaskInto, true);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
