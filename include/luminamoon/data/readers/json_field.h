// JSON dotted-path extraction from one JSONL record ("text", "meta.body", "messages.0.content"),
// on simdjson's DOM parser: the whole record is validated (RFC 8259 grammar, UTF-8, escapes,
// nesting), so a record is either well-formed JSON or malformed, never "good enough for the
// field we wanted". docs/readers.md has the exact rules; the Python fallback implements the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace luminamoon::data {

// Readable bytes a record must be followed by for JsonRecordParser::parse(..., padded = true)
// (simdjson's SIMDJSON_PADDING; checked by a static_assert where simdjson is included).
inline constexpr std::size_t kJsonPadding = 64;

// Deepest nesting accepted: every value (the root is at depth 1, a member or element one deeper
// than its container) must sit at depth <= kJsonMaxDepth. Deeper records are malformed. Fixed
// well below the Python json module's recursion limit so both backends agree on every record.
inline constexpr std::size_t kJsonMaxDepth = 256;

// A dotted path split into segments. A segment of ASCII digits also indexes arrays; in an object
// it is an ordinary key. Keys that contain '.' cannot be addressed.
class FieldPath {
 public:
  // Throws InvalidArgument for "" or an empty segment ("a..b", ".a", "a.").
  explicit FieldPath(std::string_view dotted);

  const std::string& dotted() const noexcept { return dotted_; }
  std::size_t size() const noexcept { return segments_.size(); }
  const std::string& segment(std::size_t i) const { return segments_[i]; }
  // The segment as an array index when it is all digits and fits u64.
  std::optional<std::uint64_t> index(std::size_t i) const { return indexes_[i]; }
  // "meta" for segment 1 of "meta.body": the dotted prefix before segment i.
  std::string_view prefix(std::size_t i) const;

 private:
  std::string dotted_;
  std::vector<std::string> segments_;
  std::vector<std::optional<std::uint64_t>> indexes_;
  std::vector<std::size_t> segment_ends_;  // byte offset in dotted_ just past each segment
};

// A scalar JSON value found at a path. `string` points into the parser (see JsonRecordParser).
struct JsonScalar {
  enum class Kind : std::uint8_t { kNull, kBool, kInt64, kUint64, kDouble, kString };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::int64_t int64 = 0;
  std::uint64_t uint64 = 0;  // integers in [2^63, 2^64)
  double number = 0;
  std::string_view string;
};

enum class LookupStatus : std::uint8_t {
  kFound,
  kMissing,    // the path does not exist in this record
  kWrongType,  // it exists but holds another JSON type (message names the type)
};

// Parses records one at a time and answers path lookups on the last one. One per thread; reusing
// it across records reuses its buffers. Not thread-safe.
class JsonRecordParser {
 public:
  JsonRecordParser();
  ~JsonRecordParser();
  JsonRecordParser(JsonRecordParser&&) noexcept;
  JsonRecordParser& operator=(JsonRecordParser&&) noexcept;

  // Parses and validates `record`. `padded`: kJsonPadding readable bytes follow it (else it is
  // copied first). Returns false on malformed JSON, with error() saying why.
  bool parse(std::string_view record, bool padded);
  const std::string& error() const noexcept { return error_; }

  // After a successful parse: the string at `path`, fully unescaped (valid UTF-8). The view is
  // valid until the next parse(). kMissing / kWrongType: `message` says why, e.g.
  // "field 'meta.bdy' not found; did you mean 'meta.body'?" or "field 'n' is a number, not a
  // string".
  LookupStatus find_string(const FieldPath& path, std::string_view& out,
                           std::string& message) const;
  // After a successful parse: the scalar at `path`; objects and arrays are kWrongType
  // ("field 'meta' is an object, not a scalar").
  LookupStatus find_scalar(const FieldPath& path, JsonScalar& out, std::string& message) const;

  // Frees the parser's buffers when a large record made them grow past `keep_bytes` of input
  // capacity, so one 100 MB record does not pin gigabytes for the rest of the stream.
  void shrink_to(std::size_t keep_bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

// One-shot extraction: parses `record` (any bytes; no padding needed) and returns the string at
// the dotted `path`, fully unescaped. Throws MalformedInputError for malformed JSON (invalid
// UTF-8 included), a missing path (with a "did you mean" suggestion among the keys present where
// the lookup failed) or a non-string value; InvalidArgument for an invalid path.
std::string extract_field(std::string_view record, std::string_view path);

}  // namespace luminamoon::data
