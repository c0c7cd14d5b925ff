// EpochLog: a crash-safe, append-only companion file whose committed length follows the
// checkpoint's epochs. Building block for the persistent state of later stages (see
// commit_participant.h); the format is in docs/checkpoint.md ("Companion files").
//
// Layout (little-endian):
//   bytes 0..64    two 32-byte header slots:
//                  magic "LMEL" | version u32 = 1 | epoch u64 | committed_length u64 |
//                  reserved u32 = 0 | crc32 u32 (zlib, over bytes 0..28 of the slot)
//   bytes 64..     records: length u32 | crc32 u32 (of the payload) | payload
// A commit appends its records at committed_length, fsyncs, then writes the header slot that
// does NOT hold the current committed header (so a torn header write can only destroy the older
// one), fsyncs. Opening for active epoch E picks the valid header slot with the largest
// epoch <= E; its committed_length bounds the committed records. Shorter file or a record that
// fails its CRC inside that length -> CorruptCheckpointError (committed data is damaged); bytes
// past it are uncommitted and a writer truncates them. A valid header more than one epoch ahead
// of E is corruption too: a commit only ever tags the epoch its slot is about to carry (E + 1),
// so such a header proves the checkpoint lost commits (wiped, or restored from an old backup).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace luminamoon::data {

inline constexpr std::size_t kEpochLogHeaderSize = 64;
inline constexpr std::size_t kEpochLogSlotSize = 32;
inline constexpr std::size_t kEpochLogRecordHeaderSize = 8;

// What the tracker's participant registry (state_tracker.h) says about a companion file.
enum class CompanionHistory {
  kUnknown,            // no registry information: the file's own headers are trusted
  kJoinedEveryCommit,  // registered: it joined every commit since its first, so the file must
                       // exist and its governing header must carry exactly the active epoch
  kNeverJoined,        // not registered: whatever it holds is left over by an aborted first join
                       // (a writer resets it to an empty log; a reader sees no records)
};

struct EpochLogHeader {
  std::uint64_t epoch = 0;
  std::uint64_t committed_length = kEpochLogHeaderSize;
};

// Pure decoding, for tests and fuzzing: which header governs for `active_epoch`, and the
// committed records' payloads. Throws CorruptCheckpointError naming `path`.
struct DecodedEpochLog {
  EpochLogHeader header;
  int header_slot = -1;  // 0, 1, or -1 when no valid header applies (nothing committed)
  std::vector<std::vector<std::uint8_t>> records;
};
DecodedEpochLog decode_epoch_log(std::span<const std::uint8_t> file, std::uint64_t active_epoch,
                                 const std::string& path);
std::vector<std::uint8_t> encode_epoch_log_slot(const EpochLogHeader& header);
// The largest epoch of a valid header slot, whatever the active epoch; 0 when none is valid.
std::uint64_t newest_epoch_log_header(std::span<const std::uint8_t> file) noexcept;

class EpochLog {
 public:
  // Opens (a writer creates) the log at `path` for a checkpoint whose active epoch is
  // `active_epoch`. A writer truncates uncommitted bytes.
  // `history` (above) adds the cross-file checks; CorruptCheckpointError names the file, what
  // it holds and what the checkpoint says.
  EpochLog(std::string path, std::uint64_t active_epoch, bool read_only, bool durable,
           CompanionHistory history = CompanionHistory::kUnknown);
  ~EpochLog();
  EpochLog(const EpochLog&) = delete;
  EpochLog& operator=(const EpochLog&) = delete;

  const std::string& path() const noexcept { return path_; }
  // The committed records, in append order, read at open; moved out (the log keeps no copy, so
  // a large index is not held twice).
  std::vector<std::vector<std::uint8_t>> take_committed_records() noexcept {
    return std::move(records_);
  }
  std::uint64_t committed_length() const noexcept { return header_.committed_length; }
  // Whether a committed header governs (false: nothing was ever committed through the log).
  bool has_committed_header() const noexcept { return header_slot_ >= 0; }
  std::uint64_t committed_epoch() const noexcept { return header_.epoch; }

  // Step 1 of a tracker commit (CommitParticipant::prepare_commit): appends `payloads` at the
  // committed end and writes the header for `epoch` (> the last committed epoch), durably. The
  // RAM view does not change until finish_commit(): if the tracker's slot write then fails, the
  // next prepare_commit simply overwrites this attempt.
  void prepare_commit(std::uint64_t epoch, std::span<const std::vector<std::uint8_t>> payloads);
  // Step 3: the tracker's slot for that epoch is durable.
  void finish_commit() noexcept;

 private:
  std::string path_;
  bool read_only_;
  bool durable_;
  struct File;
  std::unique_ptr<File> file_;
  EpochLogHeader header_;
  int header_slot_ = -1;
  EpochLogHeader pending_header_;
  int pending_slot_ = -1;
  std::vector<std::vector<std::uint8_t>> records_;
};

}  // namespace luminamoon::data
