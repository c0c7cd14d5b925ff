// Google Benchmark micro-benchmarks of the QualityFilter's hot kernels on real text: the English
// tokenizer, each preset's metric pass (gopher_quality, gopher_repetition, c4, fineweb) and the
// whole filter per preset, one thread. Documents come from the JSONL shards named by
// LUMINAMOON_BENCH_REAL (bench/real_corpus.py writes them: manuals, changelogs, docstrings, ...).
// Bytes/s are of input text.
#include <benchmark/benchmark.h>

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "luminamoon/data/quality/quality_filter.h"
#include "quality/internal/metrics.h"
#include "quality/internal/words.h"
#include "real_text.h"

namespace luminamoon::data {
namespace {

using namespace quality_internal;

const std::vector<std::string>& documents() {
  static const std::vector<std::string> docs = bench::load_real_text("LUMINAMOON_BENCH_REAL");
  return docs;
}

bool have_documents(benchmark::State& state) {
  if (!documents().empty()) return true;
  state.SkipWithError("set LUMINAMOON_BENCH_REAL to JSONL shards (bench/real_corpus.py)");
  return false;
}

void BM_Tokenize(benchmark::State& state) {
  if (!have_documents(state)) return;
  std::vector<Token> tokens;
  for (auto _ : state) {
    for (const std::string& d : documents()) {
      tokenize_document(d, tokens);
      benchmark::DoNotOptimize(tokens.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(documents()));
}
BENCHMARK(BM_Tokenize);

// One metric pass per document, as a filter of that one preset runs it (no early stop).
template <typename F>
void metric_pass(benchmark::State& state, F&& pass) {
  if (!have_documents(state)) return;
  Document doc;
  Metrics out{};
  for (auto _ : state) {
    for (const std::string& d : documents()) {
      doc.reset(d);
      pass(doc, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(documents()));
}

void BM_GopherQualityMetrics(benchmark::State& state) {
  metric_pass(state, [](Document& doc, Metrics& out) { gopher_quality_metrics(doc, out); });
}
BENCHMARK(BM_GopherQualityMetrics);

void BM_GopherRepetitionMetrics(benchmark::State& state) {
  metric_pass(state, [](Document& doc, Metrics& out) { gopher_repetition_metrics(doc, out); });
}
BENCHMARK(BM_GopherRepetitionMetrics);

// gopher_repetition up to a stage (StopAfter ends the pass there), after tokenizing: the
// differences between stages are what each one costs. 0: the duplicate lines and paragraphs;
// 1: word interning and the top 2-gram; 2: the top 3- and 4-grams; 3: every metric (the
// 5-10-gram passes).
void BM_GopherRepetitionStages(benchmark::State& state) {
  if (!have_documents(state)) return;
  const Metric last[] = {kGopherDupLineCharRatio, kGopherTop2gramCharRatio,
                         kGopherTop4gramCharRatio, kMetricCount};
  const Metric stop_at = last[state.range(0)];
  const std::function<bool(Metric)> stop = [&](Metric m) { return m == stop_at; };
  Document doc;
  Metrics out{};
  for (auto _ : state) {
    for (const std::string& d : documents()) {
      state.PauseTiming();
      doc.reset(d);
      doc.tokens();
      state.ResumeTiming();
      gopher_repetition_metrics(doc, out, &stop);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(documents()));
}
BENCHMARK(BM_GopherRepetitionStages)->DenseRange(0, 3);

// gopher_repetition after tokenizing, on one made-up document of ~40K words per iteration that
// takes one path of the n-gram passes: 0, words of 2-9 letters (a 400-word vocabulary, skewed
// towards its start) written twice, so every 5-10-gram repeats as the same words (the
// word-class check answers, no byte is compared); 1, words of one to three letters over {a, b},
// where most repeats join different words to the same characters (the byte comparisons).
void BM_GopherRepetitionSynthetic(benchmark::State& state) {
  std::mt19937 rng(15);
  std::string text;
  if (state.range(0) == 0) {
    std::vector<std::string> vocabulary(400);
    for (std::string& word : vocabulary) {
      const std::size_t len = 2 + rng() % 8;
      for (std::size_t i = 0; i < len; ++i) word += static_cast<char>('a' + rng() % 26);
    }
    std::string once;
    for (int i = 0; i < 20000; ++i) {
      const std::size_t pick = (rng() % 400) * (rng() % 400) / 400;  // skewed to the start
      once += vocabulary[pick];
      once += ' ';
    }
    text = once + once;
  } else {
    const char* kTiny[] = {"a", "b", "ab", "ba", "aa", "bb", "aab", "abb", "bab", "bba"};
    for (int i = 0; i < 40000; ++i) {
      text += kTiny[rng() % 10];
      text += ' ';
    }
  }
  Document doc;
  Metrics out{};
  for (auto _ : state) {
    state.PauseTiming();
    doc.reset(text);
    doc.tokens();
    state.ResumeTiming();
    gopher_repetition_metrics(doc, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_GopherRepetitionSynthetic)->DenseRange(0, 1);

void BM_FinewebMetrics(benchmark::State& state) {
  metric_pass(state, [](Document& doc, Metrics& out) { fineweb_metrics(doc, 30, out); });
}
BENCHMARK(BM_FinewebMetrics);

void BM_C4Pass(benchmark::State& state) {
  if (!have_documents(state)) return;
  const C4Options options{1000, 3};
  C4Pass pass;
  std::vector<Token> scratch;
  for (auto _ : state) {
    for (const std::string& d : documents()) {
      c4_pass(d, options, std::numeric_limits<double>::infinity(), false, pass, scratch);
      benchmark::DoNotOptimize(pass.kept);
    }
  }
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(documents()));
}
BENCHMARK(BM_C4Pass);

// The whole filter of one preset, threads=1, as QualityFilter(preset).filter_batch runs it.
void BM_FilterBatch(benchmark::State& state, const char* preset) {
  if (!have_documents(state)) return;
  const std::string_view presets[] = {preset};
  QualityFilterOptions options;
  options.threads = 1;
  const QualityFilter filter(presets, {}, options);
  std::vector<std::string_view> views(documents().begin(), documents().end());
  for (auto _ : state) benchmark::DoNotOptimize(filter.filter_batch(views).keep.data());
  state.SetBytesProcessed(state.iterations() * bench::total_bytes(documents()));
}
BENCHMARK_CAPTURE(BM_FilterBatch, gopher_quality, "gopher_quality");
BENCHMARK_CAPTURE(BM_FilterBatch, gopher_repetition, "gopher_repetition");
BENCHMARK_CAPTURE(BM_FilterBatch, c4, "c4");
BENCHMARK_CAPTURE(BM_FilterBatch, fineweb, "fineweb");
BENCHMARK_CAPTURE(BM_FilterBatch, default, "default");

}  // namespace
}  // namespace luminamoon::data

BENCHMARK_MAIN();
