// Throughput of the TextCleaner byte kernels, per ISA this CPU supports (bytes_per_second):
//
//   utf8_valid_prefix/<corpus>/<isa>  one call over the whole (valid) 1 MiB buffer
//   clean_prefix/<corpus>/<isa>       the whole buffer as the cleaner scans it: clean_prefix,
//                                     then one byte of slow path (the cleaner's job), repeat
//
// Corpora (1 MiB, fixed seed): "ascii" is English-like prose (single spaces, a newline now and
// then, a paragraph break every ~600 bytes); "multilingual" mixes Latin with accents, Cyrillic,
// CJK and emoji. SPEC 6 targets per core: validation >= 8 GB/s, cleaning >= 2 GB/s.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cleaner/internal/kernels.h"
#include "luminamoon/data/common/cpu_isa.h"

namespace {

using luminamoon::data::Isa;
using luminamoon::data::isa_name;
using luminamoon::data::cleaner_internal::Kernels;
using luminamoon::data::cleaner_internal::kernels_for;

constexpr std::size_t kCorpusBytes = 1 << 20;
constexpr std::uint64_t kSeed = 20240601;

std::string build_corpus(const std::vector<std::string_view>& words, bool spaces) {
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<std::size_t> pick(0, words.size() - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  std::string text;
  std::size_t paragraph_start = 0;
  while (text.size() < kCorpusBytes) {
    text += words[pick(rng)];
    const int roll = percent(rng);
    if (text.size() - paragraph_start > 600) {
      text += ".\n\n";
      paragraph_start = text.size();
    } else if (roll < 3) {
      text += ".\n";
    } else if (roll < 10) {
      text += ", ";
    } else if (spaces || roll < 40) {
      text += ' ';
    }
  }
  // Cut at a character boundary so the buffer is valid UTF-8 throughout.
  std::size_t end = kCorpusBytes;
  while (end > 0 && (static_cast<std::uint8_t>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

const std::string& ascii_corpus() {
  static const std::string corpus = build_corpus(
      {"the",    "of",    "and",     "to",     "in",       "a",          "is",       "that",
       "for",    "it",    "as",      "was",    "with",     "be",         "by",       "on",
       "not",    "he",    "I",       "this",   "are",      "or",         "his",      "from",
       "at",     "which", "but",     "have",   "an",       "had",        "they",     "you",
       "were",   "their", "one",     "all",    "we",       "can",        "her",      "has",
       "there",  "been",  "if",      "more",   "when",     "will",       "would",    "who",
       "so",     "no",    "dataset", "tokens", "training", "model",      "pipeline", "(see",
       "below)", "2024",  "U.S.",    "e-mail", "don't",    "\"quoted\"", "Section",  "Chapter",
       "London", "Monday"},
      true);
  return corpus;
}

const std::string& multilingual_corpus() {
  static const std::string corpus =
      build_corpus({"the", "data", "caf\xC3\xA9", "na\xC3\xAFve",
                    "\xC3\xBC"
                    "ber",
                    "Stra\xC3\x9F"
                    "e",
                    "fran\xC3\xA7"
                    "ais",
                    "se\xC3\xB1or",
                    "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",              // привет
                    "\xD0\xBC\xD0\xB8\xD1\x80",                                      // мир
                    "\xD0\xB4\xD0\xB0\xD0\xBD\xD0\xBD\xD1\x8B\xD0\xB5",              // данные
                    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE6\x96\x87",  // 日本語の文
                    "\xE6\x95\xB0\xE6\x8D\xAE\xE9\x9B\x86",                          // 数据集
                    "\xE4\xB8\xAD\xE6\x96\x87",                                      // 中文
                    "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",                          // 한국어
                    "\xF0\x9F\x98\x80", "\xF0\x9F\x9A\x80\xF0\x9F\x8E\x89",          // emoji
                    "\xE2\x80\x94", "\xE2\x80\x9Cquoted\xE2\x80\x9D"},  // — “quoted”
                   false);
  return corpus;
}

void bm_utf8_valid_prefix(benchmark::State& state, const Kernels* kernels,
                          const std::string* corpus) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(corpus->data());
  const std::size_t size = corpus->size();
  if (kernels->utf8_valid_prefix(data, size) != size) {
    state.SkipWithError("corpus is not valid UTF-8");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernels->utf8_valid_prefix(data, size));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(size));
}

void bm_clean_prefix(benchmark::State& state, const Kernels* kernels, const std::string* corpus) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(corpus->data());
  const std::size_t size = corpus->size();
  std::size_t stops = 0;
  for (auto _ : state) {
    stops = 0;
    std::size_t p = 0;
    while (p < size) {
      p += kernels->clean_prefix(data + p, size - p);
      p += 1;  // the byte the cleaner handles on its slow path
      ++stops;
    }
    benchmark::DoNotOptimize(p);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(size));
  state.counters["bytes_per_stop"] =
      static_cast<double>(size) / static_cast<double>(stops == 0 ? 1 : stops);
}

}  // namespace

int main(int argc, char** argv) {
  const std::pair<const char*, const std::string*> corpora[] = {
      {"ascii", &ascii_corpus()}, {"multilingual", &multilingual_corpus()}};
  for (const Isa isa : luminamoon::data::supported_isas()) {
    const Kernels* kernels = &kernels_for(isa);
    for (const auto& [name, corpus] : corpora) {
      const std::string suffix = std::string(name) + "/" + std::string(isa_name(isa));
      benchmark::RegisterBenchmark(("utf8_valid_prefix/" + suffix).c_str(), bm_utf8_valid_prefix,
                                   kernels, corpus);
      benchmark::RegisterBenchmark(("clean_prefix/" + suffix).c_str(), bm_clean_prefix, kernels,
                                   corpus);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
