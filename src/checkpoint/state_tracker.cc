// StateTracker: opening/recovery, the advisory writer lock, and the three-step commit protocol.
#include "luminamoon/data/checkpoint/state_tracker.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>

#include "../common/internal/little_endian.h"
#include "../common/internal/posix_file.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace luminamoon::data {

using internal::PosixFile;

struct StateTracker::Files {
  PosixFile meta;
  PosixFile wal;
};

namespace {

constexpr std::uint64_t kHashBytes = sizeof(std::uint64_t);

RecoveredCheckpoint load_meta(const PosixFile& file) {
  const std::uint64_t size = file.size();
  if (size > kMetaFileSize) {
    // Never read an oversized file: it is corrupt (or not ours), not input.
    throw CorruptCheckpointError("corrupt checkpoint " + file.path() + ": expected " +
                                 std::to_string(kMetaFileSize) + " bytes, found " +
                                 std::to_string(size) +
                                 "; restore it from a backup or delete it to restart from zero");
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  bytes.resize(file.pread_some(bytes.data(), bytes.size(), 0));
  return recover_checkpoint(bytes, file.path());
}

}  // namespace

StateTracker::StateTracker(std::string path, StateTrackerOptions options)
    : path_(std::move(path)), options_(options), files_(new Files) {
  try {
    if (options_.read_only) {
      files_->meta = PosixFile::open_if_exists(path_, O_RDONLY);
      if (!files_->meta.valid()) return;  // a missing checkpoint reads as the fresh state
      const RecoveredCheckpoint recovered = load_meta(files_->meta);
      committed_ = recovered.state;
      active_slot_ = recovered.active_slot;
      files_->wal = PosixFile::open_if_exists(wal_path(), O_RDONLY);
      const std::uint64_t need = std::uint64_t{committed_.dedup_count} * kHashBytes;
      const std::uint64_t have = files_->wal.valid() ? files_->wal.size() : 0;
      if (have < need) {
        throw CorruptCheckpointError(
            "corrupt checkpoint " + path_ + ": WAL " + wal_path() + " holds " +
            std::to_string(have) + " bytes but the active slot commits " +
            std::to_string(committed_.dedup_count) + " hashes (" + std::to_string(need) +
            " bytes); committed dedup state is missing");
      }
      return;
    }

    bool created = false;
    files_->meta = PosixFile::open_if_exists(path_, O_RDWR);
    if (!files_->meta.valid()) {
      try {
        files_->meta = PosixFile::open(path_, O_RDWR | O_CREAT | O_EXCL, 0644);
        created = true;
      } catch (const IoError& e) {
        if (e.error_number() != EEXIST) throw;
        files_->meta = PosixFile::open(path_, O_RDWR);  // lost a creation race: use theirs
      }
    }
    if (!files_->meta.try_lock_exclusive()) {
      throw CheckpointLockedError(
          "checkpoint " + path_ +
          " is locked by another writer (a StateTracker in this or another process); close it "
          "first, or open this one with read_only=True");
    }
    const RecoveredCheckpoint recovered = load_meta(files_->meta);
    if (recovered.needs_initialisation) {
      const std::array<std::uint8_t, kMetaFileSize> zeros{};
      files_->meta.pwrite_all(zeros.data(), zeros.size(), 0);
      if (options_.durable) {
        files_->meta.sync_data();
        if (created) internal::sync_parent_directory(path_);
      }
    }
    committed_ = recovered.state;
    active_slot_ = recovered.active_slot;
    open_wal_for_writing();
  } catch (...) {
    delete files_;
    throw;
  }
}

void StateTracker::open_wal_for_writing() {
  const std::string wal = wal_path();
  const std::uint64_t need = std::uint64_t{committed_.dedup_count} * kHashBytes;
  files_->wal = PosixFile::open_if_exists(wal, O_RDWR);
  const std::uint64_t have = files_->wal.valid() ? files_->wal.size() : 0;
  if (have < need) {
    throw CorruptCheckpointError(
        "corrupt checkpoint " + path_ + ": WAL " + wal + " holds " + std::to_string(have) +
        " bytes but the active slot commits " + std::to_string(committed_.dedup_count) +
        " hashes (" + std::to_string(need) + " bytes); committed dedup state is missing");
  }
  if (!files_->wal.valid()) {
    files_->wal = PosixFile::open(wal, O_RDWR | O_CREAT, 0644);
    if (options_.durable) internal::sync_parent_directory(wal);
    return;
  }
  if (have > need) {
    // Hashes appended by a commit whose slot never landed: not committed, cut them off.
    files_->wal.truncate(need);
    if (options_.durable) files_->wal.sync_data();
  }
}

StateTracker::~StateTracker() {
  close();
  delete files_;
}

void StateTracker::close() {
  StreamDeduplicator* dedup = nullptr;
  std::vector<CommitParticipant*> participants;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    files_->wal.close();
    files_->meta.close();
    dedup = dedup_;
    dedup_ = nullptr;
    staged_.reset();
    participants = std::move(participants_);
    participants_.clear();
  }
  if (dedup != nullptr) dedup->detach_from_tracker();
  for (CommitParticipant* p : participants) p->tracker_closed();
}

void StateTracker::ensure_open_locked(const char* operation) const {
  if (closed_) {
    throw Error(std::string("StateTracker.") + operation + ": checkpoint " + path_ + " is closed");
  }
}

void StateTracker::ensure_writable_locked(const char* operation) const {
  ensure_open_locked(operation);
  if (options_.read_only) {
    throw Error(std::string("StateTracker.") + operation + ": checkpoint " + path_ +
                " was opened read_only=True");
  }
}

CheckpointState StateTracker::committed() const {
  std::lock_guard lock(mutex_);
  ensure_open_locked("read");
  return committed_;
}

int StateTracker::active_slot() const {
  std::lock_guard lock(mutex_);
  ensure_open_locked("active_slot");
  return active_slot_;
}

bool StateTracker::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

bool StateTracker::has_pending() const {
  std::lock_guard lock(mutex_);
  ensure_open_locked("has_pending");
  return staged_.has_value() || (dedup_ != nullptr && dedup_->staged_count() > 0) ||
         std::any_of(participants_.begin(), participants_.end(),
                     [](const CommitParticipant* p) { return p->has_staged(); });
}

void StateTracker::update(std::uint64_t batch_id, const StreamCoordinate& coordinate) {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("update");
  staged_.emplace(batch_id, coordinate);
}

std::uint64_t StateTracker::commit() {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("commit");
  const std::vector<std::uint64_t> hashes =
      dedup_ != nullptr ? dedup_->staged_in_order() : std::vector<std::uint64_t>{};
  const std::uint64_t new_count = std::uint64_t{committed_.dedup_count} + hashes.size();
  if (new_count > std::numeric_limits<std::uint32_t>::max()) {
    throw Error("StateTracker.commit: " + path_ + " would hold " + std::to_string(new_count) +
                " committed hashes; the checkpoint format (dedup_count u32) allows at most " +
                std::to_string(std::numeric_limits<std::uint32_t>::max()));
  }

  // Step 1: WAL append at the committed end (pwrite, not O_APPEND, so a failed earlier attempt
  // is simply overwritten), made durable before any slot can point at it.
  if (!hashes.empty()) {
    std::vector<std::uint8_t> buffer(hashes.size() * kHashBytes);
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      internal::store_le<std::uint64_t>(buffer.data() + i * kHashBytes, hashes[i]);
    }
    files_->wal.pwrite_all(buffer.data(), buffer.size(),
                           std::uint64_t{committed_.dedup_count} * kHashBytes);
    if (options_.durable) files_->wal.sync_data();
  }

  // Step 1b: companion state of later stages, tagged with the epoch the slot will carry.
  const std::uint64_t next_epoch = committed_.epoch + 1;
  for (CommitParticipant* p : participants_) p->prepare_commit(next_epoch, options_.durable);

  // Step 2: the next slot. Only the slot of the new epoch's parity is written, so the other
  // slot still holds the previous commit if this write is torn.
  CheckpointState next = committed_;
  next.epoch = next_epoch;
  if (staged_) {
    next.committed_batch_id = staged_->first;
    next.coordinate = staged_->second;
  }
  next.dedup_count = static_cast<std::uint32_t>(new_count);
  const auto slot = encode_slot(next);
  const int slot_index = slot_for_epoch(next.epoch);
  files_->meta.pwrite_all(slot.data(), slot.size(),
                          static_cast<std::uint64_t>(slot_index) * kSlotSize);
  if (options_.durable) files_->meta.sync_data();

  // Step 3: RAM follows the disk.
  committed_ = next;
  active_slot_ = slot_index;
  staged_.reset();
  if (dedup_ != nullptr) dedup_->promote_staged();
  for (CommitParticipant* p : participants_) p->finish_commit();
  return next.epoch;
}

void StateTracker::rollback() {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("rollback");
  staged_.reset();
  if (dedup_ != nullptr) dedup_->drop_staged();
  for (CommitParticipant* p : participants_) p->drop_staged();
}

std::vector<std::uint64_t> StateTracker::read_committed_hashes() const {
  std::lock_guard lock(mutex_);
  ensure_open_locked("read_committed_hashes");
  std::vector<std::uint64_t> hashes(committed_.dedup_count);
  if (hashes.empty()) return hashes;
  const std::size_t bytes = hashes.size() * kHashBytes;
  std::vector<std::uint8_t> buffer(bytes);
  if (files_->wal.pread_some(buffer.data(), bytes, 0) != bytes) {
    throw CorruptCheckpointError("corrupt checkpoint " + path_ + ": WAL " + wal_path() +
                                 " is shorter than the " + std::to_string(hashes.size()) +
                                 " committed hashes");
  }
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    hashes[i] = internal::load_le<std::uint64_t>(buffer.data() + i * kHashBytes);
  }
  return hashes;
}

void StateTracker::attach(StreamDeduplicator* dedup) {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("attach");
  if (dedup_ != nullptr) {
    throw Error("checkpoint " + path_ +
                " already has a StreamDeduplicator attached; one tracker records one dedup set");
  }
  dedup_ = dedup;
}

void StateTracker::attach_participant(CommitParticipant* participant) {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("attach_participant");
  if (std::find(participants_.begin(), participants_.end(), participant) == participants_.end()) {
    participants_.push_back(participant);
  }
}

void StateTracker::detach_participant(CommitParticipant* participant) noexcept {
  std::lock_guard lock(mutex_);
  participants_.erase(std::remove(participants_.begin(), participants_.end(), participant),
                      participants_.end());
}

void StateTracker::detach(StreamDeduplicator* dedup) noexcept {
  std::lock_guard lock(mutex_);
  if (dedup_ == dedup) dedup_ = nullptr;
}

}  // namespace luminamoon::data
