// MinHashDeduplicator: near-duplicate detection with MinHash signatures and LSH banding, staged
// until commit like the exact deduplicator, and persisted next to a StateTracker's checkpoint.
//
// Contract notes:
//  * first occurrence wins, also inside one batch: signatures are computed on `threads` workers,
//    but queries and insertions run in input order, so answers never depend on the thread count;
//  * a document is a duplicate when an indexed document shares an LSH band with it (equal low
//    `value_bits` of every value in the band) and the two signatures agree in at least
//    min_matches() values (the verified estimate is >= threshold; lsh_shape.h);
//  * attached to a StateTracker it is a CommitParticipant: the tracker's commit writes the staged
//    rows to the companion EpochLog `<meta path>.minhash` (records: minhash_record.h) tagged with
//    the new epoch, before the slot; on open only records of epochs <= the active one count, so
//    the index is exactly the committed documents after any crash. Once it has joined a commit
//    (the tracker's participant registry says so) every later commit must include it, and the
//    companion must carry exactly the active epoch: a missing, emptied, zeroed or stale file is
//    CorruptCheckpointError, never an empty index;
//  * thread-safe: every method takes the deduplicator's mutex (an attached commit takes the
//    tracker's mutex first, then this one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/checkpoint/commit_participant.h"
#include "luminamoon/data/minhash/lsh_shape.h"
#include "luminamoon/data/minhash/minhash_signature.h"
#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

class StateTracker;
class EpochLog;

namespace minhash_internal {
class LshIndex;
}

struct MinHashOptions {
  MinHashConfig config;
  double threshold = 0.8;         // in (0, 1]
  std::uint32_t bands = 0;        // 0 = derived (with rows) from threshold, see optimal_lsh_shape
  std::uint32_t rows = 0;         // 0 = derived; bands * rows <= num_perm
  bool store_signatures = false;  // keep full 32-bit values (exact verification, 4 B/value)
  unsigned threads = 0;           // signature workers; 0 = hardware concurrency
};

class MinHashDeduplicator final : public CommitParticipant {
 public:
  // Validates the options (InvalidArgument naming the field). Attaches to `tracker` when given,
  // loading the committed index from `<tracker path>.minhash`; the tracker must outlive this
  // object or be closed first. Throws Error when the tracker is read-only or already has a
  // MinHashDeduplicator, ConfigError when the companion file was written with another num_perm,
  // shingle, ngram, seed or value_bits, CorruptCheckpointError when it is damaged.
  explicit MinHashDeduplicator(StateTracker* tracker = nullptr, MinHashOptions options = {});
  ~MinHashDeduplicator() override;
  MinHashDeduplicator(const MinHashDeduplicator&) = delete;
  MinHashDeduplicator& operator=(const MinHashDeduplicator&) = delete;

  // True (and staged) when no indexed document is a verified near-duplicate.
  bool is_unique(std::string_view document);
  // keep[i] = 1 when documents[i] is kept; kept documents are staged in batch order.
  void filter_batch(std::span<const std::string_view> documents, std::span<std::uint8_t> keep);
  // The same, with the documents listed in `pending` read from their code units
  // (MinHasher::signatures). When one of them has a lone surrogate (no UTF-8 form), the call
  // stages nothing and returns the position in `pending` of the first such (keep's values are
  // then unspecified); npos otherwise. One batch is staged as a whole: no other call stages
  // documents in between.
  std::size_t filter_batch(std::span<const std::string_view> documents,
                           std::span<const PendingUtf8> pending, std::span<std::uint8_t> keep);
  // The pipeline stage: filter_batch over the kept documents of `batch`; near-duplicates are
  // dropped (rule "near_duplicate", threshold = options().threshold). Appends "total" and
  // "duplicates" to `counters`.
  void apply(DocumentBatch& batch, StageCounters& counters);
  // Ids (0-based, in indexing order; committed documents first) of the indexed documents that
  // share a band with `document` (verify = false) or are verified near-duplicates of it.
  std::vector<std::uint64_t> query(std::string_view document, bool verify = true) const;
  // Offline: cluster[i] = the smallest index of documents[i]'s cluster, the connected components
  // of the verified candidate pairs among `documents` (LSH on full signatures, verified with
  // full values). Keeping documents with cluster[i] == i keeps one per cluster. Touches no state.
  std::vector<std::uint64_t> cluster(std::span<const std::string_view> documents) const;
  // The same, with the documents listed in `pending` read from their code units
  // (MinHasher::signatures). `first_invalid` is set to the position in `pending` of the first one
  // with a lone surrogate (the result is then empty), to npos when there is none.
  std::vector<std::uint64_t> cluster(std::span<const std::string_view> documents,
                                     std::span<const PendingUtf8> pending,
                                     std::size_t& first_invalid) const;

  const MinHasher& hasher() const noexcept { return hasher_; }

  void commit();
  void rollback();

  // The next commit of the attached tracker writes and promotes only the first `count` staged
  // rows (staging order); the rest stay staged. Cleared by that commit and by a rollback.
  void limit_next_commit(std::size_t count);

  std::size_t staged_count() const;
  std::size_t committed_count() const;
  std::size_t size() const;
  StateTracker* tracker() const noexcept;
  const MinHashOptions& options() const noexcept { return options_; }
  LshShape shape() const noexcept { return shape_; }
  std::uint32_t value_bits() const noexcept { return value_bits_; }
  std::uint32_t min_matches() const noexcept { return min_matches_; }
  // Path of the companion file, empty when detached.
  const std::string& companion_path() const noexcept { return companion_path_; }

  // Bytes held by the index: rows and band tables (capacity, not size).
  std::size_t memory_bytes() const;

  // CommitParticipant (called by the tracker with its mutex held).
  bool has_staged() const override;
  void prepare_commit(std::uint64_t epoch, bool durable) override;
  void finish_commit() noexcept override;
  void drop_staged() noexcept override;
  void tracker_closed() noexcept override;
  std::string_view companion_kind() const noexcept override { return "minhash"; }

 private:
  void load_committed(const StateTracker& tracker);
  void ensure_not_orphaned(const char* operation) const;
  void detach() noexcept;

  MinHashOptions options_;
  MinHasher hasher_;
  LshShape shape_;
  std::uint32_t value_bits_;
  std::uint32_t min_matches_;
  std::unique_ptr<minhash_internal::LshIndex> index_;
  std::unique_ptr<EpochLog> log_;
  std::string companion_path_;
  std::uint64_t prepared_ = 0;  // staged rows written by prepare_commit, promoted by finish
  std::uint64_t commit_limit_ = UINT64_MAX;  // limit_next_commit; UINT64_MAX = every staged row
  mutable std::mutex mutex_;
  StateTracker* tracker_ = nullptr;
  bool orphaned_ = false;  // its tracker was closed: commit/rollback would not be durable
};

// The companion file of a checkpoint: `<meta path>.minhash`.
std::string minhash_companion_path(const std::string& meta_path);

}  // namespace luminamoon::data
