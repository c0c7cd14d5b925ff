// StateTracker: opening/recovery, the advisory writer lock, and the three-step commit protocol.
#include "luminamoon/data/checkpoint/state_tracker.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>
#include <memory>

#include "../common/internal/little_endian.h"
#include "../common/internal/posix_file.h"
#include "luminamoon/data/checkpoint/epoch_log.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace luminamoon::data {

using internal::PosixFile;

struct StateTracker::Files {
  PosixFile meta;
  PosixFile wal;
  std::unique_ptr<EpochLog> registry;  // writer: opened when it exists or a commit needs it
};

namespace {

constexpr std::uint64_t kHashBytes = sizeof(std::uint64_t);

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

RecoveredCheckpoint load_meta(const PosixFile& file) {
  internal::require_regular_file(file, "checkpoint (.meta)");
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

std::vector<std::uint8_t> read_whole(const PosixFile& file) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(file.size()));
  bytes.resize(file.pread_some(bytes.data(), bytes.size(), 0));
  return bytes;
}

// Bytes and newest header epoch of an EpochLog file, without writing anything (nullopt: missing).
std::optional<std::uint64_t> newest_header_of(const std::string& path) {
  PosixFile file = PosixFile::open_if_exists(path, O_RDONLY);
  if (!file.valid()) return std::nullopt;
  internal::require_regular_file(file, "companion file");
  return newest_epoch_log_header(read_whole(file));
}

std::string wal_short_message(const std::string& meta, const std::string& wal, std::uint64_t have,
                              std::uint32_t count) {
  return "corrupt checkpoint " + meta + ": its WAL " + wal + " holds " +
         plural(have, "byte", "bytes") + " but the active slot commits " +
         plural(count, "hash", "hashes") + " (" + std::to_string(std::uint64_t{count} * 8) +
         " bytes); committed dedup state is missing, restore both files from a backup";
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
      if (files_->wal.valid()) internal::require_regular_file(files_->wal, "WAL (.dedup)");
      const std::uint64_t have = files_->wal.valid() ? files_->wal.size() : 0;
      if (active_slot_ < 0) check_fresh_state(files_->meta.size(), have);
      const std::uint64_t need = std::uint64_t{committed_.dedup_count} * kHashBytes;
      if (have < need) {
        throw CorruptCheckpointError(
            wal_short_message(path_, wal_path(), have, committed_.dedup_count));
      }
      open_registry();
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
    internal::require_regular_file(files_->meta, "checkpoint (.meta)");
    if (!files_->meta.try_lock_exclusive()) {
      throw CheckpointLockedError(
          "checkpoint " + path_ +
          " is locked by another writer (a StateTracker in this or another process); close it "
          "first, or open this one with read_only=True");
    }
    const RecoveredCheckpoint recovered = load_meta(files_->meta);
    committed_ = recovered.state;
    active_slot_ = recovered.active_slot;
    // Every cross-file check runs before anything is written or truncated.
    files_->wal = PosixFile::open_if_exists(wal_path(), O_RDWR);
    if (files_->wal.valid()) internal::require_regular_file(files_->wal, "WAL (.dedup)");
    if (active_slot_ < 0) {
      check_fresh_state(files_->meta.size(), files_->wal.valid() ? files_->wal.size() : 0);
    }
    open_registry();
    if (recovered.needs_initialisation) {
      const std::array<std::uint8_t, kMetaFileSize> zeros{};
      files_->meta.pwrite_all(zeros.data(), zeros.size(), 0);
      if (options_.durable) {
        files_->meta.sync_data();
        if (created) internal::sync_parent_directory(path_);
      }
    }
    open_wal_for_writing();
  } catch (...) {
    delete files_;
    throw;
  }
}

void StateTracker::check_fresh_state(std::uint64_t meta_size, std::uint64_t wal_size) const {
  // No commit ever completed, says the .meta. A first commit that crashed can leave hashes in
  // the WAL (beside a 128-byte .meta) and companion headers of epoch 1; anything more proves a
  // commit that completed: the .meta was wiped or replaced, and truncating the WAL or resetting
  // the companions now would destroy the only copy of that state.
  std::vector<std::string> evidence;
  if (wal_size > 0 && meta_size < kMetaFileSize) {
    evidence.push_back("its WAL " + wal_path() + " holds " + plural(wal_size, "byte", "bytes") +
                       " (" + plural(wal_size / kHashBytes, "hash", "hashes") +
                       "), written only by a commit after the .meta was created");
  }
  std::vector<std::string> kinds;
  if (const auto newest = newest_header_of(registry_path()); newest && *newest >= 1) {
    if (*newest >= 2) {
      evidence.push_back("the participant registry " + registry_path() + " records epoch " +
                         std::to_string(*newest) + ", so epoch " + std::to_string(*newest - 1) +
                         " was committed");
    }
    PosixFile file = PosixFile::open_if_exists(registry_path(), O_RDONLY);
    try {
      for (const auto& r : decode_epoch_log(read_whole(file), *newest, registry_path()).records) {
        kinds.emplace_back(r.begin(), r.end());
      }
    } catch (const CorruptCheckpointError&) {
      // Damage of the registry itself is reported when it is opened; here only evidence counts.
    }
  }
  for (const std::string& kind : kinds) {
    if (const auto newest = newest_header_of(companion_path(kind)); newest && *newest >= 2) {
      evidence.push_back("the companion " + companion_path(kind) + " records epoch " +
                         std::to_string(*newest));
    }
  }
  if (evidence.empty()) return;
  if (wal_size > 0 && meta_size == kMetaFileSize) {
    evidence.push_back("its WAL " + wal_path() + " holds " + plural(wal_size, "byte", "bytes") +
                       " (" + plural(wal_size / kHashBytes, "hash", "hashes") + ")");
  }
  std::string message =
      "corrupt checkpoint " + path_ + ": it holds no committed slot (" +
      (meta_size == 0 ? std::string("0 bytes") : std::to_string(meta_size) + " bytes") + ") but ";
  for (std::size_t i = 0; i < evidence.size(); ++i) message += (i ? "; " : "") + evidence[i];
  message +=
      ". A commit completed, so the .meta was wiped or replaced; nothing was truncated. Restore " +
      path_ + " from a backup, or delete it and its companion files to restart from zero";
  throw CorruptCheckpointError(message);
}

void StateTracker::open_registry() {
  // Which companion kinds have joined a commit. Decoding also applies the cross-file rule: a
  // registry header more than one epoch ahead of the .meta proves lost commits.
  PosixFile probe = PosixFile::open_if_exists(registry_path(), O_RDONLY);
  if (!probe.valid()) return;  // nothing registered; a writer creates it when a commit needs it
  probe.close();
  registry_present_ = true;
  auto log = std::make_unique<EpochLog>(registry_path(), committed_.epoch, options_.read_only,
                                        options_.durable);
  for (const auto& record : log->take_committed_records()) {
    registered_.emplace_back(record.begin(), record.end());
  }
  if (!options_.read_only) files_->registry = std::move(log);
}

void StateTracker::open_wal_for_writing() {
  const std::string wal = wal_path();
  const std::uint64_t need = std::uint64_t{committed_.dedup_count} * kHashBytes;
  const std::uint64_t have = files_->wal.valid() ? files_->wal.size() : 0;
  if (have < need) {
    throw CorruptCheckpointError(wal_short_message(path_, wal, have, committed_.dedup_count));
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

std::string StateTracker::companion_path(std::string_view kind) const {
  return path_ + "." + std::string(kind);
}

StateTracker::~StateTracker() {
  close();
  delete files_;
}

void StateTracker::close() {
  std::vector<CommitParticipant*> participants;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    files_->registry.reset();
    files_->wal.close();
    files_->meta.close();
    dedup_ = nullptr;
    staged_.reset();
    participants = std::move(participants_);
    participants_.clear();
  }
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
  return staged_.has_value() ||
         std::any_of(participants_.begin(), participants_.end(),
                     [](const CommitParticipant* p) { return p->has_staged(); });
}

void StateTracker::update(std::uint64_t batch_id, const StreamCoordinate& coordinate) {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("update");
  if (active_slot_ >= 0 && batch_id < committed_.committed_batch_id) {
    throw InvalidArgument("StateTracker.update: batch_id " + std::to_string(batch_id) +
                          " is lower than the committed batch id " +
                          std::to_string(committed_.committed_batch_id) + " of " + path_ +
                          "; batch ids never go back (start a new checkpoint to restart a stream)");
  }
  staged_.emplace(batch_id, coordinate);
}

void StateTracker::append_wal_locked(std::span<const std::uint64_t> hashes) {
  const std::uint64_t new_count = pending_dedup_count_ + hashes.size();
  if (new_count > std::numeric_limits<std::uint32_t>::max()) {
    throw Error("StateTracker.commit: " + path_ + " would hold " + std::to_string(new_count) +
                " committed hashes; the checkpoint format (dedup_count u32) allows at most " +
                std::to_string(std::numeric_limits<std::uint32_t>::max()));
  }
  if (hashes.empty()) return;
  // pwrite at the committed end, not O_APPEND, so a failed earlier attempt is simply
  // overwritten; durable before any slot can count it.
  std::vector<std::uint8_t> buffer(hashes.size() * kHashBytes);
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    internal::store_le<std::uint64_t>(buffer.data() + i * kHashBytes, hashes[i]);
  }
  files_->wal.pwrite_all(buffer.data(), buffer.size(), pending_dedup_count_ * kHashBytes);
  if (options_.durable) files_->wal.sync_data();
  pending_dedup_count_ = new_count;
}

std::uint64_t StateTracker::commit() {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("commit");
  // A registered companion joins every commit, or its file would fall behind the stream.
  for (const std::string& kind : registered_) {
    if (std::none_of(participants_.begin(), participants_.end(),
                     [&](const CommitParticipant* p) { return p->companion_kind() == kind; })) {
      throw Error("StateTracker.commit: checkpoint " + path_ + " has committed with its " + kind +
                  " companion (" + companion_path(kind) +
                  ") and must keep doing so; attach that stage (e.g. a MinHashDeduplicator for "
                  "'minhash') before committing, so its state stays in step with the stream");
    }
  }
  const std::uint64_t next_epoch = committed_.epoch + 1;

  // Registry: companion kinds joining for the first time, and the proof that commit 1 landed.
  std::vector<std::vector<std::uint8_t>> joining;
  std::vector<std::string> joining_kinds;
  for (const CommitParticipant* p : participants_) {
    const std::string_view kind = p->companion_kind();
    if (kind.empty() ||
        std::find(registered_.begin(), registered_.end(), kind) != registered_.end() ||
        std::find(joining_kinds.begin(), joining_kinds.end(), kind) != joining_kinds.end()) {
      continue;
    }
    joining_kinds.emplace_back(kind);
    joining.emplace_back(kind.begin(), kind.end());
  }
  const bool registry_has_header =
      files_->registry != nullptr && files_->registry->has_committed_header();
  const bool write_registry = !joining.empty() || (next_epoch >= 2 && !registry_has_header);
  if (write_registry) {
    if (files_->registry == nullptr) {
      files_->registry =
          std::make_unique<EpochLog>(registry_path(), committed_.epoch, false, options_.durable);
      registry_present_ = true;
    }
    files_->registry->prepare_commit(next_epoch, joining);
  }

  // Step 1: every participant makes its staged state durable; the deduplicator, first, appends
  // its hashes to the WAL (SPEC 3.3 step 1), the others write their companions tagged next_epoch.
  pending_dedup_count_ = committed_.dedup_count;
  for (CommitParticipant* p : participants_) p->prepare_commit(next_epoch, options_.durable);

  // Step 2: the next slot. Only the slot of the new epoch's parity is written, so the other
  // slot still holds the previous commit if this write is torn.
  CheckpointState next = committed_;
  next.epoch = next_epoch;
  if (staged_) {
    next.committed_batch_id = staged_->first;
    next.coordinate = staged_->second;
  }
  next.dedup_count = static_cast<std::uint32_t>(pending_dedup_count_);
  const auto slot = encode_slot(next);
  const int slot_index = slot_for_epoch(next.epoch);
  files_->meta.pwrite_all(slot.data(), slot.size(),
                          static_cast<std::uint64_t>(slot_index) * kSlotSize);
  if (options_.durable) files_->meta.sync_data();

  // Step 3: RAM follows the disk.
  committed_ = next;
  active_slot_ = slot_index;
  staged_.reset();
  if (write_registry) {
    files_->registry->finish_commit();
    registered_.insert(registered_.end(), joining_kinds.begin(), joining_kinds.end());
  }
  for (CommitParticipant* p : participants_) p->finish_commit();
  return next.epoch;
}

void StateTracker::rollback() {
  std::lock_guard lock(mutex_);
  ensure_writable_locked("rollback");
  staged_.reset();
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
  // First in commit order: its prepare step is the WAL append, which precedes every companion.
  participants_.insert(participants_.begin(), dedup);
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

CompanionHistory StateTracker::companion_history(std::string_view kind) const {
  std::lock_guard lock(mutex_);
  if (std::find(registered_.begin(), registered_.end(), kind) != registered_.end()) {
    return CompanionHistory::kJoinedEveryCommit;
  }
  return registry_present_ ? CompanionHistory::kNeverJoined : CompanionHistory::kUnknown;
}

void StateTracker::detach(StreamDeduplicator* dedup) noexcept {
  std::lock_guard lock(mutex_);
  if (dedup_ != dedup) return;
  dedup_ = nullptr;
  participants_.erase(std::remove(participants_.begin(), participants_.end(),
                                  static_cast<CommitParticipant*>(dedup)),
                      participants_.end());
}

}  // namespace luminamoon::data
