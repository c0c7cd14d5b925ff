// Fuzz target: JSONL field extraction (extract_field and JsonRecordParser). Input: a dotted path,
// a newline, then the record bytes (no newline: the whole input is the record, path "text").
// Any input must give a string, MalformedInputError or (for a bad path) InvalidArgument, and the
// padded and unpadded parses must agree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/readers/json_field.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view path = "text";
  std::string_view record = input;
  if (const std::size_t nl = input.find('\n'); nl != std::string_view::npos && nl <= 64) {
    path = input.substr(0, nl);
    record = input.substr(nl + 1);
  }
  std::string value;
  bool ok = false;
  try {
    value = extract_field(record, path);
    ok = true;
  } catch (const MalformedInputError&) {
  } catch (const InvalidArgument&) {
    return 0;  // the path is not a dotted path
  }
  // The reader's path: the record in a buffer with kJsonPadding readable bytes after it.
  std::string padded(record);
  padded.append(kJsonPadding, '\0');
  JsonRecordParser parser;
  const bool parsed = parser.parse(std::string_view(padded.data(), record.size()), true);
  std::string_view text;
  std::string message;
  const bool found =
      parsed && parser.find_string(FieldPath(path), text, message) == LookupStatus::kFound;
  if (found != ok || (ok && text != value)) std::abort();
  if (parsed) {
    JsonScalar scalar;
    (void)parser.find_scalar(FieldPath(path), scalar, message);
  }
  return 0;
}
