// Splits the byte stream of one shard into records (lines, blank-line separated paragraphs, or
// the whole file) with their offsets, line numbers and coordinates. Records longer than the
// limit are streamed past, never held in memory whole. The rules are in docs/readers.md; the
// Python fallback (fallbacks/readers.py, _Scanner) is the same state machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readers/internal/byte_source.h"

namespace luminamoon::data::readers_internal {

// The scanner's byte buffer: malloc/realloc, never zero-filled. Growing a large buffer is a
// realloc, which glibc serves with mremap for mmapped blocks (no copy, so there is no moment
// with an old and a new copy both resident), and untouched capacity costs no memory: what is
// resident follows the bytes actually read, i.e. the record being collected plus one read-ahead
// block, also while an over-long record is being skipped.
class ScanBuffer {
 public:
  ScanBuffer() = default;
  ~ScanBuffer();
  ScanBuffer(const ScanBuffer&) = delete;
  ScanBuffer& operator=(const ScanBuffer&) = delete;

  char* data() noexcept { return data_; }
  const char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  // Keeps [0, min(size(), n)); bytes past the old size are uninitialised. Throws bad_alloc.
  void resize(std::size_t n);

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace luminamoon::data::readers_internal

namespace luminamoon::data::readers_internal {

enum class SplitMode : std::uint8_t { kLine, kParagraph, kFile };

struct ScanEvent {
  enum class Kind : std::uint8_t {
    kRecord,       // `data` is the record
    kTooLong,      // a record longer than the limit, skipped; `length` is its length
    kSourceError,  // the stream failed; the unfinished record at `offset` is dropped
    kEnd,          // the end of the shard; `end` is the final stream position
  };
  Kind kind = Kind::kRecord;
  std::uint64_t offset = 0;       // first byte of the record (kSourceError: of the dropped bytes)
  std::uint64_t end = 0;          // just past the record's terminating newline (or the end of data)
  bool shard_end = false;         // `end` is the clean end of the shard
  std::uint64_t line = 0;         // newlines between the scan start and `offset`
  std::uint64_t blank_lines = 0;  // blank lines passed since the previous event
  std::uint64_t length = 0;       // kTooLong: bytes in the record
  std::string_view data;          // kRecord: followed by kJsonPadding readable bytes
  std::string message;            // kSourceError
};

// A line is blank when it holds only spaces, tabs and carriage returns (JSON whitespace).
bool is_blank_line(std::string_view line) noexcept;

class RecordScanner {
 public:
  // `start_offset`: the stream position the source was moved to (events carry stream offsets).
  // `block_bytes`: how much to read ahead per call.
  RecordScanner(ByteSource& source, SplitMode mode, std::uint64_t max_record_bytes,
                std::uint64_t start_offset, std::size_t block_bytes);

  // Appends the events found in the next block (possibly none) and returns. kRecord views stay
  // valid until the next call. After the kEnd event, done() is true.
  void next_block(std::vector<ScanEvent>& events);
  bool done() const noexcept { return done_; }

 private:
  std::uint64_t stream(std::size_t index) const noexcept { return base_ + index; }
  void refill();
  void scan_lines(std::vector<ScanEvent>& events);
  void scan_file(std::vector<ScanEvent>& events);
  void finish(std::vector<ScanEvent>& events);
  void on_line(std::size_t begin, std::size_t end, std::vector<ScanEvent>& events);
  ScanEvent& emit(std::vector<ScanEvent>& events, ScanEvent::Kind kind);

  ByteSource& source_;
  SplitMode mode_;
  std::uint64_t max_;
  std::size_t block_;

  ScanBuffer buffer_;    // [0, end_) data, then kJsonPadding zero bytes
  std::size_t cap_ = 0;  // the most the buffer can ever need (see refill)
  std::size_t cur_ = 0;  // scan cursor
  std::size_t end_ = 0;
  std::uint64_t base_;  // stream offset of buffer_[0]
  std::uint64_t start_offset_;
  bool eof_ = false;
  bool done_ = false;
  std::uint64_t line_ = 0;   // newlines before cur_
  std::uint64_t blank_ = 0;  // blank lines since the last event

  // Paragraph being collected (kParagraph): stream offsets.
  bool para_open_ = false;
  std::uint64_t para_start_ = 0, para_line_ = 0, para_content_end_ = 0;

  // Record being skipped because it is too long.
  bool skipping_ = false;
  std::uint64_t skip_start_ = 0, skip_line_ = 0, skip_content_end_ = 0;
  bool skip_line_blank_ = true;        // kParagraph: the partial line seen so far is blank
  std::uint64_t skip_line_start_ = 0;  // kParagraph: stream offset of that partial line
  // A kTooLong event that ended exactly at the end of the buffered data: whether it also ends
  // the shard is known only after the next read.
  bool held_ = false;
  ScanEvent held_event_;
};

}  // namespace luminamoon::data::readers_internal
