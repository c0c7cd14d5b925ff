// MinHashDeduplicator: option validation, streaming dedup over the LSH index, offline clusters,
// and the commit-participant side of persistence (companion EpochLog of index rows).
#include "luminamoon/data/minhash/minhash_deduplicator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <span>

#include "common/internal/object_pool.h"
#include "luminamoon/data/checkpoint/epoch_log.h"
#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/minhash/minhash_record.h"
#include "minhash/internal/lsh_index.h"

namespace luminamoon::data {

using minhash_internal::LshIndex;
using minhash_internal::pack_row;

namespace {

// Signature values filter_batch holds at once (4 MiB): 16,384 documents at 64 permutations.
constexpr std::size_t kBatchChunkValues = std::size_t{1} << 20;

// A buffer for a chunk's signatures, kept from call to call in a pool of the process
// (common/internal/object_pool.h): a buffer of its own each call was fresh pages whenever glibc
// had given the last one's back to the system, which the heap's layout decides: a page fault per
// 4 KiB, ~400 for a batch of 6K short documents, 10-15% of the call.
struct SignatureChunk {
  std::unique_ptr<std::uint32_t[]> buffer;
  std::size_t capacity = 0;
  std::span<std::uint32_t> first(std::size_t values) {
    if (values > capacity) {
      buffer = std::make_unique_for_overwrite<std::uint32_t[]>(values);
      capacity = values;
    }
    return {buffer.get(), values};
  }
};

// Never destroyed; keeps the buffers of up to 8 calls at once (4 MiB each at most).
internal::ObjectPool<SignatureChunk>& chunk_pool() {
  static auto* pool = new internal::ObjectPool<SignatureChunk>(8);
  return *pool;
}

// Trackers that have a MinHashDeduplicator attached: two would write the same companion file.
std::mutex registry_mutex;
std::vector<const StateTracker*> registry;

void register_tracker(const StateTracker* tracker) {
  std::lock_guard lock(registry_mutex);
  if (std::find(registry.begin(), registry.end(), tracker) != registry.end()) {
    throw Error("checkpoint " + tracker->path() +
                " already has a MinHashDeduplicator attached; one tracker persists one index "
                "(use that deduplicator, or detach it by deleting it first)");
  }
  registry.push_back(tracker);
}

void unregister_tracker(const StateTracker* tracker) noexcept {
  std::lock_guard lock(registry_mutex);
  registry.erase(std::remove(registry.begin(), registry.end(), tracker), registry.end());
}

const char* shingle_name(ShingleKind kind) { return kind == ShingleKind::kWord ? "word" : "char"; }

std::string describe(const MinHashConfig& c, std::uint32_t bits) {
  return "num_perm=" + std::to_string(c.num_perm) + ", shingle='" + shingle_name(c.shingle) +
         "', ngram=" + std::to_string(c.ngram) + ", seed=" + std::to_string(c.seed) +
         ", value_bits=" + std::to_string(bits);
}

LshShape resolve_shape(const MinHashOptions& o) {
  const std::uint32_t p = o.config.num_perm;
  LshShape shape{o.bands, o.rows};
  if (shape.bands == 0 && shape.rows == 0) return optimal_lsh_shape(o.threshold, p);
  if (shape.bands == 0) shape.bands = p / shape.rows;
  if (shape.rows == 0) shape.rows = p / shape.bands;
  if (shape.bands == 0 || shape.rows == 0 ||
      std::uint64_t{shape.bands} * shape.rows > std::uint64_t{p}) {
    // The resolved shape, and which half was derived: the same wording as the fallback.
    const char* derived = o.bands == 0  ? " (bands derived as num_perm // rows)"
                          : o.rows == 0 ? " (rows derived as num_perm // bands)"
                                        : "";
    throw InvalidArgument("MinHashDeduplicator: bands * rows must be at most num_perm (" +
                          std::to_string(p) + "), got bands=" + std::to_string(shape.bands) +
                          ", rows=" + std::to_string(shape.rows) + derived);
  }
  return shape;
}

std::uint64_t find_root(std::vector<std::uint64_t>& parent, std::uint64_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];  // path halving
    x = parent[x];
  }
  return x;
}

}  // namespace

std::string minhash_companion_path(const std::string& meta_path) { return meta_path + ".minhash"; }

MinHashDeduplicator::MinHashDeduplicator(StateTracker* tracker, MinHashOptions options)
    : options_(options), hasher_(options.config) {
  if (!(options_.threshold > 0.0 && options_.threshold <= 1.0)) {
    throw InvalidArgument("MinHashDeduplicator: threshold must be a number in (0, 1], got " +
                          std::to_string(options_.threshold));
  }
  shape_ = resolve_shape(options_);
  value_bits_ = lsh_value_bits(shape_.rows, options_.store_signatures);
  min_matches_ = lsh_min_matches(options_.threshold, options_.config.num_perm, value_bits_);
  index_ = std::make_unique<LshIndex>(options_.config.num_perm, shape_, value_bits_, min_matches_);
  if (tracker == nullptr) return;
  if (tracker->options().read_only) {
    throw Error("MinHashDeduplicator: checkpoint " + tracker->path() +
                " was opened read_only=True; the index can only attach to a writer");
  }
  register_tracker(tracker);
  try {
    companion_path_ = minhash_companion_path(tracker->path());
    load_committed(*tracker);
    tracker->attach_participant(this);
  } catch (...) {
    unregister_tracker(tracker);
    throw;
  }
  tracker_ = tracker;
}

void MinHashDeduplicator::load_committed(const StateTracker& tracker) {
  const CompanionHistory history = tracker.companion_history(companion_kind());
  log_ = std::make_unique<EpochLog>(companion_path_, tracker.committed().epoch, false,
                                    tracker.options().durable, history);
  std::vector<std::vector<std::uint8_t>> records = log_->take_committed_records();
  for (std::vector<std::uint8_t>& payload : records) {
    const DecodedMinHashRecord record = decode_minhash_record(payload, companion_path_);
    const MinHashRecordHeader& h = record.header;
    if (!(h.config == options_.config) || h.value_bits != value_bits_) {
      throw ConfigError("MinHashDeduplicator: " + companion_path_ + " holds an index built with " +
                        describe(h.config, h.value_bits) + "; this deduplicator has " +
                        describe(options_.config, value_bits_) +
                        " (value_bits follows rows and store_signatures); open it with the "
                        "settings it was built with, or delete the file to start a new index");
    }
    if (h.first_doc != index_->size()) {
      throw CorruptCheckpointError("corrupt MinHash index " + companion_path_ +
                                   ": a record starts at document " + std::to_string(h.first_doc) +
                                   " but " + std::to_string(index_->size()) +
                                   " documents precede it; restore it from a backup");
    }
    index_->load_committed(record.rows.data(), h.count);
    std::vector<std::uint8_t>().swap(payload);  // free as we go: the rows now live in the index
  }
  index_->rebuild_committed();
}

MinHashDeduplicator::~MinHashDeduplicator() { detach(); }

void MinHashDeduplicator::detach() noexcept {
  StateTracker* tracker = nullptr;
  {
    std::lock_guard lock(mutex_);
    tracker = tracker_;
    tracker_ = nullptr;
  }
  if (tracker != nullptr) {
    tracker->detach_participant(this);
    unregister_tracker(tracker);
  }
}

void MinHashDeduplicator::tracker_closed() noexcept {
  StateTracker* tracker = nullptr;
  {
    std::lock_guard lock(mutex_);
    tracker = tracker_;
    tracker_ = nullptr;
    orphaned_ = true;
    log_.reset();
  }
  if (tracker != nullptr) unregister_tracker(tracker);
}

void MinHashDeduplicator::ensure_not_orphaned(const char* operation) const {
  std::lock_guard lock(mutex_);
  if (orphaned_) {
    throw Error(std::string("MinHashDeduplicator.") + operation +
                ": the StateTracker it was attached to is closed, so nothing can be committed "
                "durably any more; open a new tracker and deduplicator");
  }
}

StateTracker* MinHashDeduplicator::tracker() const noexcept {
  std::lock_guard lock(mutex_);
  return tracker_;
}

bool MinHashDeduplicator::is_unique(std::string_view document) {
  const std::vector<std::uint32_t> signature = hasher_.signature(document);
  std::vector<std::uint8_t> row(index_->row_bytes());
  pack_row(signature.data(), hasher_.num_perm(), value_bits_, row.data());
  std::lock_guard lock(mutex_);
  return index_->add_if_unique(row.data());
}

void MinHashDeduplicator::filter_batch(std::span<const std::string_view> documents,
                                       std::span<std::uint8_t> keep) {
  filter_batch(documents, {}, keep);
}

std::size_t MinHashDeduplicator::filter_batch(std::span<const std::string_view> documents,
                                              std::span<const PendingUtf8> pending,
                                              std::span<std::uint8_t> keep) {
  if (keep.size() != documents.size()) {
    throw InvalidArgument("filter_batch: mask size " + std::to_string(keep.size()) +
                          " != document count " + std::to_string(documents.size()));
  }
  check_pending(pending, documents.size(), "filter_batch");
  const std::size_t p = hasher_.num_perm();
  const std::size_t chunk = kBatchChunkValues / p;
  const internal::ObjectPool<SignatureChunk>::Lease chunk_buffer(chunk_pool());
  const std::span<std::uint32_t> values =
      chunk_buffer->first(std::min(chunk, documents.size()) * p);
  std::vector<std::uint8_t> row(index_->row_bytes());
  std::vector<PendingUtf8> chunk_pending;  // a later chunk's entries, their indices made relative
  // Probing is sequential in input order ("first occurrence wins", thread-count independence)
  // but pipelined: each finished range of signatures is probed while the pool computes the
  // next ones. The lock is held across the whole batch, so no other call stages documents in
  // between, and a document with a lone surrogate unstages exactly this batch's documents.
  std::lock_guard lock(mutex_);
  const std::uint64_t staged_before = index_->staged();
  std::size_t first_pending = 0;  // the chunk's first entry of `pending`
  for (std::size_t begin = 0; begin < documents.size(); begin += chunk) {
    const std::size_t n = std::min(chunk, documents.size() - begin);
    const std::size_t end_pending = first_pending_at(pending, begin + n);
    std::span<const PendingUtf8> here = pending.subspan(first_pending, end_pending - first_pending);
    if (begin != 0) {
      chunk_pending.assign(here.begin(), here.end());
      for (PendingUtf8& entry : chunk_pending) entry.index -= begin;
      here = chunk_pending;
    }
    const std::span<std::uint32_t> signatures = values.first(n * p);
    index_->reserve_staged(n);
    const std::size_t invalid = hasher_.signatures(
        documents.subspan(begin, n), here, signatures, options_.threads,
        [&](std::size_t from, std::size_t to) {
          for (std::size_t i = from; i < to; ++i) {
            pack_row(signatures.data() + i * p, hasher_.num_perm(), value_bits_, row.data());
            keep[begin + i] = index_->add_if_unique(row.data()) ? 1 : 0;
          }
        });
    if (invalid != Utf8Encoded::npos) {
      index_->truncate_staged(staged_before);
      return first_pending + invalid;
    }
    first_pending = end_pending;
  }
  return Utf8Encoded::npos;
}

std::vector<std::uint64_t> MinHashDeduplicator::query(std::string_view document,
                                                      bool verify) const {
  const std::vector<std::uint32_t> signature = hasher_.signature(document);
  std::vector<std::uint8_t> row(index_->row_bytes());
  pack_row(signature.data(), hasher_.num_perm(), value_bits_, row.data());
  std::lock_guard lock(mutex_);
  return index_->candidates(row.data(), verify);
}

std::vector<std::uint64_t> MinHashDeduplicator::cluster(
    std::span<const std::string_view> documents) const {
  std::size_t first_invalid = 0;
  return cluster(documents, {}, first_invalid);
}

std::vector<std::uint64_t> MinHashDeduplicator::cluster(std::span<const std::string_view> documents,
                                                        std::span<const PendingUtf8> pending,
                                                        std::size_t& first_invalid) const {
  const std::size_t n = documents.size();
  const std::uint32_t p = hasher_.num_perm();
  std::vector<std::uint32_t> signatures(n * p);
  first_invalid = hasher_.signatures(documents, pending, signatures, options_.threads, {});
  if (first_invalid != Utf8Encoded::npos) return {};
  LshIndex index(p, shape_, 32, lsh_min_matches(options_.threshold, p, 32));
  std::vector<std::uint64_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::uint64_t{0});
  std::vector<std::uint8_t> row(index.row_bytes());
  for (std::size_t i = 0; i < n; ++i) {
    pack_row(signatures.data() + i * p, p, 32, row.data());
    for (const std::uint64_t j : index.candidates(row.data(), true)) {
      // Union by smaller index: every root is its cluster's first document.
      const std::uint64_t a = find_root(parent, j);
      const std::uint64_t b = find_root(parent, i);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
    index.add_staged(row.data());
  }
  for (std::size_t i = 0; i < n; ++i) parent[i] = find_root(parent, i);
  return parent;
}

void MinHashDeduplicator::commit() {
  ensure_not_orphaned("commit");
  if (StateTracker* tracker = this->tracker(); tracker != nullptr) {
    tracker->commit();  // WAL, companion records (prepare_commit), slot, finish_commit
    return;
  }
  std::lock_guard lock(mutex_);
  index_->promote(std::min(index_->staged(), commit_limit_));
  commit_limit_ = UINT64_MAX;
}

void MinHashDeduplicator::rollback() {
  ensure_not_orphaned("rollback");
  if (StateTracker* tracker = this->tracker(); tracker != nullptr) {
    tracker->rollback();
    return;
  }
  std::lock_guard lock(mutex_);
  index_->drop_staged();
}

std::size_t MinHashDeduplicator::staged_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(index_->staged());
}

std::size_t MinHashDeduplicator::committed_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(index_->committed());
}

std::size_t MinHashDeduplicator::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(index_->size());
}

std::size_t MinHashDeduplicator::memory_bytes() const {
  std::lock_guard lock(mutex_);
  return index_->memory_bytes();
}

bool MinHashDeduplicator::has_staged() const {
  std::lock_guard lock(mutex_);
  return index_->staged() != 0;
}

void MinHashDeduplicator::prepare_commit(std::uint64_t epoch, bool durable) {
  (void)durable;  // the log was opened with the tracker's durability
  std::lock_guard lock(mutex_);
  if (log_ == nullptr) return;
  const std::uint64_t first = index_->committed();
  const std::uint64_t staged = std::min(index_->staged(), commit_limit_);
  const std::size_t row = index_->row_bytes();
  std::vector<std::vector<std::uint8_t>> payloads;
  std::vector<std::uint8_t> rows;
  for (std::uint64_t done = 0; done < staged;) {
    const auto count =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(staged - done, kMinHashRecordMaxRows));
    rows.resize(std::size_t{count} * row);
    for (std::uint32_t k = 0; k < count; ++k) {
      std::copy_n(index_->row(first + done + k), row, rows.data() + std::size_t{k} * row);
    }
    MinHashRecordHeader header;
    header.config = options_.config;
    header.value_bits = value_bits_;
    header.first_doc = first + done;
    header.count = count;
    payloads.push_back(encode_minhash_record(header, rows));
    done += count;
  }
  log_->prepare_commit(epoch, payloads);
  prepared_ = staged;
}

void MinHashDeduplicator::finish_commit() noexcept {
  std::lock_guard lock(mutex_);
  if (log_ != nullptr) log_->finish_commit();
  // Exactly the rows prepare_commit wrote: a document staged by another thread in between is
  // not on disk, so it stays staged.
  index_->promote(prepared_);
  prepared_ = 0;
  commit_limit_ = UINT64_MAX;
}

void MinHashDeduplicator::limit_next_commit(std::size_t count) {
  std::lock_guard lock(mutex_);
  commit_limit_ = count;
}

void MinHashDeduplicator::drop_staged() noexcept {
  std::lock_guard lock(mutex_);
  index_->drop_staged();
  prepared_ = 0;
  commit_limit_ = UINT64_MAX;
}

}  // namespace luminamoon::data
