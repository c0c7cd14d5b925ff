// Record splitting state machine (see internal/record_scanner.h and docs/readers.md).
//
// Memory: the buffer holds at most the record being collected (<= max_record_bytes, or twice
// that for a paragraph followed by a long partial line that may still turn out blank) plus one
// read-ahead block. Anything longer switches to skipping, which keeps nothing. The buffer never
// grows past that bound, and growing it neither copies nor touches unused capacity
// (ScanBuffer), so the resident memory while a record is collected or skipped is the limit plus
// one block, not the ~2x a zero-filled, copied std::vector had.
#include "readers/internal/record_scanner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "luminamoon/data/readers/json_field.h"

namespace luminamoon::data::readers_internal {

ScanBuffer::~ScanBuffer() { std::free(data_); }

void ScanBuffer::resize(std::size_t n) {
  void* p = std::realloc(data_, n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
  size_ = n;
}

bool is_blank_line(std::string_view line) noexcept {
  for (const char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

RecordScanner::RecordScanner(ByteSource& source, SplitMode mode, std::uint64_t max_record_bytes,
                             std::uint64_t start_offset, std::size_t block_bytes)
    : source_(source),
      mode_(mode),
      max_(max_record_bytes),
      block_(std::max<std::size_t>(block_bytes, 1)),
      base_(start_offset),
      start_offset_(start_offset) {
  // What refill() can keep (one record, two for a paragraph whose trailing partial line may
  // still turn out blank) plus the block it appends and the JSON padding.
  const std::uint64_t kept = mode_ == SplitMode::kParagraph ? 2 * max_ : max_;
  cap_ = static_cast<std::size_t>(
      std::min<std::uint64_t>(kept + 1 + block_ + kJsonPadding, SIZE_MAX / 2));
}

ScanEvent& RecordScanner::emit(std::vector<ScanEvent>& events, ScanEvent::Kind kind) {
  ScanEvent& e = events.emplace_back();
  e.kind = kind;
  e.blank_lines = blank_;
  blank_ = 0;
  return e;
}

void RecordScanner::refill() {
  if (eof_) return;
  std::size_t keep = cur_;
  if (mode_ == SplitMode::kFile) {
    keep = skipping_ ? end_ : 0;
  } else if (!skipping_ && mode_ == SplitMode::kParagraph && para_open_) {
    keep = static_cast<std::size_t>(para_start_ - base_);
  }
  if (keep > 0) {
    std::memmove(buffer_.data(), buffer_.data() + keep, end_ - keep);
    base_ += keep;
    cur_ -= keep;
    end_ -= keep;
  }
  // Give back the memory of a huge record once it has been consumed.
  if (buffer_.size() > 8 * block_ && end_ < block_) buffer_.resize(end_ + kJsonPadding);
  std::size_t added = 0;
  while (added < block_) {
    const std::size_t need = end_ + (block_ - added) + kJsonPadding;
    if (buffer_.size() < need) {
      // Geometric growth, but never past what the scanner can need (cap_).
      buffer_.resize(std::max(need, std::min(cap_, buffer_.size() + buffer_.size() / 2)));
    }
    const std::size_t n = source_.read(buffer_.data() + end_, block_ - added);
    if (n == 0) {
      eof_ = true;
      break;
    }
    end_ += n;
    added += n;
  }
  if (buffer_.size() < end_ + kJsonPadding) buffer_.resize(end_ + kJsonPadding);
  std::memset(buffer_.data() + end_, 0, kJsonPadding);
}

void RecordScanner::next_block(std::vector<ScanEvent>& events) {
  if (done_) return;
  refill();
  if (held_) {
    held_ = false;
    held_event_.shard_end = cur_ == end_ && eof_ && !source_.failed();
    events.push_back(std::move(held_event_));
  }
  if (mode_ == SplitMode::kFile) {
    scan_file(events);
  } else {
    scan_lines(events);
  }
  if (eof_) finish(events);
}

void RecordScanner::scan_file(std::vector<ScanEvent>&) {
  if (!skipping_ && stream(end_) - start_offset_ > max_) skipping_ = true;
  if (skipping_) cur_ = end_;
}

void RecordScanner::on_line(std::size_t begin, std::size_t nl, std::vector<ScanEvent>& events) {
  const char* data = buffer_.data();
  const std::size_t length = nl - begin;
  if (mode_ == SplitMode::kLine) {
    const bool at_end = nl + 1 == end_ && eof_ && !source_.failed();
    if (length > max_) {
      ScanEvent& e = emit(events, ScanEvent::Kind::kTooLong);
      e.offset = stream(begin);
      e.line = line_;
      e.length = length;
      e.end = stream(nl + 1);
      e.shard_end = at_end;
    } else if (is_blank_line({data + begin, length})) {
      ++blank_;
    } else {
      ScanEvent& e = emit(events, ScanEvent::Kind::kRecord);
      e.offset = stream(begin);
      e.line = line_;
      e.end = stream(nl + 1);
      e.shard_end = at_end;
      e.data = {data + begin, length};
    }
  } else if (length <= max_ && is_blank_line({data + begin, length})) {
    if (para_open_) {
      ScanEvent& e = emit(events, ScanEvent::Kind::kRecord);
      e.offset = para_start_;
      e.line = para_line_;
      e.end = stream(begin);
      const std::size_t first = static_cast<std::size_t>(para_start_ - base_);
      e.data = {data + first, static_cast<std::size_t>(para_content_end_ - para_start_)};
      para_open_ = false;
    }
    ++blank_;
  } else {
    if (!para_open_) {
      para_open_ = true;
      para_start_ = stream(begin);
      para_line_ = line_;
    }
    para_content_end_ = stream(nl);
    if (para_content_end_ - para_start_ > max_) {
      skipping_ = true;
      skip_start_ = para_start_;
      skip_line_ = para_line_;
      skip_content_end_ = para_content_end_;
      skip_line_start_ = stream(nl + 1);
      skip_line_blank_ = true;
      para_open_ = false;
    }
  }
  cur_ = nl + 1;
  ++line_;
}

void RecordScanner::scan_lines(std::vector<ScanEvent>& events) {
  const char* data = buffer_.data();
  while (cur_ < end_) {
    const void* found = std::memchr(data + cur_, '\n', end_ - cur_);
    const std::size_t nl =
        found != nullptr ? static_cast<std::size_t>(static_cast<const char*>(found) - data) : end_;
    if (skipping_ && mode_ == SplitMode::kLine) {
      if (found == nullptr) {
        cur_ = end_;
        return;
      }
      cur_ = nl + 1;
      ++line_;
      skipping_ = false;
      ScanEvent e;
      e.kind = ScanEvent::Kind::kTooLong;
      e.offset = skip_start_;
      e.line = skip_line_;
      e.length = stream(nl) - skip_start_;
      e.end = stream(cur_);
      e.blank_lines = blank_;
      blank_ = 0;
      if (cur_ == end_ && !eof_) {  // whether it ends the shard is known after the next read
        held_event_ = std::move(e);
        held_ = true;
        return;
      }
      e.shard_end = cur_ == end_ && !source_.failed();
      events.push_back(std::move(e));
      continue;
    }
    if (skipping_) {  // kParagraph: skip lines until a blank one
      if (skip_line_blank_) {
        skip_line_blank_ =
            stream(nl) - skip_line_start_ <= max_ && is_blank_line({data + cur_, nl - cur_});
      }
      if (found == nullptr) {
        if (!skip_line_blank_) skip_content_end_ = stream(end_);
        cur_ = end_;
        return;
      }
      if (skip_line_blank_) {
        ScanEvent& e = emit(events, ScanEvent::Kind::kTooLong);
        e.offset = skip_start_;
        e.line = skip_line_;
        e.length = skip_content_end_ - skip_start_;
        e.end = skip_line_start_;
        skipping_ = false;
        ++blank_;
      } else {
        skip_content_end_ = stream(nl);
      }
      cur_ = nl + 1;
      ++line_;
      skip_line_start_ = stream(cur_);
      skip_line_blank_ = true;
      continue;
    }
    if (found == nullptr) {
      if (eof_) return;  // the final unterminated line: finish() decides
      const std::size_t partial = end_ - cur_;
      if (mode_ == SplitMode::kLine) {
        if (partial > max_) {
          skipping_ = true;
          skip_start_ = stream(cur_);
          skip_line_ = line_;
          cur_ = end_;
        }
        return;
      }
      // kParagraph. A line longer than the limit is content, never blank.
      const bool content = partial > max_ || !is_blank_line({data + cur_, partial});
      const bool too_long =
          para_open_ ? content && stream(end_) - para_start_ > max_ : partial > max_;
      if (too_long) {
        skipping_ = true;
        skip_start_ = para_open_ ? para_start_ : stream(cur_);
        skip_line_ = para_open_ ? para_line_ : line_;
        skip_content_end_ = stream(end_);
        skip_line_start_ = stream(cur_);
        skip_line_blank_ = false;
        para_open_ = false;
        cur_ = end_;
      }
      return;
    }
    // A line ending exactly at the end of the data read so far: whether its coordinate is the
    // next shard depends on whether more data follows, so it waits for the next read.
    if (mode_ == SplitMode::kLine && nl + 1 == end_ && !eof_) return;
    on_line(cur_, nl, events);
  }
}

void RecordScanner::finish(std::vector<ScanEvent>& events) {
  done_ = true;
  const char* data = buffer_.data();
  if (source_.failed()) {
    ScanEvent& e = emit(events, ScanEvent::Kind::kSourceError);
    e.message = source_.error();
    e.offset = stream(cur_);
    e.line = line_;
    if (mode_ == SplitMode::kFile) {
      e.offset = start_offset_;
      e.line = 0;
    } else if (skipping_) {
      e.offset = skip_start_;
      e.line = skip_line_;
    } else if (para_open_) {
      e.offset = para_start_;
      e.line = para_line_;
    }
    ScanEvent& last = emit(events, ScanEvent::Kind::kEnd);
    last.end = stream(end_);
    return;
  }
  const std::uint64_t eof = stream(end_);
  if (mode_ == SplitMode::kFile) {
    const std::uint64_t length = eof - start_offset_;
    if (skipping_) {
      ScanEvent& e = emit(events, ScanEvent::Kind::kTooLong);
      e.offset = start_offset_;
      e.length = length;
      e.end = eof;
      e.shard_end = true;
    } else if (length > 0) {
      ScanEvent& e = emit(events, ScanEvent::Kind::kRecord);
      e.offset = start_offset_;
      e.end = eof;
      e.shard_end = true;
      e.data = {data, end_};
    }
  } else if (mode_ == SplitMode::kLine) {
    if (skipping_) {
      ScanEvent& e = emit(events, ScanEvent::Kind::kTooLong);
      e.offset = skip_start_;
      e.line = skip_line_;
      e.length = eof - skip_start_;
      e.end = eof;
      e.shard_end = true;
    } else if (cur_ < end_) {
      const std::size_t length = end_ - cur_;
      if (length > max_) {
        ScanEvent& e = emit(events, ScanEvent::Kind::kTooLong);
        e.offset = stream(cur_);
        e.line = line_;
        e.length = length;
        e.end = eof;
        e.shard_end = true;
      } else if (is_blank_line({data + cur_, length})) {
        ++blank_;
      } else {
        ScanEvent& e = emit(events, ScanEvent::Kind::kRecord);
        e.offset = stream(cur_);
        e.line = line_;
        e.end = eof;
        e.shard_end = true;
        e.data = {data + cur_, length};
      }
      cur_ = end_;
    }
  } else if (skipping_) {  // kParagraph, at the end of a too-long paragraph
    const bool blank_tail = skip_line_start_ < eof && skip_line_blank_;
    ScanEvent& e = emit(events, ScanEvent::Kind::kTooLong);
    e.offset = skip_start_;
    e.line = skip_line_;
    e.length = skip_content_end_ - skip_start_;
    e.end = blank_tail ? skip_line_start_ : eof;
    e.shard_end = !blank_tail;
    if (blank_tail) ++blank_;
  } else {              // kParagraph
    if (cur_ < end_) {  // the final line has no newline: treat it as a complete line
      const std::size_t length = end_ - cur_;
      if (length <= max_ && is_blank_line({data + cur_, length})) {
        if (para_open_) {
          ScanEvent& e = emit(events, ScanEvent::Kind::kRecord);
          e.offset = para_start_;
          e.line = para_line_;
          e.end = stream(cur_);
          const std::size_t first = static_cast<std::size_t>(para_start_ - base_);
          e.data = {data + first, static_cast<std::size_t>(para_content_end_ - para_start_)};
          para_open_ = false;
        }
        ++blank_;
      } else {
        if (!para_open_) {
          para_open_ = true;
          para_start_ = stream(cur_);
          para_line_ = line_;
        }
        para_content_end_ = eof;
      }
      cur_ = end_;
    }
    if (para_open_) {
      para_open_ = false;
      const std::uint64_t length = para_content_end_ - para_start_;
      ScanEvent& e =
          emit(events, length > max_ ? ScanEvent::Kind::kTooLong : ScanEvent::Kind::kRecord);
      e.offset = para_start_;
      e.line = para_line_;
      e.end = eof;
      e.shard_end = true;
      if (length > max_) {
        e.length = length;
      } else {
        const std::size_t first = static_cast<std::size_t>(para_start_ - base_);
        e.data = {data + first, static_cast<std::size_t>(length)};
      }
    }
  }
  ScanEvent& last = emit(events, ScanEvent::Kind::kEnd);
  last.end = eof;
}

}  // namespace luminamoon::data::readers_internal
