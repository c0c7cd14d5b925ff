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
//  * attached to a StateTracker it is that tracker's first CommitParticipant: commit()/rollback()
//    are the tracker's (whole-state) ones, and its prepare step appends exactly the hashes staged
//    at that moment to the WAL; finish promotes exactly those, so hashes staged by filter_batch
//    on other threads while a commit runs stay staged for the next commit (never promoted
//    without being on disk);
//  * thread-safe: every method takes the deduplicator's mutex (attached commits take the
//    tracker's mutex first, then this one); the WAL write itself runs without it, so probing
//    continues during a commit's fdatasync.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "luminamoon/data/checkpoint/commit_participant.h"
#include "luminamoon/data/common/utf8_encode.h"
#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

class StateTracker;

struct StreamDeduplicatorOptions {
  unsigned threads = 0;  // hashing workers for filter_batch; 0 = hardware concurrency
};

class StreamDeduplicator final : public CommitParticipant {
 public:
  // Attaches to `tracker` when given (loading its committed WAL); the tracker must outlive this
  // object or be closed first. Throws Error when the tracker already has a deduplicator or is
  // read-only.
  explicit StreamDeduplicator(StateTracker* tracker = nullptr,
                              StreamDeduplicatorOptions options = {});
  ~StreamDeduplicator() override;
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

  // The next commit of the attached tracker writes and promotes only the first `count` staged
  // hashes (staging order); the rest stay staged. Cleared by that commit and by a rollback. A
  // consumer that stages ahead of what it commits (ResumablePipeline's prefetch) uses it so that
  // a commit covers exactly the batches it names.
  void limit_next_commit(std::size_t count);

  std::size_t staged_count() const;
  std::size_t committed_count() const;
  std::size_t size() const;
  StateTracker* tracker() const noexcept;
  const StreamDeduplicatorOptions& options() const noexcept { return options_; }

  // Bytes the hash sets and the staging log hold now (capacity, not size).
  std::size_t memory_bytes() const;

  // CommitParticipant (called by the attached tracker with its mutex held).
  bool has_staged() const override;
  void prepare_commit(std::uint64_t epoch, bool durable) override;
  void finish_commit() noexcept override;
  void drop_staged() noexcept override;
  void tracker_closed() noexcept override;

 private:
  friend class StateTracker;
  void promote_staged();
  void ensure_not_orphaned(const char* operation) const;

  struct Sets;
  std::unique_ptr<Sets> sets_;
  StreamDeduplicatorOptions options_;
  mutable std::mutex mutex_;
  StateTracker* tracker_ = nullptr;
  std::size_t prepared_ = 0;  // staged hashes (a prefix of staged_order) prepare_commit wrote
  std::size_t commit_limit_ = SIZE_MAX;  // limit_next_commit; SIZE_MAX = every staged hash
  bool orphaned_ = false;  // its tracker was closed: commit/rollback would not be durable
};

// XXH3-64 of every document, computed on `threads` workers (0 = hardware concurrency).
void hash_documents(std::span<const std::string_view> documents, std::span<std::uint64_t> out,
                    unsigned threads);

// out[i] = XXH3-64 of documents[i]'s UTF-8 (encode_utf8), on `threads` workers (0 = hardware
// concurrency), each encoding into one buffer of its own that it reuses: the UTF-8 is never kept,
// nor written out and read back. A document with a unit that is not a Unicode scalar value is
// hashed in the form encode_utf8 writes (surrogates as Python's "surrogatepass" writes them);
// returns the smallest index of such a document, Utf8Encoded::npos when there is none, for the
// caller to reject or accept. Throws InvalidArgument on a width other than 1, 2 or 4.
std::size_t hash_code_units(std::span<const CodeUnits> documents, std::span<std::uint64_t> out,
                            unsigned threads);

}  // namespace luminamoon::data
