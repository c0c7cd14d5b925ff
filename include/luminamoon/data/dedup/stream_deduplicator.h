// StreamDeduplicator: exact dedup by XXH3-64 of the document bytes, two-stage (SPEC 3.3).
//
// Hashes live in SwissTable flat sets (absl::flat_hash_set) with an identity hasher: the keys are
// already uniformly distributed 64-bit hashes, so hashing them again would only cost time.
// Staged hashes are also kept in staging order, which is the order they are appended to the WAL,
// so the WAL bytes are a deterministic function of the input stream.
//
// Contract notes:
//  * first occurrence wins, also inside one batch; hashing runs on `threads` workers but probing
//    is sequential in input order, so answers never depend on the thread count;
//  * attached to a StateTracker, commit()/rollback() are the tracker's (whole-state) ones;
//  * thread-safe: every method takes the deduplicator's mutex (attached commits take the
//    tracker's mutex first, then this one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

class StateTracker;

struct StreamDeduplicatorOptions {
  unsigned threads = 0;  // hashing workers for filter_batch; 0 = hardware concurrency
};

class StreamDeduplicator {
 public:
  // Attaches to `tracker` when given (loading its committed WAL); the tracker must outlive this
  // object or be closed first. Throws Error when the tracker already has a deduplicator or is
  // read-only.
  explicit StreamDeduplicator(StateTracker* tracker = nullptr,
                              StreamDeduplicatorOptions options = {});
  ~StreamDeduplicator();
  StreamDeduplicator(const StreamDeduplicator&) = delete;
  StreamDeduplicator& operator=(const StreamDeduplicator&) = delete;

  bool is_unique(std::string_view document);
  bool is_unique_hash(std::uint64_t hash);
  bool contains(std::string_view document) const;
  bool contains_hash(std::uint64_t hash) const;

  // keep[i] = 1 when documents[i] is the first occurrence of its bytes (across committed, staged
  // and earlier batch entries); kept hashes are staged in batch order. keep.size() must equal
  // documents.size().
  void filter_batch(std::span<const std::string_view> documents, std::span<std::uint8_t> keep);
  void filter_hashes(std::span<const std::uint64_t> hashes, std::span<std::uint8_t> keep);
  // The pipeline stage: filter_batch over the kept documents of `batch`; duplicates are dropped
  // (rule "duplicate"). Appends "total" and "duplicates" to `counters`.
  void apply(DocumentBatch& batch, StageCounters& counters);

  void commit();
  void rollback();

  std::size_t staged_count() const;
  std::size_t committed_count() const;
  std::size_t size() const;
  StateTracker* tracker() const noexcept;
  const StreamDeduplicatorOptions& options() const noexcept { return options_; }

  // Bytes the hash sets and the staging log hold now (capacity, not size).
  std::size_t memory_bytes() const;

 private:
  friend class StateTracker;
  // Called by the tracker with its mutex held.
  std::vector<std::uint64_t> staged_in_order() const;
  void promote_staged();
  void drop_staged();
  void detach_from_tracker() noexcept;
  void ensure_not_orphaned(const char* operation) const;

  struct Sets;
  std::unique_ptr<Sets> sets_;
  StreamDeduplicatorOptions options_;
  mutable std::mutex mutex_;
  StateTracker* tracker_ = nullptr;
  bool orphaned_ = false;  // its tracker was closed: commit/rollback would not be durable
};

// XXH3-64 of every document, computed on `threads` workers (0 = hardware concurrency).
void hash_documents(std::span<const std::string_view> documents, std::span<std::uint64_t> out,
                    unsigned threads);

}  // namespace luminamoon::data
