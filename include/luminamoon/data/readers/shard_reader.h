// ShardReader: documents from .jsonl / .txt shards (plain, .gz, .zst; local paths and globs), in
// batches, each document tagged with the StreamCoordinate just after it so a stream resumes
// exactly. docs/readers.md is the contract; the Python fallback implements the same rules.
//
// Contract notes:
//  * Deterministic: batches, coordinates, issues and stats never depend on `threads`.
//  * Bad input is counted and reported as ReadIssue (or thrown as MalformedInputError with
//    `strict`); it never stops the stream otherwise. Issues and stats cover exactly the records
//    consumed by the batches returned so far, never the read-ahead.
//  * Calls are serialised by an internal mutex, so batches come out in order whoever asks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/checkpoint/stream_coordinate.h"
#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data {

enum class ShardFormat : std::uint8_t { kAuto, kJsonl, kText };
enum class TextMode : std::uint8_t { kLine, kParagraph, kFile };

// Parse the option strings "auto" | "jsonl" | "txt" and "line" | "paragraph" | "file"; anything
// else throws ConfigError "ShardReader: unknown format 'jsnl'; did you mean 'jsonl'?".
ShardFormat parse_shard_format(std::string_view name);
TextMode parse_text_mode(std::string_view name);

struct ShardReaderOptions {
  std::string text_field = "text";  // dotted path of the document text in JSONL records
  std::vector<std::string> fields;  // extra dotted paths carried alongside (scalars)
  ShardFormat format = ShardFormat::kAuto;
  TextMode text_mode = TextMode::kLine;
  std::size_t batch_size = 1024;                  // documents per batch, >= 1
  std::optional<StreamCoordinate> start;          // resume position
  bool strict = false;                            // first issue throws MalformedInputError
  std::uint64_t max_record_bytes = 256ull << 20;  // longer records are skipped, streamed past
  unsigned threads = 0;                           // JSON parsing workers; 0 = all cores
  // Access-point indexes of .gz / .zst shards (docs/readers.md, "Access-point index"): kept in
  // this directory (created if missing; none when empty), built while reading, used by `start`
  // so a resume decodes at most `index_spacing` bytes instead of the whole prefix.
  std::string index_dir;
  std::uint64_t index_spacing = 4ull << 20;  // uncompressed bytes between points, >= 64 KiB
  // http(s):// shards (HTTP/1.1 Range requests): extra attempts after a 5xx, a timeout or a
  // connection error, the wait before the first retry (doubled each time, at most 60 s), and the
  // limit per request, in seconds.
  unsigned http_retries = 4;
  double http_backoff = 0.5;
  double http_timeout = 30.0;
};

enum class IssueKind : std::uint8_t {
  kUnmatchedGlob,        // a pattern matched no file (no shard id)
  kUnreadableShard,      // missing, a directory, not a regular file, unknown format, I/O error
  kDecompressionError,   // corrupt or truncated .gz / .zst
  kRecordTooLong,        // longer than max_record_bytes; skipped without being held in memory
  kMalformedJson,        // not one valid JSON value (syntax, invalid UTF-8, lone surrogate, ...)
  kMissingField,         // the text field is absent: record skipped
  kNonStringField,       // the text field is not a string: record skipped
  kMissingExtraField,    // an extra field is absent: value None, document kept
  kNonScalarExtraField,  // an extra field is an object/array: value None, document kept
};
inline constexpr std::size_t kIssueKindCount = 9;

// "unmatched_glob", "unreadable_shard", ... (the ReadIssue.kind strings).
std::string_view issue_kind_name(IssueKind kind) noexcept;

struct ReadIssue {
  std::optional<std::uint32_t> shard_id;  // nullopt for kUnmatchedGlob
  std::string path;                       // the shard path (the pattern for kUnmatchedGlob)
  std::uint64_t line = 0;                 // 1-based line of the record's first byte; 0: shard-level
  std::uint64_t byte_offset = 0;          // uncompressed offset of the record's first byte
  std::optional<std::string> field;       // the dotted path involved, if any
  IssueKind kind = IssueKind::kMalformedJson;
  std::string message;

  // "path:line (byte N): message"
  std::string to_string() const;
};

// Batches are DocumentBatch (pipeline/document_batch.h): texts, the valid-UTF-8 flags (0 when
// a text-format record is not valid UTF-8; Python decodes it with U+FFFD replacement, CPython's
// rule; JSON texts are always valid), fields[f][document] in options.fields order (scalar
// DataValues), the coordinate after each document, and `end`, after the last record scanned.

// Counters over the records consumed so far (see docs/readers.md for each one).
struct ReadStats {
  std::uint64_t records = 0;
  std::uint64_t documents = 0;
  std::uint64_t blank_lines = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t shards_opened = 0;
  std::uint64_t empty_shards = 0;
  std::uint64_t invalid_utf8_texts = 0;
  std::uint64_t issues = 0;
  std::uint64_t issues_not_kept = 0;
  std::uint64_t by_kind[kIssueKindCount] = {};
};

class ShardReader {
 public:
  // Maximum number of issues kept in issues(); the rest are only counted.
  static constexpr std::size_t kMaxIssuesKept = 1000;

  // Expands `patterns` (each a path or a glob: *, ?, [...]; matches sorted bytewise per pattern,
  // patterns in order) into shards(). Throws ConfigError / InvalidArgument for bad options, and
  // MalformedInputError in strict mode when a pattern matches nothing.
  ShardReader(const std::vector<std::string>& patterns, ShardReaderOptions options);
  ~ShardReader();
  ShardReader(const ShardReader&) = delete;
  ShardReader& operator=(const ShardReader&) = delete;

  const std::vector<std::string>& shards() const noexcept;
  const ShardReaderOptions& options() const noexcept;

  // Fills `batch` with the next documents (at most batch_size); false when the stream is over
  // (batch left empty). Strict mode: throws MalformedInputError at the first issue, after which
  // the reader is finished.
  bool next_batch(DocumentBatch& batch);

  // Snapshots (safe to call while another thread is inside next_batch).
  std::vector<ReadIssue> issues() const;
  ReadStats stats() const;

  // Closes the open shard and ends the stream; idempotent.
  void close() noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace luminamoon::data
