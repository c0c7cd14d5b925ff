// Throughput of the whole TextCleaner pass (default steps; also with NFC), per ISA this CPU
// supports, single thread, on 4 MiB of ~2 KB documents (bytes_per_second of input):
//
//   clean/<corpus>/<isa>       clean_document over every document, default options
//   clean_nfc/<corpus>/<isa>   the same with nfc = true
//
// Corpora (fixed seed): "ascii" English-like prose (paragraph breaks now and then),
// "multilingual" mixing Latin with accents, Cyrillic, Greek, CJK, Arabic, Devanagari and Hangul,
// "messy" the ascii prose with CR LF, tabs, runs of spaces, NBSP, NUL and invalid bytes.
// SPEC 6 target: cleaning >= 2 GB/s per core on ASCII-heavy text.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cleaner/internal/clean_document.h"
#include "cleaner/internal/kernels.h"
#include "luminamoon/data/common/cpu_isa.h"

namespace {

using namespace luminamoon::data;

constexpr std::size_t kCorpusBytes = 4 << 20;
constexpr std::uint64_t kSeed = 20240601;

std::vector<std::string> build(const std::vector<std::string_view>& words,
                               const std::vector<std::string_view>& noise) {
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<std::size_t> pick(0, words.size() - 1);
  std::uniform_int_distribution<std::size_t> size(200, 4000);
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<std::string> docs;
  std::size_t total = 0;
  while (total < kCorpusBytes) {
    std::string doc;
    const std::size_t target = size(rng);
    while (doc.size() < target) {
      doc += words[pick(rng)];
      const int roll = percent(rng);
      if (!noise.empty() && roll < 5) {
        doc += noise[static_cast<std::size_t>(percent(rng)) % noise.size()];
      } else {
        doc += roll < 11 ? ". " : roll < 17 ? ", " : roll < 18 ? "\n\n" : " ";
      }
    }
    total += doc.size();
    docs.push_back(std::move(doc));
  }
  return docs;
}

const std::vector<std::string_view> kWords = {
    "the",  "of",   "and",      "to",       "in",    "a",           "is",          "that",
    "for",  "it",   "as",       "was",      "with",  "be",          "by",          "on",
    "not",  "this", "are",      "or",       "from",  "at",          "which",       "but",
    "data", "have", "training", "pipeline", "model", "information", "development", "2024"};

const std::vector<std::string>& corpus(int kind) {
  static const std::vector<std::string> ascii = build(kWords, {});
  static const std::vector<std::string> multilingual = [] {
    std::vector<std::string_view> words = kWords;
    for (const char* w :
         {"\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",  // Привет
          "\xE4\xB8\xAD\xE6\x96\x87",                          // 中文
          "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",              // 日本語
          "\xCE\x95\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC",
          "\xD8\xA7\xD9\x84\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A\xD8\xA9",
          "\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA5\x8D\xE0\xA4\xA6\xE0\xA5\x80",
          "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4", "caf\xC3\xA9", "na\xC3\xAFve"}) {
      for (int k = 0; k < 3; ++k) words.emplace_back(w);
    }
    return build(words, {});
  }();
  static const std::vector<std::string> messy =
      build(kWords, {"\r\n", "\t", "   ", "\xC2\xA0", " \n", std::string_view("\0", 1), "\xFF",
                     "\r\n\r\n\r\n", "\x0C"});
  return kind == 0 ? ascii : kind == 1 ? multilingual : messy;
}

void clean(benchmark::State& state, int kind, Isa isa, bool nfc) {
  const std::vector<std::string>& docs = corpus(kind);
  const cleaner_internal::Kernels& kernels = cleaner_internal::kernels_for(isa);
  TextCleanerOptions options;
  options.nfc = nfc;
  std::size_t bytes = 0;
  for (const std::string& d : docs) bytes += d.size();
  CleanStats stats;
  for (auto _ : state) {
    for (const std::string& d : docs) {
      benchmark::DoNotOptimize(cleaner_internal::clean_document(d, options, kernels, stats));
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

}  // namespace

int main(int argc, char** argv) {
  const char* names[] = {"ascii", "multilingual", "messy"};
  for (const Isa isa : supported_isas()) {
    for (int kind = 0; kind < 3; ++kind) {
      for (const bool nfc : {false, true}) {
        const std::string name = std::string(nfc ? "clean_nfc/" : "clean/") + names[kind] + "/" +
                                 std::string(isa_name(isa));
        benchmark::RegisterBenchmark(name.c_str(), clean, kind, isa, nfc);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
