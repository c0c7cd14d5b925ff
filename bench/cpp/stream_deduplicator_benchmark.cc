// Micro-benchmarks of StreamDeduplicator on 1M short (~100-byte) documents, ~20% exact duplicates.
//
//   BM_FilterBatch/threads:N   hashing (N workers) + sequential probing, fresh deduplicator
//   BM_HashDocuments/threads:N XXH3-64 of every document only
//   BM_FilterHashes            probing/staging only, hashes precomputed
//   BM_RealLong/<mode>         exact-dedup hashing of real long documents against the rate of
//                              reading the same bytes (see below; needs LUMINAMOON_BENCH_REAL)
//   BM_EncodeUtf8/<text>       encode_utf8 (how the bindings read a str that is not ASCII) of
//                              64 KiB of code units: English with 3.5% accented letters as
//                              Latin-1 and as UCS-2, Russian words (UCS-2, ~85% 2-byte),
//                              Chinese (UCS-2, ~85% 3-byte, spaces between words) and
//                              English with an emoji per ~200 characters (UCS-4);
//                              bytes_per_second is UTF-8 written
//   BM_EncodeUtf8Real/<mode>   the same on the real corpus's documents that are not ASCII (needs
//                              LUMINAMOON_BENCH_REAL), in CPython's forms: encode, encode_hash
//                              (+ XXH3, as filter_batch does), and _x8 with 8 copies (past L3)
//
// The corpus is built once, deterministically (fixed seed), in one contiguous arena: the same
// layout an Arrow utf8 array gives the Python binding. Times are wall-clock (UseRealTime), since
// hashing runs on worker threads. items_per_second is documents per second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/utf8_decode.h"
#include "luminamoon/data/common/utf8_encode.h"
#include "luminamoon/data/common/xxh3.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"
#include "real_text.h"

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

// Real long documents laid out as a Python list[str] lays them out: the 6-8 KB documents of the
// JSONL shards LUMINAMOON_BENCH_REAL names (bench/real_corpus.py), each twice (a copy in its own
// allocation), every one allocated on its own, in an order unrelated to the list's (the list is
// shuffled after the strings were made), the list repeated 10 times: bench_real_hashing.py's exact
// dedup row without the binding. What the rows compare, one thread each:
//   BM_RealLong/hash           hash_documents (XXH3 of each; the first lines of the next document
//                              and of each 4 KB page it crosses prefetched)
//   BM_RealLong/hash_whole     the same XXH3 calls with every line of the next document
//                              prefetched (what hash_documents did before)
//   BM_RealLong/hash_2lines    the same XXH3 calls with only the next document's first two lines
//                              prefetched (what it did before that)
//   BM_RealLong/read           every byte of the same documents loaded (8-byte words folded by
//                              XOR, vectorised by the compiler), the next one prefetched whole: the
//                              memory-read ceiling
//   BM_RealLong/read_cold      the same loads with no software prefetch
//   BM_RealLong/memcpy         each document copied into one buffer (what the peer's s.encode()
//                              does before it hashes)
// bytes_per_second is the documents' bytes; the hash rows against the read rows say how close
// hashing is to the rate at which one thread can read these bytes at all.
struct RealLong {
  std::vector<std::unique_ptr<char[]>> storage;
  std::vector<std::string_view> list;
  std::int64_t bytes = 0;
};

const RealLong& real_long() {
  static const RealLong instance = [] {
    RealLong r;
    std::vector<std::string> texts;
    for (std::string& t : luminamoon::data::bench::load_real_text("LUMINAMOON_BENCH_REAL")) {
      if (t.size() >= 6000 && t.size() <= 8192) texts.push_back(std::move(t));
    }
    const std::size_t distinct = texts.size() * 2;
    std::vector<std::string_view> objects(distinct);
    // Allocation order: a fixed shuffle of the documents; list order: another one.
    std::mt19937_64 rng(kSeed);
    std::vector<std::size_t> order(distinct);
    for (std::size_t i = 0; i < distinct; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::size_t i : order) {
      const std::string& text = texts[i % texts.size()];
      // A str's characters follow its 40-byte header; keep the same offset into the allocation.
      auto block = std::make_unique<char[]>(text.size() + 48);
      std::memcpy(block.get() + 48, text.data(), text.size());
      objects[i] = std::string_view(block.get() + 48, text.size());
      r.storage.push_back(std::move(block));
    }
    std::shuffle(objects.begin(), objects.end(), rng);
    for (int repeat = 0; repeat < 10; ++repeat) {
      r.list.insert(r.list.end(), objects.begin(), objects.end());
    }
    for (const std::string_view d : r.list) r.bytes += static_cast<std::int64_t>(d.size());
    return r;
  }();
  return instance;
}

void prefetch_whole(std::string_view d) {
  for (std::size_t o = 0; o < d.size() && o < 16384; o += 64)
    __builtin_prefetch(d.data() + o, 0, 1);
}

enum class RealLongMode { kHash, kHashWhole, kHash2Lines, kRead, kReadCold, kMemcpy };

void BM_RealLong(benchmark::State& state, RealLongMode mode) {
  const RealLong& r = real_long();
  if (r.list.empty()) {
    state.SkipWithError("set LUMINAMOON_BENCH_REAL to JSONL shards (bench/real_corpus.py)");
    return;
  }
  const std::size_t n = r.list.size();
  std::vector<std::uint64_t> out(n);
  std::vector<char> buffer(16384);
  for (auto _ : state) {
    switch (mode) {
      case RealLongMode::kHash:
        hash_documents(r.list, out, 1);
        break;
      case RealLongMode::kHashWhole:
        for (std::size_t i = 0; i < n; ++i) {
          if (i + 1 < n) prefetch_whole(r.list[i + 1]);
          out[i] = luminamoon::data::xxh3_64(r.list[i]);
        }
        break;
      case RealLongMode::kHash2Lines:
        for (std::size_t i = 0; i < n; ++i) {
          if (i + 1 < n) {
            __builtin_prefetch(r.list[i + 1].data());
            __builtin_prefetch(r.list[i + 1].data() + 64);
          }
          out[i] = luminamoon::data::xxh3_64(r.list[i]);
        }
        break;
      case RealLongMode::kRead:
      case RealLongMode::kReadCold:
        for (std::size_t i = 0; i < n; ++i) {
          if (mode == RealLongMode::kRead && i + 1 < n) prefetch_whole(r.list[i + 1]);
          const char* p = r.list[i].data();
          std::uint64_t acc = 0;
          const std::size_t whole = r.list[i].size() & ~std::size_t{7};
          for (std::size_t o = 0; o < whole; o += 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, p + o, 8);
            acc ^= word;
          }
          out[i] = acc;
        }
        break;
      case RealLongMode::kMemcpy:
        for (std::size_t i = 0; i < n; ++i) {
          std::memcpy(buffer.data(), r.list[i].data(), r.list[i].size());
          out[i] = static_cast<unsigned char>(buffer[i % 4096]);
        }
        break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.SetBytesProcessed(state.iterations() * r.bytes);
}
BENCHMARK_CAPTURE(BM_RealLong, hash, RealLongMode::kHash)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RealLong, hash_whole, RealLongMode::kHashWhole)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RealLong, hash_2lines, RealLongMode::kHash2Lines)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RealLong, read, RealLongMode::kRead)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RealLong, read_cold, RealLongMode::kReadCold)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RealLong, memcpy, RealLongMode::kMemcpy)->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

enum class EncodeText { kLatin1Sparse, kUcs2Sparse, kUcs2Russian, kUcs2Chinese, kUcs4Emoji };

// 64 Ki code units of words of 2-9 letters and spaces, deterministic.
template <typename Unit>
std::vector<Unit> encode_text(EncodeText text) {
  std::mt19937_64 rng(kSeed);
  std::vector<Unit> units;
  while (units.size() < (std::size_t{1} << 16)) {
    const std::size_t letters = 2 + rng() % 8;
    for (std::size_t k = 0; k < letters; ++k) {
      std::uint32_t c = 'a' + static_cast<std::uint32_t>(rng() % 26);
      switch (text) {
        case EncodeText::kLatin1Sparse:
        case EncodeText::kUcs2Sparse:
          if (rng() % 1000 < 35)
            c = text == EncodeText::kUcs2Sparse && rng() % 4 == 0 ? 0x20AC : 0xE9;
          break;
        case EncodeText::kUcs2Russian:
          c = 0x430 + static_cast<std::uint32_t>(rng() % 32);
          break;
        case EncodeText::kUcs2Chinese:
          c = 0x4E00 + static_cast<std::uint32_t>(rng() % 3000);
          break;
        case EncodeText::kUcs4Emoji:
          if (rng() % 200 == 0) c = 0x1F600 + static_cast<std::uint32_t>(rng() % 64);
          break;
      }
      units.push_back(static_cast<Unit>(c));
    }
    units.push_back(' ');
  }
  return units;
}

template <typename Unit>
void encode_utf8_loop(benchmark::State& state, EncodeText text) {
  const std::vector<Unit> units = encode_text<Unit>(text);
  std::vector<char> out(luminamoon::data::utf8_encode_capacity(units.size(), sizeof(Unit)));
  std::size_t written = 0;
  for (auto _ : state) {
    const auto r =
        luminamoon::data::encode_utf8(units.data(), units.size(), sizeof(Unit), out.data());
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
    written += r.size;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(written));
}

void BM_EncodeUtf8(benchmark::State& state, EncodeText text) {
  switch (text) {
    case EncodeText::kLatin1Sparse:
      return encode_utf8_loop<std::uint8_t>(state, text);
    case EncodeText::kUcs2Sparse:
    case EncodeText::kUcs2Russian:
    case EncodeText::kUcs2Chinese:
      return encode_utf8_loop<std::uint16_t>(state, text);
    case EncodeText::kUcs4Emoji:
      return encode_utf8_loop<std::uint32_t>(state, text);
  }
}

}  // namespace

// The corpus's documents that are not ASCII, each in the form CPython keeps it (Latin-1, UCS-2 or
// UTF-32 by its largest code point) in its own allocation, in a fixed shuffle: ~8 MB of units
// on bench/real_corpus.py's output, past L2, as a batch of fresh str objects is. Encoded one by
// one into one reused buffer, and hashed there in the `hash` variant (what
// StreamDeduplicator.filter_batch does with such a str). bytes_per_second is UTF-8 written.
struct RealUnits {
  std::vector<std::unique_ptr<std::byte[]>> storage;
  struct Doc {
    const std::byte* units;
    std::size_t count;
    unsigned width;
  };
  std::vector<Doc> docs;
  std::size_t max_capacity = 0;
};

RealUnits make_real_units(int copies) {
  RealUnits r;
  const std::vector<std::string> texts =
      luminamoon::data::bench::load_real_text("LUMINAMOON_BENCH_REAL");
  for (int copy = 0; copy < copies; ++copy) {
    for (const std::string& t : texts) {
      std::vector<std::uint32_t> points;
      const auto* p = reinterpret_cast<const std::uint8_t*>(t.data());
      for (std::size_t i = 0; i < t.size();) {
        points.push_back(luminamoon::data::utf8_internal::decode_valid(p, i));
      }
      const std::uint32_t top =
          points.empty() ? 0 : *std::max_element(points.begin(), points.end());
      if (top < 0x80) continue;
      const unsigned width = top < 0x100 ? 1 : top < 0x10000 ? 2 : 4;
      auto block = std::make_unique<std::byte[]>(points.size() * width + 48);
      std::byte* units = block.get() + 48;  // a str's characters follow its header
      for (std::size_t k = 0; k < points.size(); ++k) {
        if (width == 1) units[k] = static_cast<std::byte>(points[k]);
        if (width == 2) {
          const auto u = static_cast<std::uint16_t>(points[k]);
          std::memcpy(units + 2 * k, &u, 2);
        }
        if (width == 4) std::memcpy(units + 4 * k, &points[k], 4);
      }
      r.docs.push_back({units, points.size(), width});
      r.max_capacity =
          std::max(r.max_capacity, luminamoon::data::utf8_encode_capacity(points.size(), width));
      r.storage.push_back(std::move(block));
    }
  }
  std::mt19937_64 rng(kSeed);
  std::shuffle(r.docs.begin(), r.docs.end(), rng);
  return r;
}

void BM_EncodeUtf8Real(benchmark::State& state, bool hash, int copies) {
  static const RealUnits one = make_real_units(1);
  static const RealUnits many = make_real_units(8);
  const RealUnits& r = copies == 1 ? one : many;
  if (r.docs.empty()) {
    state.SkipWithError("set LUMINAMOON_BENCH_REAL to JSONL shards (bench/real_corpus.py)");
    return;
  }
  std::vector<char> out(r.max_capacity);
  std::int64_t written = 0;
  std::uint64_t sum = 0;
  for (auto _ : state) {
    for (const RealUnits::Doc& d : r.docs) {
      const auto e = luminamoon::data::encode_utf8(d.units, d.count, d.width, out.data());
      if (hash) sum += luminamoon::data::xxh3_64(std::string_view(out.data(), e.size));
      written += static_cast<std::int64_t>(e.size);
      benchmark::DoNotOptimize(out.data());
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(r.docs.size()));
  state.SetBytesProcessed(written);
}

BENCHMARK_CAPTURE(BM_EncodeUtf8Real, encode, false, 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeUtf8Real, encode_hash, true, 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeUtf8Real, encode_x8, false, 8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeUtf8Real, encode_hash_x8, true, 8)->Unit(benchmark::kMillisecond);
// decode_utf8 (with utf8_shape, as the bindings make a str) of the UTF-8 of encode_text's texts
// and of the real corpus's documents that are not ASCII (one by one, into one reused buffer);
// bytes_per_second is UTF-8 read.
template <typename Unit>
std::string utf8_of(const std::vector<Unit>& units) {
  std::string out(luminamoon::data::utf8_encode_capacity(units.size(), sizeof(Unit)), '\0');
  out.resize(
      luminamoon::data::encode_utf8(units.data(), units.size(), sizeof(Unit), out.data()).size);
  return out;
}

void decode_loop(benchmark::State& state, const std::vector<std::string>& texts) {
  std::size_t most = 0;
  for (const std::string& t : texts) most = std::max(most, t.size());
  std::vector<std::uint32_t> out(most);
  std::int64_t read = 0;
  for (auto _ : state) {
    for (const std::string& t : texts) {
      const luminamoon::data::Utf8Shape shape = luminamoon::data::utf8_shape(t);
      luminamoon::data::decode_utf8(t, shape.width, out.data(), shape.code_points);
      benchmark::DoNotOptimize(out.data());
      read += static_cast<std::int64_t>(t.size());
    }
  }
  state.SetBytesProcessed(read);
}

void BM_DecodeUtf8(benchmark::State& state, EncodeText text) {
  switch (text) {
    case EncodeText::kLatin1Sparse:
      return decode_loop(state, {utf8_of(encode_text<std::uint8_t>(text))});
    case EncodeText::kUcs2Sparse:
    case EncodeText::kUcs2Russian:
    case EncodeText::kUcs2Chinese:
      return decode_loop(state, {utf8_of(encode_text<std::uint16_t>(text))});
    case EncodeText::kUcs4Emoji:
      return decode_loop(state, {utf8_of(encode_text<std::uint32_t>(text))});
  }
}

void BM_DecodeUtf8Real(benchmark::State& state) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (std::string& t : luminamoon::data::bench::load_real_text("LUMINAMOON_BENCH_REAL")) {
      if (!luminamoon::data::utf8_shape(t).ascii) out.push_back(std::move(t));
    }
    return out;
  }();
  if (texts.empty()) {
    state.SkipWithError("set LUMINAMOON_BENCH_REAL to JSONL shards (bench/real_corpus.py)");
    return;
  }
  decode_loop(state, texts);
}

BENCHMARK(BM_DecodeUtf8Real)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeUtf8, latin1_sparse, EncodeText::kLatin1Sparse);
BENCHMARK_CAPTURE(BM_DecodeUtf8, ucs2_sparse, EncodeText::kUcs2Sparse);
BENCHMARK_CAPTURE(BM_DecodeUtf8, ucs2_russian, EncodeText::kUcs2Russian);
BENCHMARK_CAPTURE(BM_DecodeUtf8, ucs2_chinese, EncodeText::kUcs2Chinese);
BENCHMARK_CAPTURE(BM_DecodeUtf8, ucs4_emoji, EncodeText::kUcs4Emoji);
BENCHMARK_CAPTURE(BM_EncodeUtf8, latin1_sparse, EncodeText::kLatin1Sparse);
BENCHMARK_CAPTURE(BM_EncodeUtf8, ucs2_sparse, EncodeText::kUcs2Sparse);
BENCHMARK_CAPTURE(BM_EncodeUtf8, ucs2_russian, EncodeText::kUcs2Russian);
BENCHMARK_CAPTURE(BM_EncodeUtf8, ucs2_chinese, EncodeText::kUcs2Chinese);
BENCHMARK_CAPTURE(BM_EncodeUtf8, ucs4_emoji, EncodeText::kUcs4Emoji);
