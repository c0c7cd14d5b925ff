// The hot kernels of MinHash signatures and exact dedup (issue 15), on real text when the
// machine has it:
//
//   minhash_update/<isa>          the permutation kernel: 512 shingle hashes x 64 permutations
//                                 per call (items = shingle hashes)
//   minhash_update_words/<isa>/<how>  512 word 5-grams of the licence texts: XXH3 of each then
//                                 the kernel (hash_then_update), or hashed inside the kernel
//                                 (update_words, kernels.h), items = shingles
//   word_shingles/<text>          tokenizing, normalising and XXH3-hashing the word 5-grams of
//                                 the text, cut into ~8 KB documents (bytes_per_second)
//   signature/<text>              the whole MinHash signature (64 permutations) of those
//                                 documents, active ISA
//   xxh3_long/<isa>/<bytes>       XXH3-64 of one long input, per ISA build (bytes_per_second)
//   short_shingles/corpus/<path>  word_shingles on the short documents of the real-text corpus,
//                                 by each path this CPU can run (internal/shingles.h,
//                                 AsciiPath: scalar is the code-point-at-a-time reference)
//   short_tokens/corpus/<path>    the tokenizer alone on those documents: word shingles go to a
//                                 WordShingleSink that only reads their starts (nothing hashed)
//   short_signatures/corpus       MinHasher::signatures (one thread) of those documents: the
//                                 Python benchmark's short-document row without the binding
//   short_kernel/corpus           the active kernel's fused hash-and-update alone on those
//                                 documents' word 5-grams (tokenized untimed), items = shingles
//   short_index/corpus/<how>      the LSH index of filter_batch alone (default shape for 0.8 and
//                                 64 permutations, 4-bit rows packed untimed): each iteration a
//                                 new index, every row through add_if_unique; "reserved" sizes
//                                 the staged tables first (reserve_staged, as filter_batch does),
//                                 "grown" lets them grow row by row; items = documents
//   short_filter_batch/corpus/threads:<n>  MinHashDeduplicator::filter_batch on a new
//                                 deduplicator each iteration (wall time): the Python
//                                 benchmark's threads row without the binding
//   str_filter_batch/corpus/<how>/threads:<n>  the same batch as a Python list of str reaches
//                                 filter_batch: the documents that are not ASCII as code units
//                                 (Latin-1, UCS-2 or UTF-32, the narrowest that holds each, as
//                                 CPython keeps a str), encoded to UTF-8 first, into one buffer
//                                 on the calling thread ("encoded_first"), or by the workers
//                                 that hash them ("pending", PendingUtf8); wall time
//
// The short documents (~1.2 KB) come from the JSONL shards LUMINAMOON_BENCH_REAL names (e.g.
// 'bench/out/real/real-*.jsonl', written by bench/real_corpus.py), cut at blank lines into pieces
// of at most 1,200 bytes and at least 400, as bench/bench_real_hashing.py cuts them; without the
// variable these are skipped.
//
// Text: "real" is /usr/share/common-licenses/* (the licence texts every Debian machine has) when
// readable, concatenated; "synthetic" is seeded English-like prose (so the benchmark runs
// anywhere). Figures in docs/benchmarks.md ("Hashing on real text").
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/internal/xxh3_kernels.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/utf8_decode.h"
#include "luminamoon/data/common/utf8_encode.h"
#include "luminamoon/data/common/xxh3.h"
#include "luminamoon/data/minhash/lsh_shape.h"
#include "luminamoon/data/minhash/minhash_deduplicator.h"
#include "luminamoon/data/minhash/minhash_signature.h"
#include "minhash/internal/kernels.h"
#include "minhash/internal/lsh_index.h"
#include "minhash/internal/shingles.h"
#include "real_text.h"

namespace {

using luminamoon::data::Isa;
using luminamoon::data::isa_name;
using luminamoon::data::MinHashConfig;
using luminamoon::data::MinHasher;
using luminamoon::data::ShingleKind;

std::string real_text() {
  std::string text;
  const std::filesystem::path dir = "/usr/share/common-licenses";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return text;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text += buffer.str();
    text += "\n\n";
  }
  return text;
}

std::string synthetic_text() {
  const char* words[] = {"the",  "of",      "license", "software", "and",   "to",   "you",
                         "any",  "program", "work",    "under",    "terms", "copy", "Section",
                         "this", "or",      "a",       "in",       "that",  "such", "GNU"};
  std::mt19937_64 rng(7);
  std::string text;
  while (text.size() < (1 << 20)) {
    text += words[rng() % 21];
    text += (rng() % 12 == 0) ? ",\n" : " ";
  }
  return text;
}

// The text cut into documents of ~8 KB at spaces.
std::vector<std::string> documents(const std::string& text) {
  std::vector<std::string> docs;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t stop = std::min(text.size(), start + 8000);
    while (stop < text.size() && text[stop] != ' ') ++stop;
    docs.push_back(text.substr(start, stop - start));
    start = stop;
  }
  return docs;
}

const std::vector<std::string>& corpus(bool real) {
  static const std::vector<std::string> r = documents(real_text());
  static const std::vector<std::string> s = documents(synthetic_text());
  return real && !r.empty() ? r : s;
}

// bench_real_hashing.py's cut(): blocks split at "\n\n", joined into pieces of at most
// max_bytes (counting the separators), pieces under max_bytes / 3 dropped.
std::vector<std::string> cut(const std::string& text, std::size_t max_bytes) {
  std::vector<std::string> pieces;
  std::string current;
  std::size_t blocks = 0;
  std::size_t size = 0;
  const auto finish = [&] {
    if (current.size() >= max_bytes / 3) pieces.push_back(current);
    current.clear();
    blocks = 0;
    size = 0;
  };
  std::size_t start = 0;
  for (;;) {
    const std::size_t stop = text.find("\n\n", start);
    const std::string_view block(text.data() + start,
                                 (stop == std::string::npos ? text.size() : stop) - start);
    const std::size_t n = block.size() + 2;
    if (blocks != 0 && size + n > max_bytes) finish();
    if (blocks++ != 0) current += "\n\n";
    current += block;
    size += n;
    if (stop == std::string::npos) break;
    start = stop + 2;
  }
  if (blocks != 0) finish();
  return pieces;
}

const std::vector<std::string>& short_documents() {
  static const std::vector<std::string> docs = [] {
    std::vector<std::string> out;
    for (const std::string& text :
         luminamoon::data::bench::load_real_text("LUMINAMOON_BENCH_REAL")) {
      for (std::string& piece : cut(text, 1200)) out.push_back(std::move(piece));
    }
    return out;
  }();
  return docs;
}

// The short documents, or nullptr with the benchmark skipped when LUMINAMOON_BENCH_REAL is unset.
const std::vector<std::string>* short_documents_for(benchmark::State& state) {
  const auto& docs = short_documents();
  if (docs.empty()) {
    state.SkipWithError("set LUMINAMOON_BENCH_REAL to JSONL shards (bench/real_corpus.py)");
    return nullptr;
  }
  return &docs;
}

// Every shingle hash of every document, folded into `sink` (so none is optimised away).
void shingle_all(luminamoon::data::minhash_internal::Shingler& shingler,
                 const std::vector<std::string>& docs, std::uint64_t& sink) {
  for (const auto& d : docs) {
    shingler.run(
        d,
        [](void* context, const std::uint64_t* hashes, std::size_t count) {
          auto* s = static_cast<std::uint64_t*>(context);
          for (std::size_t i = 0; i < count; ++i) *s ^= hashes[i];
        },
        &sink);
  }
}

void short_shingles(benchmark::State& state, luminamoon::data::minhash_internal::AsciiPath path) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  const auto& docs = *documents;
  luminamoon::data::minhash_internal::Shingler shingler(ShingleKind::kWord, 5, path);
  std::uint64_t sink = 0;
  for (auto _ : state) shingle_all(shingler, docs, sink);
  benchmark::DoNotOptimize(sink);
  state.SetBytesProcessed(state.iterations() * luminamoon::data::bench::total_bytes(docs));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
}

// The tokenizer alone: the word shingles arrive as starts (WordShingleSink) and are not hashed.
void short_tokens(benchmark::State& state, luminamoon::data::minhash_internal::AsciiPath path) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  const auto& docs = *documents;
  luminamoon::data::minhash_internal::Shingler shingler(ShingleKind::kWord, 5, path);
  std::uint64_t sink = 0;
  for (auto _ : state) {
    for (const auto& d : docs) {
      shingler.run(
          d,
          [](void* context, const std::uint64_t* hashes, std::size_t count) {
            auto* s = static_cast<std::uint64_t*>(context);
            for (std::size_t i = 0; i < count; ++i) *s ^= hashes[i];
          },
          [](void* context, const char*, const std::size_t* starts, std::size_t count,
             std::size_t ngram) {
            auto* s = static_cast<std::uint64_t*>(context);
            *s += starts[count + ngram - 1] + count;
          },
          &sink);
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetBytesProcessed(state.iterations() * luminamoon::data::bench::total_bytes(docs));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
}

void short_signatures(benchmark::State& state) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  const auto& docs = *documents;
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const MinHasher hasher(MinHashConfig{64, ShingleKind::kWord, 5, 1});
  std::vector<std::uint32_t> out(views.size() * 64);
  for (auto _ : state) {
    hasher.signatures(views, out, 1);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * luminamoon::data::bench::total_bytes(docs));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
}

void short_index(benchmark::State& state, bool reserve) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  namespace mi = luminamoon::data::minhash_internal;
  const auto& docs = *documents;
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  constexpr std::uint32_t kPerm = 64;
  const MinHasher hasher(MinHashConfig{kPerm, ShingleKind::kWord, 5, 1});
  std::vector<std::uint32_t> signatures(views.size() * kPerm);
  hasher.signatures(views, signatures, 1);
  const luminamoon::data::LshShape shape = luminamoon::data::optimal_lsh_shape(0.8, kPerm);
  const std::uint32_t bits = luminamoon::data::lsh_value_bits(shape.rows, false);
  const std::uint32_t min_matches = luminamoon::data::lsh_min_matches(0.8, kPerm, bits);
  const std::size_t row_size = mi::row_bytes(kPerm, bits);
  std::vector<std::uint8_t> rows(views.size() * row_size);
  for (std::size_t i = 0; i < views.size(); ++i) {
    mi::pack_row(signatures.data() + i * kPerm, kPerm, bits, rows.data() + i * row_size);
  }
  std::size_t kept = 0;
  for (auto _ : state) {
    mi::LshIndex index(kPerm, shape, bits, min_matches);
    if (reserve) index.reserve_staged(views.size());
    for (std::size_t i = 0; i < views.size(); ++i) {
      kept += index.add_if_unique(rows.data() + i * row_size) ? 1U : 0U;
    }
  }
  benchmark::DoNotOptimize(kept);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
}

void short_filter_batch(benchmark::State& state, unsigned threads) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  const auto& docs = *documents;
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  std::vector<std::uint8_t> keep(views.size());
  luminamoon::data::MinHashOptions options;
  options.threads = threads;
  for (auto _ : state) {
    luminamoon::data::MinHashDeduplicator dedup(nullptr, options);
    dedup.filter_batch(views, keep);
    benchmark::DoNotOptimize(keep.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
}

void str_filter_batch(benchmark::State& state, unsigned threads, bool pending) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  const auto& docs = *documents;
  namespace ld = luminamoon::data;
  std::vector<std::string_view> views(docs.begin(), docs.end());
  std::vector<std::vector<char>> storage;  // each non-ASCII document's code units
  std::vector<ld::PendingUtf8> units;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const ld::Utf8Shape shape = ld::utf8_shape(docs[i]);
    if (shape.code_points == docs[i].size()) continue;  // ASCII: read in place
    storage.emplace_back(shape.code_points * shape.width);
    ld::decode_utf8(docs[i], shape.width, storage.back().data(), shape.code_points);
    units.push_back({i, {storage.back().data(), shape.code_points, shape.width}});
    views[i] = {};
  }
  std::size_t capacity = 0;
  for (const ld::PendingUtf8& u : units) {
    capacity += ld::utf8_encode_capacity(u.units.count, u.units.width);
  }
  std::vector<std::uint8_t> keep(views.size());
  ld::MinHashOptions options;
  options.threads = threads;
  for (auto _ : state) {
    ld::MinHashDeduplicator dedup(nullptr, options);
    if (pending) {
      dedup.filter_batch(views, units, keep);
    } else {
      const auto utf8 = std::make_unique_for_overwrite<char[]>(capacity);
      std::vector<std::string_view> encoded(views);
      char* out = utf8.get();
      for (const ld::PendingUtf8& u : units) {
        const ld::Utf8Encoded e = ld::encode_utf8(u.units.data, u.units.count, u.units.width, out);
        encoded[u.index] = {out, e.size};
        out += e.size;
      }
      dedup.filter_batch(encoded, keep);
    }
    benchmark::DoNotOptimize(keep.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
  state.counters["pending_docs"] = static_cast<double>(units.size());
}

// The fused hash-and-update kernel alone on the short documents' word 5-grams (tokenized once,
// untimed): shingle lengths vary as on real text, where in the 512-shingle rows above the branch
// predictor learns the lengths of the same shingles repeated. Items are shingles.
struct TokenizedDocument {
  std::string text;                 // the normalised text
  std::vector<std::size_t> starts;  // the kernel's starts (count + ngram of them)
  std::size_t count = 0;
};

void short_kernel(benchmark::State& state) {
  const auto* documents = short_documents_for(state);
  if (documents == nullptr) return;
  const auto& docs = *documents;
  namespace mi = luminamoon::data::minhash_internal;
  mi::Shingler shingler(ShingleKind::kWord, 5);
  std::vector<TokenizedDocument> tokenized;
  std::size_t shingles = 0;
  for (const auto& d : docs) {
    TokenizedDocument t;
    shingler.run(
        d, [](void*, const std::uint64_t*, std::size_t) {},
        [](void* context, const char*, const std::size_t* starts, std::size_t count,
           std::size_t ngram) {
          auto* doc = static_cast<TokenizedDocument*>(context);
          // A ~1.2 KB document is one chunk (Shingler::kChunk shingles) at most.
          doc->starts.assign(starts, starts + count + ngram);
          doc->count = count;
        },
        &t);
    t.text = std::string(shingler.normalized()) + std::string(64, ' ');
    shingles += t.count;
    tokenized.push_back(std::move(t));
  }
  const auto& kernel = mi::active_minhash_kernel();
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> a(64);
  std::vector<std::uint64_t> b(64);
  for (auto& x : a) x = rng() | 1U;
  for (auto& x : b) x = rng();
  std::vector<std::uint32_t> mins(64);
  for (auto _ : state) {
    for (const auto& t : tokenized) {
      std::fill(mins.begin(), mins.end(), 0xFFFFFFFFU);
      kernel.update_words(t.text.data(), t.starts.data(), t.count, 5, a.data(), b.data(),
                          mins.data(), 64);
      benchmark::DoNotOptimize(mins.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(shingles));
}

void minhash_update(benchmark::State& state, Isa isa) {
  const auto& kernel = luminamoon::data::minhash_internal::minhash_kernel_for(isa);
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> hashes(512);
  std::vector<std::uint64_t> a(64);
  std::vector<std::uint64_t> b(64);
  for (auto& x : hashes) x = rng();
  for (auto& x : a) x = rng() | 1U;
  for (auto& x : b) x = rng();
  std::vector<std::uint32_t> mins(64, 0xFFFFFFFFU);
  for (auto _ : state) {
    kernel.update(hashes.data(), hashes.size(), a.data(), b.data(), mins.data(), 64);
    benchmark::DoNotOptimize(mins.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(hashes.size()));
}

// The 512 word 5-grams of real text (the licence texts, or the synthetic prose) through the
// kernel: hashed first then updated (`hash_then_update`, what the shingler did before), or hashed
// inside the kernel (`update_words`, kernels.h). Items are shingles.
void minhash_update_words(benchmark::State& state, Isa isa, bool fused) {
  const auto& kernel = luminamoon::data::minhash_internal::minhash_kernel_for(isa);
  std::string text = real_text();
  if (text.empty()) text = synthetic_text();
  // Normalise the first ~8 KB as the shingler does, and take its token starts.
  luminamoon::data::minhash_internal::Shingler shingler(ShingleKind::kWord, 1);
  shingler.run(
      std::string_view(text).substr(0, 8192), [](void*, const std::uint64_t*, std::size_t) {},
      nullptr);
  const std::string norm(shingler.normalized());
  std::vector<std::size_t> starts = {0};
  for (std::size_t i = 0; i < norm.size(); ++i) {
    if (norm[i] == ' ') starts.push_back(i + 1);
  }
  const std::size_t count = std::min<std::size_t>(512, starts.size() - 5);
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> a(64);
  std::vector<std::uint64_t> b(64);
  for (auto& x : a) x = rng() | 1U;
  for (auto& x : b) x = rng();
  std::vector<std::uint32_t> mins(64, 0xFFFFFFFFU);
  std::vector<std::uint64_t> hashes(count);
  for (auto _ : state) {
    if (fused) {
      kernel.update_words(norm.data(), starts.data(), count, 5, a.data(), b.data(), mins.data(),
                          64);
    } else {
      for (std::size_t k = 0; k < count; ++k) {
        hashes[k] =
            luminamoon::data::xxh3_64(norm.data() + starts[k], starts[k + 5] - 1 - starts[k]);
      }
      kernel.update(hashes.data(), count, a.data(), b.data(), mins.data(), 64);
    }
    benchmark::DoNotOptimize(mins.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(count));
}

void word_shingles(benchmark::State& state, bool real) {
  const auto& docs = corpus(real);
  luminamoon::data::minhash_internal::Shingler shingler(ShingleKind::kWord, 5);
  std::size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  std::uint64_t sink = 0;
  for (auto _ : state) shingle_all(shingler, docs, sink);
  benchmark::DoNotOptimize(sink);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["docs"] = static_cast<double>(docs.size());
}

void signature(benchmark::State& state, bool real) {
  const auto& docs = corpus(real);
  const MinHasher hasher(MinHashConfig{64, ShingleKind::kWord, 5, 1});
  std::vector<std::uint32_t> out(64);
  std::size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  for (auto _ : state) {
    for (const auto& d : docs) {
      hasher.signature(d, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(docs.size()));
}

void xxh3_long(benchmark::State& state, Isa isa, std::size_t size) {
  const auto& kernel = luminamoon::data::internal::xxh3_kernel_for(isa);
  std::string input(size, 'x');
  std::mt19937_64 rng(9);
  for (auto& c : input) c = static_cast<char>('a' + rng() % 26);
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernel.hash(input.data(), input.size(), 0));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(size));
}

}  // namespace

int main(int argc, char** argv) {
  for (const Isa isa : luminamoon::data::supported_isas()) {
    const std::string name(isa_name(isa));
    benchmark::RegisterBenchmark(("minhash_update/" + name).c_str(), minhash_update, isa);
    benchmark::RegisterBenchmark(("minhash_update_words/" + name + "/hash_then_update").c_str(),
                                 minhash_update_words, isa, false);
    benchmark::RegisterBenchmark(("minhash_update_words/" + name + "/update_words").c_str(),
                                 minhash_update_words, isa, true);
    for (const std::size_t size : {std::size_t{2048}, std::size_t{8192}}) {
      benchmark::RegisterBenchmark(("xxh3_long/" + name + "/" + std::to_string(size)).c_str(),
                                   xxh3_long, isa, size);
    }
  }
  namespace mi = luminamoon::data::minhash_internal;
  for (const mi::AsciiPath path : mi::kAsciiPaths) {
    if (mi::ascii_path_supported(path)) {
      benchmark::RegisterBenchmark(
          (std::string("short_shingles/corpus/") + mi::ascii_path_name(path)).c_str(),
          short_shingles, path);
    }
  }
  for (const mi::AsciiPath path : mi::kAsciiPaths) {
    if (mi::ascii_path_supported(path)) {
      benchmark::RegisterBenchmark(
          (std::string("short_tokens/corpus/") + mi::ascii_path_name(path)).c_str(), short_tokens,
          path);
    }
  }
  benchmark::RegisterBenchmark("short_signatures/corpus", short_signatures);
  benchmark::RegisterBenchmark("short_kernel/corpus", short_kernel);
  benchmark::RegisterBenchmark("short_index/corpus/reserved", short_index, true);
  benchmark::RegisterBenchmark("short_index/corpus/grown", short_index, false);
  for (const unsigned threads : {1U, 2U}) {
    benchmark::RegisterBenchmark(
        ("short_filter_batch/corpus/threads:" + std::to_string(threads)).c_str(),
        short_filter_batch, threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const bool pending : {false, true}) {
    for (const unsigned threads : {1U, 2U}) {
      benchmark::RegisterBenchmark(
          ("str_filter_batch/corpus/" + std::string(pending ? "pending" : "encoded_first") +
           "/threads:" + std::to_string(threads))
              .c_str(),
          str_filter_batch, threads, pending)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  const bool have_real = !real_text().empty();
  for (const bool real : {true, false}) {
    if (real && !have_real) continue;
    const std::string text = real ? "real" : "synthetic";
    benchmark::RegisterBenchmark(("word_shingles/" + text).c_str(), word_shingles, real);
    benchmark::RegisterBenchmark(("signature/" + text).c_str(), signature, real);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
