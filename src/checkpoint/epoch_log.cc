// EpochLog: header-slot selection by epoch, record framing, and the append-then-header commit.
#include "luminamoon/data/checkpoint/epoch_log.h"

#include <fcntl.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "../common/internal/little_endian.h"
#include "../common/internal/posix_file.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data {

using internal::load_le;
using internal::PosixFile;
using internal::store_le;

namespace {

constexpr std::array<std::uint8_t, 4> kMagic = {'L', 'M', 'E', 'L'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kSlotCrcOffset = 28;

std::uint32_t crc32_of(const std::uint8_t* data, std::size_t size) noexcept {
  return static_cast<std::uint32_t>(::crc32(::crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
}

enum class SlotState { kValid, kEmpty, kInvalid };

SlotState decode_slot(const std::uint8_t* slot, EpochLogHeader& out) {
  if (std::all_of(slot, slot + kEpochLogSlotSize, [](std::uint8_t b) { return b == 0; })) {
    return SlotState::kEmpty;
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), slot)) return SlotState::kInvalid;
  if (load_le<std::uint32_t>(slot + 4) != kVersion) return SlotState::kInvalid;
  if (load_le<std::uint32_t>(slot + kSlotCrcOffset) != crc32_of(slot, kSlotCrcOffset)) {
    return SlotState::kInvalid;
  }
  out.epoch = load_le<std::uint64_t>(slot + 8);
  out.committed_length = load_le<std::uint64_t>(slot + 16);
  if (out.committed_length < kEpochLogHeaderSize) return SlotState::kInvalid;
  return SlotState::kValid;
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw CorruptCheckpointError("corrupt companion file " + path + ": " + what +
                               "; committed state is damaged, restore it from a backup");
}

}  // namespace

std::vector<std::uint8_t> encode_epoch_log_slot(const EpochLogHeader& header) {
  std::vector<std::uint8_t> slot(kEpochLogSlotSize, 0);
  std::copy(kMagic.begin(), kMagic.end(), slot.begin());
  store_le<std::uint32_t>(slot.data() + 4, kVersion);
  store_le<std::uint64_t>(slot.data() + 8, header.epoch);
  store_le<std::uint64_t>(slot.data() + 16, header.committed_length);
  store_le<std::uint32_t>(slot.data() + kSlotCrcOffset, crc32_of(slot.data(), kSlotCrcOffset));
  return slot;
}

std::uint64_t newest_epoch_log_header(std::span<const std::uint8_t> file) noexcept {
  std::uint64_t newest = 0;
  if (file.size() < kEpochLogHeaderSize) return newest;
  for (std::size_t i = 0; i < 2; ++i) {
    EpochLogHeader h;
    if (decode_slot(file.data() + i * kEpochLogSlotSize, h) == SlotState::kValid) {
      newest = std::max(newest, h.epoch);
    }
  }
  return newest;
}

DecodedEpochLog decode_epoch_log(std::span<const std::uint8_t> file, std::uint64_t active_epoch,
                                 const std::string& path) {
  DecodedEpochLog out;
  if (file.empty()) return out;  // never written
  if (file.size() < kEpochLogHeaderSize) {
    if (std::all_of(file.begin(), file.end(), [](std::uint8_t b) { return b == 0; })) return out;
    corrupt(path, "shorter than its 64-byte header (" + std::to_string(file.size()) + " bytes)");
  }
  std::array<EpochLogHeader, 2> headers;
  std::array<SlotState, 2> states = {decode_slot(file.data(), headers[0]),
                                     decode_slot(file.data() + kEpochLogSlotSize, headers[1])};
  for (int i = 0; i < 2; ++i) {
    if (states[static_cast<std::size_t>(i)] != SlotState::kValid) continue;
    const EpochLogHeader& h = headers[static_cast<std::size_t>(i)];
    if (h.epoch > active_epoch && h.epoch - active_epoch > 1) {
      // A commit tags the epoch its slot is about to carry: at most one past the active one.
      corrupt(path, "header slot " + std::to_string(i) + " records epoch " +
                        std::to_string(h.epoch) + " but the checkpoint's active epoch is " +
                        std::to_string(active_epoch) +
                        ", so the checkpoint lost commits it had made (wiped, or restored from an "
                        "older backup)");
    }
    if (h.epoch > active_epoch) continue;  // written by a commit whose slot never landed
    if (out.header_slot < 0 || h.epoch > out.header.epoch) {
      out.header = h;
      out.header_slot = i;
    }
  }
  if (out.header_slot < 0 && states[0] == SlotState::kInvalid && states[1] == SlotState::kInvalid) {
    corrupt(path, "both header slots are invalid");
  }
  const std::uint64_t length = out.header.committed_length;
  if (file.size() < length) {
    corrupt(path, "holds " + std::to_string(file.size()) + " bytes but commits " +
                      std::to_string(length));
  }
  std::uint64_t pos = kEpochLogHeaderSize;
  while (pos < length) {
    if (length - pos < kEpochLogRecordHeaderSize) corrupt(path, "truncated record header");
    const auto size = load_le<std::uint32_t>(file.data() + pos);
    const auto crc = load_le<std::uint32_t>(file.data() + pos + 4);
    pos += kEpochLogRecordHeaderSize;
    if (length - pos < size) corrupt(path, "record runs past the committed length");
    const std::uint8_t* payload = file.data() + pos;
    if (crc32_of(payload, size) != crc) {
      corrupt(path, "record at byte " + std::to_string(pos - kEpochLogRecordHeaderSize) +
                        " fails its CRC");
    }
    out.records.emplace_back(payload, payload + size);
    pos += size;
  }
  return out;
}

struct EpochLog::File {
  PosixFile fd;
};

EpochLog::EpochLog(std::string path, std::uint64_t active_epoch, bool read_only, bool durable,
                   CompanionHistory history)
    : path_(std::move(path)), read_only_(read_only), durable_(durable), file_(new File) {
  file_->fd = PosixFile::open_if_exists(path_, read_only_ ? O_RDONLY : O_RDWR);
  if (file_->fd.valid()) internal::require_regular_file(file_->fd, "companion file");
  const bool joined = history == CompanionHistory::kJoinedEveryCommit;
  if (joined && !file_->fd.valid()) {
    corrupt(path_, "it is missing, but the checkpoint (active epoch " +
                       std::to_string(active_epoch) +
                       ") has committed with it every epoch since it first joined");
  }
  bool created = false;
  if (!file_->fd.valid()) {
    if (read_only_) return;  // nothing committed yet
    file_->fd = PosixFile::open(path_, O_RDWR | O_CREAT, 0644);
    created = true;
  }
  const std::uint64_t size = file_->fd.size();
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  bytes.resize(file_->fd.pread_some(bytes.data(), bytes.size(), 0));
  DecodedEpochLog decoded = decode_epoch_log(bytes, active_epoch, path_);
  if (joined && (decoded.header_slot < 0 || decoded.header.epoch != active_epoch)) {
    const std::string holds =
        bytes.empty() ? "it is empty (0 bytes)"
        : decoded.header_slot < 0
            ? "it holds " + std::to_string(bytes.size()) + " bytes but no valid header"
            : "its newest valid header is epoch " + std::to_string(decoded.header.epoch);
    corrupt(path_, holds + ", but the checkpoint is at epoch " + std::to_string(active_epoch) +
                       " and has committed with it every epoch since it first joined");
  }
  const bool reset = history == CompanionHistory::kNeverJoined;
  if (reset) decoded = DecodedEpochLog{};  // leftovers of an aborted first join: not committed
  header_ = decoded.header;
  header_slot_ = decoded.header_slot;
  records_ = std::move(decoded.records);
  if (read_only_) return;
  if (size >= kEpochLogHeaderSize) {
    // A header written by a commit whose slot never landed (epoch above the active one) must
    // not survive: a later commit of the tracker without this log attached would otherwise
    // reach its epoch and make it count. Zero it before anything else is written (every header
    // when the log never joined a commit).
    for (std::size_t i = 0; i < 2; ++i) {
      EpochLogHeader h;
      const SlotState state = decode_slot(bytes.data() + i * kEpochLogSlotSize, h);
      if ((reset && state != SlotState::kEmpty) ||
          (state == SlotState::kValid && h.epoch > active_epoch)) {
        const std::array<std::uint8_t, kEpochLogSlotSize> zeros{};
        file_->fd.pwrite_all(zeros.data(), zeros.size(), i * kEpochLogSlotSize);
      }
    }
  }
  if (size < kEpochLogHeaderSize) {
    const std::array<std::uint8_t, kEpochLogHeaderSize> zeros{};
    file_->fd.pwrite_all(zeros.data(), zeros.size(), 0);
  } else if (size > header_.committed_length) {
    file_->fd.truncate(header_.committed_length);  // uncommitted appends
  }
  if (durable_) {
    file_->fd.sync_data();
    if (created) internal::sync_parent_directory(path_);
  }
}

EpochLog::~EpochLog() = default;

void EpochLog::prepare_commit(std::uint64_t epoch,
                              std::span<const std::vector<std::uint8_t>> payloads) {
  if (read_only_) throw Error("EpochLog " + path_ + " was opened read-only");
  if (header_slot_ >= 0 && epoch <= header_.epoch) {
    throw InvalidArgument("EpochLog " + path_ + ": commit epoch " + std::to_string(epoch) +
                          " is not after the committed epoch " + std::to_string(header_.epoch));
  }
  std::vector<std::uint8_t> buffer;
  for (const auto& payload : payloads) {
    if (payload.size() > 0xFFFFFFFFu) throw InvalidArgument("EpochLog record over 4 GiB");
    const std::size_t at = buffer.size();
    buffer.resize(at + kEpochLogRecordHeaderSize + payload.size());
    store_le<std::uint32_t>(buffer.data() + at, static_cast<std::uint32_t>(payload.size()));
    store_le<std::uint32_t>(buffer.data() + at + 4, crc32_of(payload.data(), payload.size()));
    if (!payload.empty()) {
      std::memcpy(buffer.data() + at + kEpochLogRecordHeaderSize, payload.data(), payload.size());
    }
  }
  // Records first, durable before any header can count them.
  if (!buffer.empty()) {
    file_->fd.pwrite_all(buffer.data(), buffer.size(), header_.committed_length);
    if (durable_) file_->fd.sync_data();
  }
  // Then the header, into the slot that does not hold the current one.
  const EpochLogHeader next{epoch, header_.committed_length + buffer.size()};
  const int slot = header_slot_ == 0 ? 1 : 0;
  const auto encoded = encode_epoch_log_slot(next);
  file_->fd.pwrite_all(encoded.data(), encoded.size(),
                       static_cast<std::uint64_t>(slot) * kEpochLogSlotSize);
  if (durable_) file_->fd.sync_data();
  pending_header_ = next;
  pending_slot_ = slot;
}

void EpochLog::finish_commit() noexcept {
  if (pending_slot_ < 0) return;
  header_ = pending_header_;
  header_slot_ = pending_slot_;
  pending_slot_ = -1;
}

}  // namespace luminamoon::data
