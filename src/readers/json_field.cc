// Dotted-path lookups on simdjson's DOM. The DOM (not On-Demand) parser is used on purpose: it
// validates the whole record, so "malformed" means the same thing here as in the Python fallback
// (json.loads), whichever field is asked for.
#include "luminamoon/data/readers/json_field.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"

namespace luminamoon::data {

static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING, "kJsonPadding must match simdjson");

namespace {

namespace dom = simdjson::dom;

// Capacity a fresh parser starts with, and the capacity it keeps between records; a larger
// record grows it and shrink_to() gives the memory back.
constexpr std::size_t kInitialCapacity = 64 * 1024;
constexpr std::size_t kMaxKeysListed = 10;

std::size_t code_point_count(std::string_view s) {
  // Valid UTF-8 (simdjson validated it): count the bytes that are not continuation bytes.
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u; }));
}

// Offset of the first byte that does not start a valid UTF-8 sequence (RFC 3629), or size.
std::size_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char b = p[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if ((p[i + k] & 0xC0u) != 0x80u) return i;
    }
    i += len;
  }
  return n;
}

// "a number", "an object", "null": the JSON type of `e` with its article.
std::string_view type_phrase(const dom::element& e) {
  switch (e.type()) {
    case dom::element_type::OBJECT:
      return "an object";
    case dom::element_type::ARRAY:
      return "an array";
    case dom::element_type::STRING:
      return "a string";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
      return "a number";
    case dom::element_type::BOOL:
      return "a boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
  }
  return "a value";
}

std::string in_quotes(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

// "the record" at the root, "'meta'" for the object reached by the segments before i.
std::string where(const FieldPath& path, std::size_t i) {
  return i == 0 ? std::string("the record") : in_quotes(path.prefix(i));
}

std::string not_found(const FieldPath& path) {
  return "field " + in_quotes(path.dotted()) + " not found; ";
}

// The message for a key missing from `object` (segment i of `path`).
std::string missing_key_message(const FieldPath& path, std::size_t i, dom::object object) {
  std::vector<std::string_view> keys;
  for (dom::key_value_pair member : object) {
    if (std::find(keys.begin(), keys.end(), member.key) == keys.end()) keys.push_back(member.key);
  }
  const std::string& name = path.segment(i);
  if (keys.empty()) return not_found(path) + where(path, i) + " is an empty object";
  // did_you_mean never accepts a distance above max(2, n / 3), and the distance is at least the
  // length difference: skipping far-off lengths first keeps a record with huge keys cheap.
  const std::size_t n = code_point_count(name);
  const std::size_t limit = std::max<std::size_t>(2, n / 3);
  std::vector<std::string_view> close;
  for (std::string_view key : keys) {
    const std::size_t m = code_point_count(key);
    if ((m > n ? m - n : n - m) <= limit) close.push_back(key);
  }
  if (const auto best = did_you_mean(name, close)) {
    std::string suggestion(path.prefix(i));
    if (i > 0) suggestion += '.';
    suggestion += *best;
    return not_found(path) + "did you mean " + in_quotes(suggestion) + "?";
  }
  std::string message = not_found(path) + where(path, i) + " has keys ";
  for (std::size_t k = 0; k < std::min(keys.size(), kMaxKeysListed); ++k) {
    if (k > 0) message += ", ";
    message += in_quotes(keys[k]);
  }
  if (keys.size() > kMaxKeysListed) {
    message += " and " + std::to_string(keys.size() - kMaxKeysListed) + " more";
  }
  return message;
}

// Follows `path` from `root`. kFound: `out` is the value. Otherwise `message` says why.
LookupStatus follow(dom::element root, const FieldPath& path, dom::element& out,
                    std::string& message) {
  dom::element current = root;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const dom::element_type type = current.type();
    if (type == dom::element_type::OBJECT) {
      const dom::object object = current.get_object().value_unsafe();
      bool found = false;
      for (dom::key_value_pair member : object) {
        if (member.key == path.segment(i)) {  // first occurrence wins for duplicate keys
          current = member.value;
          found = true;
          break;
        }
      }
      if (!found) {
        message = missing_key_message(path, i, object);
        return LookupStatus::kMissing;
      }
    } else if (type == dom::element_type::ARRAY) {
      const dom::array array = current.get_array().value_unsafe();
      const std::optional<std::uint64_t> index = path.index(i);
      if (!index) {
        message = not_found(path) + where(path, i) + " is an array (index it with a number)";
        return LookupStatus::kMissing;
      }
      std::uint64_t count = 0;
      bool found = false;
      for (dom::element element : array) {
        if (count == *index) {
          current = element;
          found = true;
          break;
        }
        ++count;
      }
      if (!found) {
        message = not_found(path) + where(path, i) + " has " + std::to_string(count) +
                  (count == 1 ? " element" : " elements");
        return LookupStatus::kMissing;
      }
    } else {
      message = not_found(path) + where(path, i) + " is " + std::string(type_phrase(current)) +
                ", not an object";
      return LookupStatus::kMissing;
    }
  }
  out = current;
  return LookupStatus::kFound;
}

std::string malformed_message(simdjson::error_code code, std::string_view record) {
  if (code == simdjson::UTF8_ERROR) {
    return "malformed JSON: invalid UTF-8 at byte " + std::to_string(first_invalid_utf8(record));
  }
  if (code == simdjson::EMPTY) return "malformed JSON: no value (the record is empty)";
  if (code == simdjson::DEPTH_ERROR) {
    return "malformed JSON: nested deeper than " + std::to_string(kJsonMaxDepth) + " levels";
  }
  return std::string("malformed JSON: ") + simdjson::error_message(code);
}

}  // namespace

FieldPath::FieldPath(std::string_view dotted) : dotted_(dotted) {
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = dotted.find('.', begin);
    const std::size_t end = dot == std::string_view::npos ? dotted.size() : dot;
    if (end == begin) {
      throw InvalidArgument("invalid field path " + in_quotes(dotted) +
                            ": empty segment (write dotted keys like 'meta.body' or "
                            "'messages.0.content')");
    }
    const std::string_view segment = dotted.substr(begin, end - begin);
    std::optional<std::uint64_t> index;
    if (std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      std::uint64_t value = 0;
      const auto [ptr, ec] =
          std::from_chars(segment.data(), segment.data() + segment.size(), value);
      if (ec == std::errc() && ptr == segment.data() + segment.size()) index = value;
    }
    segments_.emplace_back(segment);
    indexes_.push_back(index);
    segment_ends_.push_back(end);
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
}

std::string_view FieldPath::prefix(std::size_t i) const {
  if (i == 0) return {};
  return std::string_view(dotted_).substr(0, segment_ends_[i - 1]);
}

struct JsonRecordParser::Impl {
  dom::parser parser;
  dom::element root;

  Impl() { reset(); }
  void reset() {
    parser = dom::parser();
    // max_depth is kept by later capacity bumps (ensure_capacity passes max_depth() on).
    if (parser.allocate(kInitialCapacity, kJsonMaxDepth) != simdjson::SUCCESS)
      throw std::bad_alloc();
  }
};

JsonRecordParser::JsonRecordParser() : impl_(std::make_unique<Impl>()) {}
JsonRecordParser::~JsonRecordParser() = default;
JsonRecordParser::JsonRecordParser(JsonRecordParser&&) noexcept = default;
JsonRecordParser& JsonRecordParser::operator=(JsonRecordParser&&) noexcept = default;

bool JsonRecordParser::parse(std::string_view record, bool padded) {
  // An empty view may carry a null pointer, which simdjson would hand to memcpy.
  static constexpr char kEmpty[kJsonPadding] = {};
  const char* data = record.data() != nullptr ? record.data() : kEmpty;
  auto result = impl_->parser.parse(data, record.size(), !padded && data != kEmpty);
  if (result.error() != simdjson::SUCCESS) {
    error_ = malformed_message(result.error(), record);
    return false;
  }
  impl_->root = result.value_unsafe();
  error_.clear();
  return true;
}

LookupStatus JsonRecordParser::find_string(const FieldPath& path, std::string_view& out,
                                           std::string& message) const {
  dom::element value;
  const LookupStatus status = follow(impl_->root, path, value, message);
  if (status != LookupStatus::kFound) return status;
  if (value.type() != dom::element_type::STRING) {
    message = "field " + in_quotes(path.dotted()) + " is " + std::string(type_phrase(value)) +
              ", not a string";
    return LookupStatus::kWrongType;
  }
  out = value.get_string().value_unsafe();
  return LookupStatus::kFound;
}

LookupStatus JsonRecordParser::find_scalar(const FieldPath& path, JsonScalar& out,
                                           std::string& message) const {
  dom::element value;
  const LookupStatus status = follow(impl_->root, path, value, message);
  if (status != LookupStatus::kFound) return status;
  out = JsonScalar{};
  switch (value.type()) {
    case dom::element_type::OBJECT:
    case dom::element_type::ARRAY:
      message = "field " + in_quotes(path.dotted()) + " is " + std::string(type_phrase(value)) +
                ", not a string, number, boolean or null";
      return LookupStatus::kWrongType;
    case dom::element_type::STRING:
      out.kind = JsonScalar::Kind::kString;
      out.string = value.get_string().value_unsafe();
      break;
    case dom::element_type::INT64:
      out.kind = JsonScalar::Kind::kInt64;
      out.int64 = value.get_int64().value_unsafe();
      break;
    case dom::element_type::UINT64:
      out.kind = JsonScalar::Kind::kUint64;
      out.uint64 = value.get_uint64().value_unsafe();
      break;
    case dom::element_type::DOUBLE:
      out.kind = JsonScalar::Kind::kDouble;
      out.number = value.get_double().value_unsafe();
      break;
    case dom::element_type::BOOL:
      out.kind = JsonScalar::Kind::kBool;
      out.boolean = value.get_bool().value_unsafe();
      break;
    case dom::element_type::NULL_VALUE:
      out.kind = JsonScalar::Kind::kNull;
      break;
  }
  return LookupStatus::kFound;
}

void JsonRecordParser::shrink_to(std::size_t keep_bytes) {
  if (impl_->parser.capacity() > std::max(keep_bytes, kInitialCapacity)) impl_->reset();
}

std::string extract_field(std::string_view record, std::string_view path) {
  const FieldPath field(path);
  // A parser allocates ~1 MB of buffers: one per thread keeps a loop of one-shot calls cheap.
  thread_local JsonRecordParser parser;
  if (!parser.parse(record, /*padded=*/false)) {
    parser.shrink_to(0);
    throw MalformedInputError(parser.error());
  }
  std::string_view value;
  std::string message;
  const LookupStatus status = parser.find_string(field, value, message);
  std::string result = status == LookupStatus::kFound ? std::string(value) : std::string();
  parser.shrink_to(0);
  if (status != LookupStatus::kFound) throw MalformedInputError(message);
  return result;
}

}  // namespace luminamoon::data
