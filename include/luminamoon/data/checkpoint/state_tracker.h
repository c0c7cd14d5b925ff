// StateTracker: owns a .meta ping-pong checkpoint (SPEC 3.2) and its .dedup WAL (SPEC 3.3).
//
// Contract notes:
//  * update() and the attached deduplicator touch RAM only; commit() is the only writer:
//      1. append the deduplicator's staged hashes to the WAL at dedup_count * 8, fdatasync;
//      2. write the next slot (A for odd epochs, B for even), fdatasync;
//      3. promote staged -> committed in RAM.
//    A crash between any two steps reopens to the previous or the new commit, never a mix:
//    WAL bytes past the active slot's dedup_count are cut off on open. Attached commit
//    participants (commit_participant.h) make their companion state durable between steps 1
//    and 2 and promote it after step 2.
//  * If commit() throws (disk full, I/O error) the staged state is kept; commit again or
//    rollback(). Nothing in RAM claims durability the disk does not have.
//  * One writer per .meta: a non-blocking exclusive flock is held for the tracker's lifetime.
//  * Thread-safe: every method takes the tracker's mutex.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "luminamoon/data/checkpoint/checkpoint_slot.h"
#include "luminamoon/data/checkpoint/commit_participant.h"
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

 private:
  friend class StreamDeduplicator;
  void attach(StreamDeduplicator* dedup);
  void detach(StreamDeduplicator* dedup) noexcept;
  void ensure_open_locked(const char* operation) const;
  void ensure_writable_locked(const char* operation) const;
  void open_wal_for_writing();

  std::string path_;
  StateTrackerOptions options_;
  mutable std::mutex mutex_;
  struct Files;
  Files* files_;  // pimpl: keeps POSIX details out of the public header
  CheckpointState committed_;
  int active_slot_ = -1;
  std::optional<std::pair<std::uint64_t, StreamCoordinate>> staged_;
  StreamDeduplicator* dedup_ = nullptr;
  std::vector<CommitParticipant*> participants_;
  bool closed_ = false;
};

}  // namespace luminamoon::data
