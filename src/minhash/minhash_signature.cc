// MinHasher: the seeded permutation family, per-document signatures through the dispatched
// kernel, and batch signatures on the shared worker pool (dynamic blocks, so long documents
// balance).
#include "luminamoon/data/minhash/minhash_signature.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "common/internal/object_pool.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/worker_pool.h"
#include "minhash/internal/kernels.h"
#include "minhash/internal/shingles.h"

namespace luminamoon::data {

using minhash_internal::active_minhash_kernel;
using minhash_internal::Shingler;

namespace {

// Below this many documents per worker a second worker costs more than it saves (a ~1 KB
// document takes ~2-3 us, waking a pool thread a few us).
constexpr std::size_t kMinDocumentsPerWorker = 16;
// Documents a worker claims at a time.
constexpr std::size_t kBlock = 16;

// What a worker keeps from one signatures() call to the next: its shingler (for the last shingle
// kind and n it ran) and its buffer for pending documents' UTF-8, taken from a pool of the
// process for the call (common/internal/object_pool.h). Made fresh each call, they were a dozen
// allocations a worker, and fresh pages whenever glibc had given the last call's memory back to
// the system, which the heap's layout decides from run to run (a page fault per 4 KiB: 10-15% of
// a filter_batch of 6K short documents). Kept only while each holds at most kKeepBytes, so one
// huge document does not pin its buffers.
struct WorkerScratch {
  static constexpr std::size_t kKeepBytes = std::size_t{1} << 20;
  std::unique_ptr<Shingler> shingler;
  Utf8Scratch utf8;

  Shingler& shingler_for(const MinHashConfig& config) {
    if (!shingler || shingler->kind() != config.shingle || shingler->ngram() != config.ngram) {
      shingler = std::make_unique<Shingler>(config.shingle, config.ngram);
    }
    return *shingler;
  }
  void trim() noexcept {
    if (shingler && shingler->text_capacity() > kKeepBytes) shingler.reset();
    utf8.release_above(kKeepBytes);
  }
};

// Never destroyed (the process's memory goes with it). Keeps as many as the most workers that
// ran at once, up to 64.
internal::ObjectPool<WorkerScratch>& scratch_pool() {
  static auto* pool = new internal::ObjectPool<WorkerScratch>(64);
  return *pool;
}

struct SignatureSink {
  const MinHasher* hasher;
  std::uint32_t* mins;
  const minhash_internal::MinHashKernel* kernel;
};

void sink_to_kernel(void* context, const std::uint64_t* hashes, std::size_t count) {
  auto* s = static_cast<SignatureSink*>(context);
  s->kernel->update(hashes, count, s->hasher->multipliers().data(), s->hasher->increments().data(),
                    s->mins, s->hasher->num_perm());
}

// Word shingles are hashed inside the kernel (kernels.h, MinHashUpdateWordsFn).
void words_to_kernel(void* context, const char* text, const std::size_t* starts, std::size_t count,
                     std::size_t ngram) {
  auto* s = static_cast<SignatureSink*>(context);
  s->kernel->update_words(text, starts, count, ngram, s->hasher->multipliers().data(),
                          s->hasher->increments().data(), s->mins, s->hasher->num_perm());
}

void compute(const MinHasher& hasher, Shingler& shingler, std::string_view document,
             std::uint32_t* out) {
  std::fill(out, out + hasher.num_perm(), 0xFFFFFFFFU);
  SignatureSink sink{&hasher, out, &active_minhash_kernel()};
  shingler.run(document, sink_to_kernel, words_to_kernel, &sink);
}

// Asks for the cache lines of the next document (up to kPrefetchBytes) into L2 while the current
// one is hashed, as StreamDeduplicator does: a batch's documents are separate heap objects in no
// particular order, so each one would start a new stream that the hardware prefetcher picks up
// only after a few misses. A ~1.2 KB document is ~19 lines; the limit keeps a long document's
// requests to a few dozen (the prefetcher follows a long read by itself).
constexpr std::size_t kPrefetchBytes = 4096;

inline void prefetch_document(std::string_view document) {
  const char* p = document.data();
  const std::size_t size = std::min(document.size(), kPrefetchBytes);
  for (std::size_t offset = 0; offset < size; offset += 64) __builtin_prefetch(p + offset, 0, 1);
}

void collect(void* context, const std::uint64_t* hashes, std::size_t count) {
  auto* out = static_cast<std::vector<std::uint64_t>*>(context);
  out->insert(out->end(), hashes, hashes + count);
}

}  // namespace

std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
  state += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void validate_minhash_config(const MinHashConfig& config) {
  if (config.num_perm < 1 || config.num_perm > kMaxNumPerm) {
    throw InvalidArgument("MinHashDeduplicator: num_perm must be an int in [1, " +
                          std::to_string(kMaxNumPerm) + "], got " +
                          std::to_string(config.num_perm));
  }
  if (config.ngram < 1 || config.ngram > kMaxNgram) {
    throw InvalidArgument("MinHashDeduplicator: ngram must be an int in [1, " +
                          std::to_string(kMaxNgram) + "], got " + std::to_string(config.ngram));
  }
  if (config.shingle != ShingleKind::kWord && config.shingle != ShingleKind::kChar) {
    throw InvalidArgument("MinHashDeduplicator: shingle must be 'word' or 'char'");
  }
}

MinHasher::MinHasher(MinHashConfig config) : config_(config) {
  validate_minhash_config(config_);
  a_.resize(config_.num_perm);
  b_.resize(config_.num_perm);
  std::uint64_t state = config_.seed;
  for (std::uint32_t i = 0; i < config_.num_perm; ++i) {
    a_[i] = splitmix64_next(state) | 1U;  // odd: x -> a * x is a bijection mod 2^64
    b_[i] = splitmix64_next(state);
  }
}

void MinHasher::signature(std::string_view document, std::span<std::uint32_t> out) const {
  if (out.size() != config_.num_perm) {
    throw InvalidArgument("MinHasher::signature: output holds " + std::to_string(out.size()) +
                          " values, num_perm is " + std::to_string(config_.num_perm));
  }
  Shingler shingler(config_.shingle, config_.ngram);
  compute(*this, shingler, document, out.data());
}

std::vector<std::uint32_t> MinHasher::signature(std::string_view document) const {
  std::vector<std::uint32_t> out(config_.num_perm);
  signature(document, out);
  return out;
}

void MinHasher::signatures(std::span<const std::string_view> documents,
                           std::span<std::uint32_t> out, unsigned threads) const {
  signatures(documents, out, threads, RangeConsumer());
}

void MinHasher::signatures(std::span<const std::string_view> documents,
                           std::span<std::uint32_t> out, unsigned threads,
                           const RangeConsumer& consume) const {
  signatures(documents, {}, out, threads, consume);
}

std::size_t MinHasher::signatures(std::span<const std::string_view> documents,
                                  std::span<const PendingUtf8> pending,
                                  std::span<std::uint32_t> out, unsigned threads,
                                  const RangeConsumer& consume) const {
  const std::size_t n = documents.size();
  const std::size_t p = config_.num_perm;
  if (out.size() != n * p) {
    throw InvalidArgument("MinHasher::signatures: output holds " + std::to_string(out.size()) +
                          " values, need " + std::to_string(n) + " x " + std::to_string(p));
  }
  check_pending(pending, n, "MinHasher::signatures");
  WorkerPool& pool = WorkerPool::shared();
  const unsigned workers = pool.workers_for(n, threads, kMinDocumentsPerWorker);
  // Per worker: its scratch, and the first pending position it found with a lone surrogate.
  std::vector<internal::ObjectPool<WorkerScratch>::Lease> scratches;
  scratches.reserve(workers);
  for (unsigned w = 0; w < workers; ++w) scratches.emplace_back(scratch_pool());
  std::vector<std::size_t> first_invalid(workers, Utf8Encoded::npos);
  // In-order hand-off: done[k] is set once block k's signatures are written. Only the calling
  // thread (worker 0) consumes: after each of its own blocks it hands every done block from
  // `next` on to consume, in order, and the rest after the pool is done. Consuming on whichever
  // worker found its block next in line (as before) moved the LSH tables between the cores'
  // caches at every change of hands (docs/benchmarks.md, "Fifth pass: the LSH index on Zen 4").
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::unique_ptr<std::atomic<bool>[]> done;
  if (consume) done = std::make_unique<std::atomic<bool>[]>(blocks);
  std::size_t next = 0;  // the caller's alone
  const auto consume_done = [&] {
    while (next < blocks && done[next].load(std::memory_order_acquire)) {
      consume(next * kBlock, std::min(n, (next + 1) * kBlock));
      ++next;
    }
  };
  pool.run(n, workers, kBlock, [&](std::size_t begin, std::size_t end, unsigned worker) {
    WorkerScratch& scratch = *scratches[worker];
    Shingler& shingler = scratch.shingler_for(config_);
    std::size_t k = first_pending_at(pending, begin);  // the next pending document's position
    for (std::size_t i = begin; i < end; ++i) {
      std::string_view document = documents[i];
      if (k < pending.size() && pending[k].index == i) {
        std::size_t invalid = Utf8Encoded::npos;
        document = scratch.utf8.encode(pending[k].units, invalid);
        if (invalid != Utf8Encoded::npos)
          first_invalid[worker] = std::min(first_invalid[worker], k);
        ++k;
      }
      if (k < pending.size() && pending[k].index == i + 1) {
        const CodeUnits& units = pending[k].units;
        prefetch_document({static_cast<const char*>(units.data), units.count * units.width});
      } else if (i + 1 < n) {
        prefetch_document(documents[i + 1]);
      }
      compute(*this, shingler, document, out.data() + i * p);
    }
    scratch.trim();
    if (consume) {
      done[begin / kBlock].store(true, std::memory_order_release);
      if (worker == 0) consume_done();
    }
  });
  // Every block is done now; the ones the helpers finished after the caller's last block remain.
  if (consume) consume_done();
  std::size_t first = Utf8Encoded::npos;
  for (const std::size_t k : first_invalid) first = std::min(first, k);
  return first;
}

std::vector<std::uint64_t> MinHasher::shingle_hashes(std::string_view document) const {
  std::vector<std::uint64_t> out;
  Shingler shingler(config_.shingle, config_.ngram);
  shingler.run(document, collect, &out);
  return out;
}

double estimate_similarity(std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  if (a.size() != b.size() || a.empty()) {
    throw InvalidArgument("estimate_similarity: signatures of " + std::to_string(a.size()) +
                          " and " + std::to_string(b.size()) + " values");
  }
  std::size_t equal = 0;
  for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i] ? 1U : 0U;
  return static_cast<double>(equal) / static_cast<double>(a.size());
}

double shingle_jaccard(const MinHasher& hasher, std::string_view a, std::string_view b) {
  std::vector<std::uint64_t> x = hasher.shingle_hashes(a);
  std::vector<std::uint64_t> y = hasher.shingle_hashes(b);
  std::sort(x.begin(), x.end());
  x.erase(std::unique(x.begin(), x.end()), x.end());
  std::sort(y.begin(), y.end());
  y.erase(std::unique(y.begin(), y.end()), y.end());
  if (x.empty() && y.empty()) return 1.0;
  std::size_t common = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < x.size() && j < y.size()) {
    if (x[i] < y[j]) {
      ++i;
    } else if (y[j] < x[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  const std::size_t all = x.size() + y.size() - common;
  return static_cast<double>(common) / static_cast<double>(all);
}

std::string normalize_for_shingles(std::string_view document) {
  Shingler shingler(ShingleKind::kWord, 1);
  shingler.run(
      document, [](void*, const std::uint64_t*, std::size_t) {}, nullptr);
  return std::string(shingler.normalized());
}

}  // namespace luminamoon::data
