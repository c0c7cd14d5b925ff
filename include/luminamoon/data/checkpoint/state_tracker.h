// StateTracker: owns a .meta ping-pong checkpoint (SPEC 3.2) and its .dedup WAL (SPEC 3.3).
//
// Contract notes:
//  * update() and the attached deduplicator touch RAM only; commit() is the only writer. It walks
//    one list of commit participants (commit_participant.h), the exact deduplicator first:
//      1. prepare: the deduplicator appends exactly the hashes staged at that moment to the WAL
//         at dedup_count * 8, fdatasync; then every companion participant writes its companion;
//      2. write the next slot (A for odd epochs, B for even), fdatasync;
//      3. finish: every participant promotes exactly what it wrote, staged -> committed in RAM
//         (hashes staged by other threads during the commit stay staged for the next one).
//    A crash between any two steps reopens to the previous or the new commit, never a mix:
//    WAL bytes past the active slot's dedup_count are cut off on open.
//  * Cross-file consistency: a file whose content proves a commit the .meta does not have (a
//    fresh .meta beside a non-empty WAL on a short .meta, a registry or companion header more
//    than one epoch ahead) is CorruptCheckpointError naming every file and what it holds; nothing
//    is truncated or rewritten before these checks pass.
//  * The participant registry `<meta>.participants` (an EpochLog) records which companion kinds
//    joined, and proves with its first header (written by commit 2) that commit 1 landed.
//  * update() refuses a batch id below the committed one (batch ids never go back).
//  * If commit() throws (disk full, I/O error) the staged state is kept; commit again or
//    rollback(). Nothing in RAM claims durability the disk does not have.
//  * One writer per .meta: a non-blocking exclusive flock is held for the tracker's lifetime.
//  * Thread-safe: every method takes the tracker's mutex; commit() holds it throughout, and a
//    participant's own mutex is taken after it (tracker, then participant).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/checkpoint/checkpoint_slot.h"
#include "luminamoon/data/checkpoint/commit_participant.h"
#include "luminamoon/data/checkpoint/epoch_log.h"
#include "luminamoon/data/checkpoint/stream_coordinate.h"

namespace luminamoon::data {

class StreamDeduplicator;

struct StateTrackerOptions {
  bool read_only = false;  // never create, lock or write; a missing file reads as fresh
  bool durable = true;     // false skips fdatasync/fsync (tests and benchmarks only)
};

class StateTracker {
 public:
  // Opens (a writer creates) the checkpoint at `path`. Throws CorruptCheckpointError,
  // CheckpointLockedError or IoError.
  explicit StateTracker(std::string path, StateTrackerOptions options = {});
  ~StateTracker();
  StateTracker(const StateTracker&) = delete;
  StateTracker& operator=(const StateTracker&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::string wal_path() const { return path_ + ".dedup"; }
  std::string registry_path() const { return path_ + ".participants"; }
  // `<meta path>.<kind>`: where a companion of that kind lives.
  std::string companion_path(std::string_view kind) const;
  const StateTrackerOptions& options() const noexcept { return options_; }

  CheckpointState committed() const;
  // 0 = slot A, 1 = slot B, -1 = fresh.
  int active_slot() const;
  bool has_pending() const;
  bool closed() const;

  void update(std::uint64_t batch_id, const StreamCoordinate& coordinate);
  // Returns the new epoch.
  std::uint64_t commit();
  void rollback();
  void close();

  // The committed hashes of the WAL, in commit order (dedup_count of them).
  std::vector<std::uint64_t> read_committed_hashes() const;

  // Companion state of later stages (commit_participant.h), committed in attach order between
  // the WAL append and the slot write. The participant must detach before it is destroyed; the
  // tracker calls tracker_closed() on every participant when it closes.
  void attach_participant(CommitParticipant* participant);
  void detach_participant(CommitParticipant* participant) noexcept;
  // How a participant with companion `kind` must open its companion file (epoch_log.h): joined
  // every commit (registered), never joined (the registry exists without it), or unknown (no
  // registry: a checkpoint that never reached epoch 2 nor had a companion join).
  CompanionHistory companion_history(std::string_view kind) const;

 private:
  friend class StreamDeduplicator;
  void attach(StreamDeduplicator* dedup);
  void detach(StreamDeduplicator* dedup) noexcept;
  void ensure_open_locked(const char* operation) const;
  void ensure_writable_locked(const char* operation) const;
  void open_wal_for_writing();
  void open_registry();
  void check_fresh_state(std::uint64_t meta_size, std::uint64_t wal_size) const;
  // StreamDeduplicator::prepare_commit, tracker mutex held: writes `hashes` at the pending end of
  // the WAL (fdatasync when durable) and counts them into the slot about to be written.
  void append_wal_locked(std::span<const std::uint64_t> hashes);

  std::string path_;
  StateTrackerOptions options_;
  mutable std::mutex mutex_;
  struct Files;
  Files* files_;  // pimpl: keeps POSIX details out of the public header
  CheckpointState committed_;
  int active_slot_ = -1;
  std::optional<std::pair<std::uint64_t, StreamCoordinate>> staged_;
  StreamDeduplicator* dedup_ = nullptr;           // also participants_.front() when attached
  std::vector<CommitParticipant*> participants_;  // commit order: the deduplicator first
  std::vector<std::string> registered_;           // companion kinds in the registry
  bool registry_present_ = false;                 // the registry file exists
  std::uint64_t pending_dedup_count_ = 0;         // dedup_count of the slot being committed
  bool closed_ = false;
};

}  // namespace luminamoon::data
