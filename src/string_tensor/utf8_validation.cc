// UTF-8 validation of StringTensor contents on the common dispatched validator.
#include "string_tensor/internal/utf8_validation.h"

#include <string>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data::string_tensor_internal {

using utf8_internal::valid_prefix;

void throw_invalid_utf8(std::size_t index, std::string_view bytes) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t at = valid_prefix(p, bytes.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string what = "element " + std::to_string(index) + " is not valid UTF-8 (";
  if (at < bytes.size()) {
    const std::uint8_t b = p[at];
    what += "byte 0x";
    what += kHex[b >> 4];
    what += kHex[b & 15];
    what += " at offset " + std::to_string(at) + " of " + std::to_string(bytes.size()) + ")";
  } else {
    what += "truncated sequence at the end of its " + std::to_string(bytes.size()) + " bytes)";
  }
  throw InvalidArgument(what +
                        "; decode it with errors='replace' first, or repair it with TextCleaner");
}

void validate_contiguous_utf8(const ContiguousStrings& strings, std::size_t base_index) {
  const std::size_t n = strings.size;
  if (n == 0) return;
  const std::uint64_t begin = strings.offset(0);
  const std::uint64_t end = strings.offset(n);
  const std::uint8_t* payload = strings.payload.data();
  bool ok = valid_prefix(payload + begin, end - begin) == end - begin;
  if (ok) {
    // Valid as a whole: each string is valid iff none starts inside a sequence (10xxxxxx).
    std::uint64_t start = begin;
    for (std::size_t i = 0; i < n && ok; ++i) {
      const std::uint64_t next = strings.offset(i + 1);
      if (next != start && (payload[start] & 0xC0) == 0x80) ok = false;
      start = next;
    }
  }
  if (ok) return;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view s = strings.at(i);
    if (!is_valid_utf8(s)) throw_invalid_utf8(base_index + i, s);
  }
}

}  // namespace luminamoon::data::string_tensor_internal
