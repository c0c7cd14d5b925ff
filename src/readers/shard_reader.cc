// ShardReader: one shard at a time, read ahead in blocks; the records of a block are parsed by
// worker threads (one simdjson parser each) into per-worker arenas, then queued in input order.
// Batches, issues and stats are taken from the queue in order, so nothing depends on how many
// threads parsed or how far the reader has read ahead.
#include "luminamoon/data/readers/shard_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <deque>
#include <filesystem>
#include <mutex>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/common/worker_pool.h"
#include "luminamoon/data/readers/json_field.h"
#include "readers/internal/access_index.h"
#include "readers/internal/byte_source.h"
#include "readers/internal/record_scanner.h"
#include "readers/internal/shard_paths.h"

namespace luminamoon::data {

using readers_internal::ByteSource;
using readers_internal::RecordScanner;
using readers_internal::ScanEvent;
using readers_internal::SplitMode;

namespace {

constexpr std::array<std::string_view, kIssueKindCount> kIssueKindNames = {
    "unmatched_glob",   "unreadable_shard",    "decompression_error",
    "record_too_long",  "malformed_json",      "missing_field",
    "non_string_field", "missing_extra_field", "non_scalar_extra_field",
};

// Bytes read ahead per block. Large enough to amortise starting the workers (~20 us each), small
// enough that the first batch comes quickly.
constexpr std::size_t kBlockBytes = 4 << 20;
// Below this many record bytes per worker, an extra thread costs more than it saves.
constexpr std::size_t kMinBytesPerWorker = 256 << 10;
// A parser that grew past this for one large record gives the memory back afterwards.
constexpr std::size_t kParserKeepBytes = 16 << 20;
constexpr unsigned kMaxWorkers = 256;
constexpr std::size_t kPooledStorages = 4;
constexpr std::size_t kRecycleArenaBytes = 64 << 20;

unsigned clamp_workers(unsigned threads) {
  return std::clamp(resolve_thread_count(threads), 1u, kMaxWorkers);
}

template <typename T, std::size_t N>
T parse_choice(std::string_view owner, std::string_view kind, std::string_view name,
               const std::array<std::string_view, N>& names, const std::array<T, N>& values) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return values[i];
  }
  const std::span<const std::string_view> candidates(names.data(), names.size());
  std::string message =
      std::string(owner) + ": unknown " + std::string(kind) + " '" + std::string(name) + "'; ";
  if (const auto best = did_you_mean(name, candidates)) {
    message += "did you mean '" + *best + "'?";
  } else {
    message += "valid " + std::string(kind) + "s: ";
    for (std::size_t i = 0; i < N; ++i) message += (i > 0 ? ", " : "") + std::string(names[i]);
  }
  throw ConfigError(message);
}

// The outcome of one kRecord event, computed by a worker.
struct RecordResult {
  bool document = false;
  bool valid_utf8 = true;
  std::uint32_t arena = 0;
  std::size_t text_offset = 0, text_length = 0;
  IssueKind issue_kind = IssueKind::kMalformedJson;
  bool has_issue = false;
  std::string message;
  struct Field {
    FieldValue value;
    std::size_t string_offset = 0, string_length = 0;  // kString: in the same arena
    bool has_issue = false;
    IssueKind issue_kind = IssueKind::kMissingExtraField;
    std::string message;
  };
  std::vector<Field> fields;
};

struct ChunkStorage {
  std::vector<std::string> arenas;  // one per worker; never grow after the chunk is parsed
};

struct PendingIssue {
  IssueKind kind;
  std::optional<std::string> field;
  std::string message;
};

// One step of the stream, in order: a record (a document and/or issues), a shard-level issue,
// or the end of a shard.
struct Item {
  enum class Kind : std::uint8_t { kRecord, kStreamIssue, kShardEnd };
  Kind kind = Kind::kRecord;
  std::uint32_t shard = 0;
  std::uint64_t offset = 0, end = 0;
  bool next_shard = false;
  bool positioned = true;  // false for a shard that could not be opened (line 0, byte 0)
  bool line_known = true;  // false: line is relative to a resume offset whose line is unknown
  std::uint64_t line = 0;  // 0-based line of `offset` (see line_known)
  std::uint64_t blank_lines = 0;
  std::uint64_t shard_start = 0;  // where reading of this shard began (the resume offset)
  bool empty_shard = false;       // kShardEnd
  // kRecord with a document (views into `storage`):
  bool document = false;
  bool valid_utf8 = true;
  const ChunkStorage* storage = nullptr;
  std::string_view text;
  std::vector<FieldValue> fields;
  std::vector<PendingIssue> issues;
};

}  // namespace

std::string_view issue_kind_name(IssueKind kind) noexcept {
  return kIssueKindNames[static_cast<std::size_t>(kind)];
}

ShardFormat parse_shard_format(std::string_view name) {
  return parse_choice<ShardFormat, 3>(
      "ShardReader", "format", name, {"auto", "jsonl", "txt"},
      {ShardFormat::kAuto, ShardFormat::kJsonl, ShardFormat::kText});
}

TextMode parse_text_mode(std::string_view name) {
  return parse_choice<TextMode, 3>("ShardReader", "txt_mode", name, {"line", "paragraph", "file"},
                                   {TextMode::kLine, TextMode::kParagraph, TextMode::kFile});
}

std::string ReadIssue::to_string() const {
  return path + ":" + std::to_string(line) + " (byte " + std::to_string(byte_offset) +
         "): " + message;
}

struct ShardReader::State {
  ShardReaderOptions options;
  std::vector<std::string> shards;
  FieldPath text_path;
  std::vector<FieldPath> field_paths;
  unsigned workers;

  std::vector<ReadIssue> issues;
  ReadStats stats;
  bool finished = false;
  mutable std::mutex mutex;

  // Position of the consumer.
  std::uint64_t global_row = 0;
  std::int64_t consumed_shard = -1;
  std::uint64_t consumed_position = 0;  // stream offset reached in consumed_shard
  StreamCoordinate last_record;

  // Producer (read-ahead) state.
  std::uint32_t next_shard = 0;
  std::uint64_t first_offset = 0;  // start offset of the resume shard
  std::uint32_t resume_shard = 0;
  std::optional<std::uint64_t> resume_line_base;  // newlines before first_offset, when known
  bool resume_line_base_computed = false;
  std::uint32_t open_shard = 0;
  std::uint64_t open_start = 0;
  bool open_json = false;
  bool open_line_known = true;       // false: a plain shard resumed mid-file (counted on demand)
  std::uint64_t open_line_base = 0;  // newlines before open_start, when known
  std::unique_ptr<ByteSource> source;
  std::unique_ptr<RecordScanner> scanner;
  std::vector<ScanEvent> events;
  std::vector<JsonRecordParser> parsers;
  std::deque<Item> queue;
  std::deque<std::shared_ptr<ChunkStorage>> chunks;  // storages referenced by queued items
  // Storages recycled once no batch holds them: fresh 4 MiB arenas per block cost page faults.
  std::vector<std::shared_ptr<ChunkStorage>> storage_pool;

  std::shared_ptr<ChunkStorage> new_storage() {
    for (const auto& storage : storage_pool) {
      if (storage.use_count() == 1) {
        for (std::string& arena : storage->arenas) {
          arena.clear();
          if (arena.capacity() > kRecycleArenaBytes) std::string().swap(arena);
        }
        return storage;
      }
    }
    auto storage = std::make_shared<ChunkStorage>();
    if (storage_pool.size() < kPooledStorages) storage_pool.push_back(storage);
    return storage;
  }

  explicit State(ShardReaderOptions opts)
      : options(std::move(opts)),
        text_path(options.text_field),
        workers(clamp_workers(options.threads)) {
    for (const std::string& f : options.fields) field_paths.emplace_back(f);
  }

  void record_issue(ReadIssue issue) {
    ++stats.issues;
    ++stats.by_kind[static_cast<std::size_t>(issue.kind)];
    if (issues.size() < kMaxIssuesKept) {
      issues.push_back(issue);
    } else {
      ++stats.issues_not_kept;
    }
    if (options.strict) {
      finished = true;
      const std::string shard =
          issue.shard_id ? "shard " + std::to_string(*issue.shard_id) : std::string("no shard");
      throw MalformedInputError(issue.to_string() + " [" + shard + ", " +
                                std::string(issue_kind_name(issue.kind)) +
                                "; strict=False counts and skips such input instead]");
    }
  }

  // 1-based line of an item, computing the resume shard's line base on first need.
  std::uint64_t absolute_line(const Item& item) {
    if (item.line_known) return item.line + 1;
    if (!resume_line_base_computed) {
      resume_line_base_computed = true;
      resume_line_base = readers_internal::count_newlines_in_file(shards[item.shard], first_offset);
    }
    return resume_line_base ? *resume_line_base + item.line + 1 : 0;
  }

  bool produce();
  void open_next_shard();
  void scan_block();
  void parse_records(const std::vector<std::size_t>& records, ChunkStorage& storage,
                     std::vector<RecordResult>& results);
  void consume(Item& item, DocumentBatch& batch);
};

void ShardReader::State::open_next_shard() {
  const std::uint32_t shard = next_shard;
  const std::string& path = shards[shard];
  const std::uint64_t start = shard == resume_shard ? first_offset : 0;
  auto shard_issue = [&](std::string message) {
    Item& item = queue.emplace_back();
    item.kind = Item::Kind::kStreamIssue;
    item.shard = shard;
    item.positioned = false;
    item.issues.push_back({IssueKind::kUnreadableShard, std::nullopt, std::move(message)});
    ++next_shard;
  };
  // Opened first, so that a missing path or a directory is reported as such whatever its name.
  std::string error;
  readers_internal::SourceOptions source_options;
  source_options.index = {options.index_dir, options.index_spacing};
  source_options.http = {options.http_retries, options.http_backoff, options.http_timeout};
  source_options.start = start;
  source = readers_internal::open_byte_source(path, readers_internal::detect_compression(path),
                                              error, &source_options);
  if (!source) {
    shard_issue("cannot read shard: " + error);
    return;
  }
  const std::optional<ShardFormat> format = readers_internal::detect_format(path, options.format);
  if (!format) {
    source.reset();
    shard_issue(
        "cannot tell the format from the file name; pass format='jsonl' or format='txt' "
        "(format='auto' knows .jsonl, .json, .ndjson and .txt, each optionally + .gz or .zst)");
    return;
  }
  open_shard = shard;
  open_start = start;
  open_json = *format == ShardFormat::kJsonl;
  open_line_known = true;
  open_line_base = 0;
  if (start > 0) {
    std::optional<std::uint64_t> newlines;
    open_start = source->skip(start, newlines);
    if (newlines) {
      open_line_base = *newlines;  // compressed: counted while decoding up to the offset
    } else {
      open_line_known = false;
    }
  }
  SplitMode mode = SplitMode::kLine;
  if (!open_json && options.text_mode == TextMode::kParagraph) mode = SplitMode::kParagraph;
  if (!open_json && options.text_mode == TextMode::kFile) mode = SplitMode::kFile;
  scanner = std::make_unique<RecordScanner>(*source, mode, options.max_record_bytes, open_start,
                                            kBlockBytes);
}

void ShardReader::State::parse_records(const std::vector<std::size_t>& records,
                                       ChunkStorage& storage, std::vector<RecordResult>& results) {
  std::size_t total = 0;
  for (const std::size_t i : records) total += events[i].data.size();
  const std::size_t n_workers = std::min<std::size_t>(
      WorkerPool::shared().workers_for(open_json ? total : 0, workers, kMinBytesPerWorker),
      std::max<std::size_t>(records.size(), 1));
  if (parsers.size() < n_workers) parsers.resize(n_workers);
  storage.arenas.resize(n_workers);

  // Blocks of records go to pool workers; each worker appends to its own arena, and a result
  // names its arena and offset, so the batch does not depend on which worker parsed what.
  auto work = [&](std::size_t begin, std::size_t end, unsigned worker) {
    std::string& arena = storage.arenas[worker];
    std::size_t bytes = 0;
    for (std::size_t k = begin; k < end; ++k) bytes += events[records[k]].data.size();
    arena.reserve(arena.size() + bytes);
    JsonRecordParser& parser = parsers[worker];
    bool grown = false;  // the previous record made the parser grow past kParserKeepBytes
    for (std::size_t k = begin; k < end; ++k) {
      if (grown) parser.shrink_to(kParserKeepBytes);
      const std::string_view data = events[records[k]].data;
      grown = open_json && data.size() > kParserKeepBytes;
      RecordResult& r = results[k];
      r.arena = static_cast<std::uint32_t>(worker);
      if (!open_json) {
        r.document = true;
        r.valid_utf8 = simdjson::validate_utf8(data.data(), data.size());
        r.text_offset = arena.size();
        r.text_length = data.size();
        arena.append(data);
        continue;
      }
      if (!parser.parse(data, /*padded=*/true)) {
        r.has_issue = true;
        r.issue_kind = IssueKind::kMalformedJson;
        r.message = parser.error();
        continue;
      }
      std::string_view text;
      const LookupStatus status = parser.find_string(text_path, text, r.message);
      if (status != LookupStatus::kFound) {
        r.has_issue = true;
        r.issue_kind = status == LookupStatus::kMissing ? IssueKind::kMissingField
                                                        : IssueKind::kNonStringField;
      } else {
        r.document = true;
        r.text_offset = arena.size();
        r.text_length = text.size();
        arena.append(text);
        r.fields.resize(field_paths.size());
        for (std::size_t f = 0; f < field_paths.size(); ++f) {
          RecordResult::Field& out = r.fields[f];
          JsonScalar value;
          const LookupStatus fs = parser.find_scalar(field_paths[f], value, out.message);
          if (fs != LookupStatus::kFound) {
            out.has_issue = true;
            out.issue_kind = fs == LookupStatus::kMissing ? IssueKind::kMissingExtraField
                                                          : IssueKind::kNonScalarExtraField;
            continue;
          }
          FieldValue& v = out.value;
          switch (value.kind) {
            case JsonScalar::Kind::kNull:
              v.kind = FieldValue::Kind::kNull;
              break;
            case JsonScalar::Kind::kBool:
              v.kind = FieldValue::Kind::kBool;
              v.boolean = value.boolean;
              break;
            case JsonScalar::Kind::kInt64:
              v.kind = FieldValue::Kind::kInt64;
              v.int64 = value.int64;
              break;
            case JsonScalar::Kind::kUint64:
              v.kind = FieldValue::Kind::kUint64;
              v.uint64 = value.uint64;
              break;
            case JsonScalar::Kind::kDouble:
              v.kind = FieldValue::Kind::kDouble;
              v.number = value.number;
              break;
            case JsonScalar::Kind::kString:
              v.kind = FieldValue::Kind::kString;
              out.string_offset = arena.size();
              out.string_length = value.string.size();
              arena.append(value.string);
              break;
          }
        }
      }
    }
    if (grown) parser.shrink_to(kParserKeepBytes);
  };

  WorkerPool::shared().run(records.size(), static_cast<unsigned>(n_workers), 0, work);
}

void ShardReader::State::scan_block() {
  events.clear();
  scanner->next_block(events);
  std::vector<std::size_t> records;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == ScanEvent::Kind::kRecord) records.push_back(i);
  }
  std::shared_ptr<ChunkStorage> storage = new_storage();
  std::vector<RecordResult> results(records.size());
  if (!records.empty()) parse_records(records, *storage, results);

  std::size_t next_record = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const ScanEvent& e = events[i];
    Item& item = queue.emplace_back();
    item.shard = open_shard;
    item.shard_start = open_start;
    item.offset = e.offset;
    item.end = e.end;
    item.next_shard = e.shard_end;
    item.line = e.line + open_line_base;
    item.line_known = open_line_known;
    item.blank_lines = e.blank_lines;
    switch (e.kind) {
      case ScanEvent::Kind::kRecord: {
        RecordResult& r = results[next_record++];
        item.kind = Item::Kind::kRecord;
        if (r.has_issue) {
          item.issues.push_back({r.issue_kind,
                                 r.issue_kind == IssueKind::kMalformedJson
                                     ? std::nullopt
                                     : std::optional<std::string>(options.text_field),
                                 std::move(r.message)});
        }
        if (r.document) {
          item.document = true;
          item.valid_utf8 = r.valid_utf8;
          item.storage = storage.get();
          // The arenas are complete: views into them stay valid while the storage lives.
          const std::string& arena = storage->arenas[r.arena];
          item.text = std::string_view(arena).substr(r.text_offset, r.text_length);
          if (!r.fields.empty()) {  // JSONL (text records have no fields)
            item.fields.resize(field_paths.size());
            for (std::size_t f = 0; f < field_paths.size(); ++f) {
              RecordResult::Field& fr = r.fields[f];
              if (fr.has_issue) {
                item.issues.push_back({fr.issue_kind, options.fields[f], std::move(fr.message)});
              }
              item.fields[f] = fr.value;
              if (fr.value.kind == FieldValue::Kind::kString) {
                item.fields[f].string =
                    std::string_view(arena).substr(fr.string_offset, fr.string_length);
              }
            }
          }
        }
        break;
      }
      case ScanEvent::Kind::kTooLong:
        item.kind = Item::Kind::kRecord;
        item.issues.push_back({IssueKind::kRecordTooLong, std::nullopt,
                               "record of " + std::to_string(e.length) +
                                   " bytes is longer than max_record_bytes=" +
                                   std::to_string(options.max_record_bytes) + "; skipped"});
        break;
      case ScanEvent::Kind::kSourceError:
        item.kind = Item::Kind::kStreamIssue;
        item.issues.push_back({source->decompression_failed() ? IssueKind::kDecompressionError
                                                              : IssueKind::kUnreadableShard,
                               std::nullopt,
                               e.message + "; the records decoded before it were delivered"});
        break;
      case ScanEvent::Kind::kEnd:
        item.kind = Item::Kind::kShardEnd;
        item.empty_shard = open_start == 0 && e.end == 0 && !source->failed();
        break;
    }
  }
  if (!records.empty()) chunks.push_back(std::move(storage));
  if (scanner->done()) {
    scanner.reset();
    source.reset();
    ++next_shard;
  }
}

bool ShardReader::State::produce() {
  for (;;) {
    if (!scanner) {
      if (next_shard >= shards.size()) return false;
      open_next_shard();
      if (!scanner) return true;  // a shard-level issue was queued
    }
    const std::size_t before = queue.size();
    scan_block();
    if (queue.size() > before) return true;
  }
}

void ShardReader::State::consume(Item& item, DocumentBatch& batch) {
  stats.blank_lines += item.blank_lines;
  if (item.kind != Item::Kind::kStreamIssue && consumed_shard != item.shard) {
    consumed_shard = item.shard;
    consumed_position = item.shard_start;
  }
  if (item.end > consumed_position && item.kind != Item::Kind::kStreamIssue) {
    stats.bytes_read += item.end - consumed_position;
    consumed_position = item.end;
  }
  if (item.kind == Item::Kind::kShardEnd) {
    ++stats.shards_opened;
    if (item.empty_shard) ++stats.empty_shards;
    return;
  }
  if (item.kind == Item::Kind::kRecord) {
    ++stats.records;
    ++global_row;
    StreamCoordinate c;
    c.shard_id = item.next_shard ? item.shard + 1 : item.shard;
    c.byte_offset = item.next_shard ? 0 : item.end;
    c.global_row_idx = global_row;
    last_record = c;
    if (item.document) {
      batch.texts.push_back(item.text);
      batch.valid_utf8.push_back(item.valid_utf8 ? 1 : 0);
      if (!item.valid_utf8) ++stats.invalid_utf8_texts;
      // Text-format records have no fields: their values are null.
      for (std::size_t f = 0; f < batch.fields.size(); ++f) {
        batch.fields[f].push_back(f < item.fields.size() ? item.fields[f] : FieldValue{});
      }
      batch.coordinates.push_back(c);
      ++stats.documents;
      if (batch.storage.empty() || batch.storage.back().get() != item.storage) {
        for (const auto& chunk : chunks) {
          if (chunk.get() == item.storage) {
            batch.storage.push_back(chunk);
            break;
          }
        }
      }
    }
  }
  for (PendingIssue& pending : item.issues) {
    ReadIssue issue;
    issue.shard_id = item.shard;
    issue.path = shards[item.shard];
    issue.kind = pending.kind;
    issue.field = std::move(pending.field);
    issue.message = std::move(pending.message);
    if (item.positioned) {
      issue.byte_offset = item.offset;
      issue.line = absolute_line(item);
    }
    record_issue(std::move(issue));
  }
}

ShardReader::ShardReader(const std::vector<std::string>& patterns, ShardReaderOptions options) {
  if (options.batch_size == 0) throw InvalidArgument("ShardReader: batch_size must be >= 1");
  if (options.max_record_bytes == 0) {
    throw InvalidArgument("ShardReader: max_record_bytes must be >= 1");
  }
  for (std::size_t i = 0; i < options.fields.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (options.fields[i] == options.fields[j]) {
        throw InvalidArgument("ShardReader: fields lists '" + options.fields[i] + "' twice");
      }
    }
  }
  if (options.index_spacing < readers_internal::kMinIndexSpacing) {
    throw InvalidArgument("ShardReader: index_spacing must be >= 65536 (64 KiB), got " +
                          std::to_string(options.index_spacing));
  }
  if (options.http_retries > 100) {
    throw InvalidArgument("ShardReader: http_retries must be in [0, 100], got " +
                          std::to_string(options.http_retries));
  }
  if (!(options.http_backoff >= 0 && options.http_backoff <= 3600)) {
    throw InvalidArgument("ShardReader: http_backoff must be in [0, 3600] seconds");
  }
  if (!(options.http_timeout > 0 && options.http_timeout <= 86400)) {
    throw InvalidArgument("ShardReader: http_timeout must be in (0, 86400] seconds");
  }
  if (!options.index_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.index_dir, ec);
    if (ec) throw IoError(ec.value(), options.index_dir, "cannot create index_dir");
    if (!std::filesystem::is_directory(options.index_dir, ec)) {
      throw IoError(ENOTDIR, options.index_dir, "index_dir is not a directory");
    }
  }
  state_ = std::make_unique<State>(std::move(options));
  State& s = *state_;
  std::vector<std::string> unmatched;
  for (const std::string& pattern : patterns) {
    std::vector<std::string> matches = readers_internal::expand_pattern(pattern);
    if (matches.empty()) unmatched.push_back(pattern);
    for (std::string& m : matches) s.shards.push_back(std::move(m));
  }
  if (s.shards.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidArgument("ShardReader: more than 2^32 - 1 shards");
  }
  if (s.options.start) {
    const StreamCoordinate& start = *s.options.start;
    if (start.shard_id > s.shards.size() ||
        (start.shard_id == s.shards.size() && start.byte_offset != 0)) {
      throw InvalidArgument("ShardReader: start " + start.repr() + " is outside the " +
                            std::to_string(s.shards.size()) + " shards");
    }
    s.next_shard = start.shard_id;
    s.resume_shard = start.shard_id;
    s.first_offset = start.byte_offset;
    s.global_row = start.global_row_idx;
  }
  for (const std::string& pattern : unmatched) {
    ReadIssue issue;
    issue.path = pattern;
    issue.kind = IssueKind::kUnmatchedGlob;
    issue.message = "the pattern matched no files";
    s.record_issue(std::move(issue));
  }
}

ShardReader::~ShardReader() = default;

const std::vector<std::string>& ShardReader::shards() const noexcept { return state_->shards; }
const ShardReaderOptions& ShardReader::options() const noexcept { return state_->options; }
std::vector<ReadIssue> ShardReader::issues() const {
  std::lock_guard lock(state_->mutex);
  return state_->issues;
}

ReadStats ShardReader::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

bool ShardReader::next_batch(DocumentBatch& batch) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  batch.clear();
  batch.fields.resize(s.field_paths.size());
  if (s.finished) return false;
  while (batch.size() < s.options.batch_size) {
    if (s.queue.empty()) {
      // Storages no queued item refers to any more: the batch holds its own references.
      s.chunks.clear();
      if (!s.produce()) {
        s.finished = true;
        break;
      }
      continue;
    }
    Item item = std::move(s.queue.front());
    s.queue.pop_front();
    s.consume(item, batch);
  }
  if (batch.size() == 0) {
    s.finished = true;
    return false;
  }
  batch.end = s.last_record;
  return true;
}

void ShardReader::close() noexcept {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.finished = true;
  s.scanner.reset();
  s.source.reset();
  s.queue.clear();
  s.chunks.clear();
}

}  // namespace luminamoon::data
