// StreamDeduplicator: parallel hashing, sequential first-occurrence probing, two-stage sets.
#include "luminamoon/data/dedup/stream_deduplicator.h"

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <memory>

#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/worker_pool.h"
#include "luminamoon/data/common/xxh3.h"

#include "common/internal/xxh3_kernels.h"

namespace luminamoon::data {
namespace {

// Keys are XXH3-64 values, already avalanched: the identity is a perfect hash for SwissTable's
// H1/H2 split (H2 uses the low 7 bits, H1 the rest), and skips a second hashing pass.
struct IdentityHash {
  std::size_t operator()(std::uint64_t key) const noexcept { return static_cast<std::size_t>(key); }
};

using HashSet = absl::flat_hash_set<std::uint64_t, IdentityHash>;

// Below this many documents per worker a thread costs more than it saves (measured on short
// ~100-byte documents: one XXH3 call is ~15 ns, waking a pool thread a few us).
constexpr std::size_t kMinDocumentsPerWorker = 16 * 1024;
// Documents a worker claims at a time (uniform cost: large blocks, little contention).
constexpr std::size_t kHashBlock = 4096;
// A hashing job is sized by its bytes, a document counting as at least this many: short
// documents get the job above (16K of them a worker, blocks of 4,096), and long ones the same
// bytes a worker and a block: 1,410 real ~7.8 KB documents (11 MB) had been one block of one
// worker, whatever `threads` said.
constexpr std::size_t kShortDocumentBytes = 100;

void check_output_size(const char* what, std::size_t outputs, std::size_t documents) {
  if (outputs != documents) {
    throw InvalidArgument(std::string(what) + ": output size " + std::to_string(outputs) +
                          " != document count " + std::to_string(documents));
  }
}

struct HashJob {
  unsigned workers = 1;
  std::size_t block = kHashBlock;  // documents
};

HashJob hash_job(std::size_t documents, std::size_t bytes, unsigned threads) {
  const std::size_t cost = std::max(bytes, documents * kShortDocumentBytes);
  HashJob job;
  job.workers =
      WorkerPool::shared().workers_for(cost, threads, kMinDocumentsPerWorker * kShortDocumentBytes);
  if (cost > 0) {
    job.block = std::clamp<std::size_t>(
        static_cast<std::size_t>(static_cast<double>(documents) *
                                 static_cast<double>(kHashBlock * kShortDocumentBytes) /
                                 static_cast<double>(cost)),
        1, kHashBlock);
  }
  return job;
}

// How many keys ahead filter_hashes prefetches; ~a DRAM latency's worth of probes.
constexpr std::size_t kPrefetchDistance = 8;

// The most bytes of the next document hash_documents asks for ahead of hashing it.
constexpr std::size_t kDocumentPrefetchBytes = 16 * 1024;
// Cache lines asked for at the document's start and at the start of each 4 KB page it crosses.
constexpr std::size_t kPrefetchLinesPerPage = 2;
constexpr std::uintptr_t kPageSize = 4096;

// Starts the streams of the next document while the current one is hashed. The documents of a
// Python list are separate heap objects in no particular order, so each one starts a new stream;
// a hardware prefetcher picks it up only after a few misses, and a stream prefetcher that does
// not cross 4 KB pages restarts at each one, so a 7.9 KB document is two or three streams. XXH3's
// own prefetch runs only 384 bytes ahead. So the first lines of the document and of every page it
// crosses are requested (PREFETCHT2, an outer cache, so the current document's lines stay in L1),
// and the hardware streams the rest. History, on 7.9 KB real documents in shuffled order
// (docs/benchmarks.md, BM_RealLong): the first two lines only, 0.48-0.56 us per document on the
// box of that time; every line of the next document, 0.29-0.32 us there, but 1.2x slower than
// these page heads on a Sapphire Rapids core (5.8-5.9 against 4.8-5.0 ms a pass: ~123 prefetches
// in a burst fill the miss buffers the current document's loads need, where this core's own
// prefetchers already follow the pages). The page heads were not measured on the older box
// (gone); BM_RealLong/hash_whole keeps the every-line variant measurable on any machine.
inline void prefetch_document(std::string_view document) {
  const char* p = document.data();
  const std::size_t size = std::min(document.size(), kDocumentPrefetchBytes);
  // Offsets, not pointers past the end: the page start is found from the address.
  std::size_t page = 0;
  while (page < size) {
    const std::size_t lines_end = std::min(size, page + 64 * kPrefetchLinesPerPage);
    for (std::size_t offset = page; offset < lines_end; offset += 64) {
      __builtin_prefetch(p + offset, 0, 1);
    }
    page += kPageSize - (reinterpret_cast<std::uintptr_t>(p + page) & (kPageSize - 1));
  }
}

}  // namespace

struct StreamDeduplicator::Sets {
  HashSet committed;
  HashSet staged;
  std::vector<std::uint64_t> staged_order;  // WAL order
};

void hash_documents(std::span<const std::string_view> documents, std::span<std::uint64_t> out,
                    unsigned threads) {
  check_output_size("hash_documents", out.size(), documents.size());
  const std::size_t n = documents.size();
  std::size_t bytes = 0;
  for (const std::string_view d : documents) bytes += d.size();
  const HashJob job = hash_job(n, bytes, threads);
  WorkerPool::shared().run(
      n, job.workers, job.block, [&](std::size_t begin, std::size_t end, unsigned) {
        for (std::size_t i = begin; i < end; ++i) {
          if (i + 1 < end) prefetch_document(documents[i + 1]);
          out[i] = internal::xxh3_64_bulk(documents[i].data(), documents[i].size());
        }
      });
}

std::size_t hash_code_units(std::span<const CodeUnits> documents, std::span<std::uint64_t> out,
                            unsigned threads) {
  check_output_size("hash_code_units", out.size(), documents.size());
  const std::size_t n = documents.size();
  std::size_t bytes = 0;
  for (const CodeUnits& d : documents) bytes += d.count * d.width;
  const HashJob job = hash_job(n, bytes, threads);
  // Per worker slot: its buffer, and the smallest index it found with a unit that is not a
  // scalar value (the smallest of those is the answer, whichever worker ran which block).
  struct Slot {
    Utf8Scratch scratch;
    std::size_t first_invalid = Utf8Encoded::npos;
  };
  std::vector<Slot> slots(job.workers);
  WorkerPool::shared().run(
      n, job.workers, job.block, [&](std::size_t begin, std::size_t end, unsigned worker) {
        Slot& slot = slots[worker];
        for (std::size_t i = begin; i < end; ++i) {
          const CodeUnits& d = documents[i];
          if (i + 1 < end) {
            prefetch_document({static_cast<const char*>(documents[i + 1].data),
                               documents[i + 1].count * documents[i + 1].width});
          }
          std::size_t first_invalid = Utf8Encoded::npos;
          const std::string_view utf8 = slot.scratch.encode(d, first_invalid);
          out[i] = internal::xxh3_64_bulk(utf8.data(), utf8.size());
          if (first_invalid != Utf8Encoded::npos)
            slot.first_invalid = std::min(slot.first_invalid, i);
        }
      });
  std::size_t first_invalid = Utf8Encoded::npos;
  for (const Slot& slot : slots) first_invalid = std::min(first_invalid, slot.first_invalid);
  return first_invalid;
}

StreamDeduplicator::StreamDeduplicator(StateTracker* tracker, StreamDeduplicatorOptions options)
    : sets_(std::make_unique<Sets>()), options_(options) {
  if (tracker == nullptr) return;
  // Set before attaching: from then on the tracker may call prepare_commit on another thread.
  tracker_ = tracker;
  try {
    tracker->attach(this);
  } catch (...) {
    tracker_ = nullptr;
    throw;
  }
  try {
    const std::vector<std::uint64_t> hashes = tracker->read_committed_hashes();
    std::lock_guard lock(mutex_);
    sets_->committed.reserve(hashes.size());
    sets_->committed.insert(hashes.begin(), hashes.end());
  } catch (...) {
    tracker->detach(this);
    tracker_ = nullptr;
    throw;
  }
}

StreamDeduplicator::~StreamDeduplicator() {
  StateTracker* tracker = nullptr;
  {
    std::lock_guard lock(mutex_);
    tracker = tracker_;
    tracker_ = nullptr;
  }
  if (tracker != nullptr) tracker->detach(this);
}

bool StreamDeduplicator::is_unique(std::string_view document) {
  return is_unique_hash(xxh3_64(document));
}

bool StreamDeduplicator::is_unique_hash(std::uint64_t hash) {
  std::lock_guard lock(mutex_);
  if (sets_->committed.contains(hash)) return false;
  if (!sets_->staged.insert(hash).second) return false;
  sets_->staged_order.push_back(hash);
  return true;
}

bool StreamDeduplicator::contains(std::string_view document) const {
  return contains_hash(xxh3_64(document));
}

bool StreamDeduplicator::contains_hash(std::uint64_t hash) const {
  std::lock_guard lock(mutex_);
  return sets_->committed.contains(hash) || sets_->staged.contains(hash);
}

void StreamDeduplicator::filter_batch(std::span<const std::string_view> documents,
                                      std::span<std::uint8_t> keep) {
  std::vector<std::uint64_t> hashes(documents.size());
  hash_documents(documents, hashes, options_.threads);
  filter_hashes(hashes, keep);
}

void StreamDeduplicator::filter_hashes(std::span<const std::uint64_t> hashes,
                                       std::span<std::uint8_t> keep) {
  if (keep.size() != hashes.size()) {
    throw InvalidArgument("filter_batch: mask size " + std::to_string(keep.size()) +
                          " != document count " + std::to_string(hashes.size()));
  }
  std::lock_guard lock(mutex_);
  Sets& s = *sets_;
  s.staged.reserve(s.staged.size() + hashes.size());
  s.staged_order.reserve(s.staged_order.size() + hashes.size());
  // Sequential in input order: this is what makes "first occurrence wins" exact and the answer
  // independent of how many threads hashed.
  const std::size_t n = hashes.size();
  const bool probe_committed = !s.committed.empty();
  for (std::size_t i = 0; i < n; ++i) {
    // Large sets miss the cache on nearly every probe; asking for the slot groups a few keys
    // ahead overlaps those misses (no rehash can happen in the loop: staged was reserved above).
    if (i + kPrefetchDistance < n) {
      const std::uint64_t ahead = hashes[i + kPrefetchDistance];
      if (probe_committed) s.committed.prefetch(ahead);
      s.staged.prefetch(ahead);
    }
    const std::uint64_t h = hashes[i];
    const bool fresh = !(probe_committed && s.committed.contains(h)) && s.staged.insert(h).second;
    if (fresh) s.staged_order.push_back(h);
    keep[i] = fresh ? 1 : 0;
  }
}

void StreamDeduplicator::ensure_not_orphaned(const char* operation) const {
  std::lock_guard lock(mutex_);
  if (orphaned_) {
    throw Error(std::string("StreamDeduplicator.") + operation +
                ": the StateTracker it was attached to is closed, so nothing can be committed "
                "durably any more; open a new tracker and deduplicator");
  }
}

void StreamDeduplicator::commit() {
  ensure_not_orphaned("commit");
  StateTracker* tracker = this->tracker();
  if (tracker != nullptr) {
    tracker->commit();  // WAL + slot + promote_staged(), SPEC 3.3
    return;
  }
  promote_staged();
}

void StreamDeduplicator::rollback() {
  ensure_not_orphaned("rollback");
  StateTracker* tracker = this->tracker();
  if (tracker != nullptr) {
    tracker->rollback();
    return;
  }
  drop_staged();
}

std::size_t StreamDeduplicator::staged_count() const {
  std::lock_guard lock(mutex_);
  return sets_->staged_order.size();
}

std::size_t StreamDeduplicator::committed_count() const {
  std::lock_guard lock(mutex_);
  return sets_->committed.size();
}

std::size_t StreamDeduplicator::size() const {
  std::lock_guard lock(mutex_);
  return sets_->committed.size() + sets_->staged_order.size();
}

StateTracker* StreamDeduplicator::tracker() const noexcept {
  std::lock_guard lock(mutex_);
  return tracker_;
}

std::size_t StreamDeduplicator::memory_bytes() const {
  std::lock_guard lock(mutex_);
  // A SwissTable slot is the key plus one control byte; capacity() counts slots.
  const auto set_bytes = [](const HashSet& set) {
    return set.capacity() * (sizeof(std::uint64_t) + 1);
  };
  return set_bytes(sets_->committed) + set_bytes(sets_->staged) +
         sets_->staged_order.capacity() * sizeof(std::uint64_t);
}

bool StreamDeduplicator::has_staged() const {
  std::lock_guard lock(mutex_);
  return !sets_->staged_order.empty();
}

void StreamDeduplicator::prepare_commit(std::uint64_t epoch, bool durable) {
  (void)epoch;    // the WAL carries no epoch: the slot's dedup_count says what is committed
  (void)durable;  // the tracker's WAL file follows the tracker's durability
  std::vector<std::uint64_t> hashes;
  StateTracker* tracker = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Exactly the hashes staged now. Other threads may keep staging while the WAL is written:
    // they only append to staged_order, and drop_staged needs the tracker's mutex, which the
    // committing thread holds, so this prefix stays put until finish_commit.
    const std::size_t count = std::min(sets_->staged_order.size(), commit_limit_);
    hashes.assign(sets_->staged_order.begin(),
                  sets_->staged_order.begin() + static_cast<std::ptrdiff_t>(count));
    prepared_ = 0;
    tracker = tracker_;
  }
  if (tracker == nullptr) return;
  tracker->append_wal_locked(hashes);
  std::lock_guard lock(mutex_);
  prepared_ = hashes.size();
}

void StreamDeduplicator::finish_commit() noexcept {
  std::lock_guard lock(mutex_);
  Sets& s = *sets_;
  const auto end = s.staged_order.begin() + static_cast<std::ptrdiff_t>(prepared_);
  if (prepared_ == s.staged_order.size()) {
    s.committed.insert(s.staged_order.begin(), s.staged_order.end());
    s.staged.clear();
    s.staged_order.clear();
  } else {
    // Hashes staged during the commit are not on disk: they stay staged for the next one.
    for (auto it = s.staged_order.begin(); it != end; ++it) {
      s.committed.insert(*it);
      s.staged.erase(*it);
    }
    s.staged_order.erase(s.staged_order.begin(), end);
  }
  prepared_ = 0;
  commit_limit_ = SIZE_MAX;
}

void StreamDeduplicator::limit_next_commit(std::size_t count) {
  std::lock_guard lock(mutex_);
  commit_limit_ = count;
}

void StreamDeduplicator::promote_staged() {
  std::lock_guard lock(mutex_);
  Sets& s = *sets_;
  if (commit_limit_ < s.staged_order.size()) {
    // limit_next_commit: only a prefix is committed; the rest stays staged.
    const auto end = s.staged_order.begin() + static_cast<std::ptrdiff_t>(commit_limit_);
    for (auto it = s.staged_order.begin(); it != end; ++it) {
      s.committed.insert(*it);
      s.staged.erase(*it);
    }
    s.staged_order.erase(s.staged_order.begin(), end);
  } else {
    s.committed.insert(s.staged_order.begin(), s.staged_order.end());
    s.staged.clear();
    s.staged_order.clear();
  }
  commit_limit_ = SIZE_MAX;
}

void StreamDeduplicator::drop_staged() noexcept {
  std::lock_guard lock(mutex_);
  sets_->staged.clear();
  sets_->staged_order.clear();
  prepared_ = 0;
  commit_limit_ = SIZE_MAX;
}

void StreamDeduplicator::tracker_closed() noexcept {
  std::lock_guard lock(mutex_);
  tracker_ = nullptr;
  orphaned_ = true;
}

}  // namespace luminamoon::data
