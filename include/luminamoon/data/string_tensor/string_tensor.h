// StringTensor (SPEC 4, stage 5): an immutable column of UTF-8 strings in two layouts.
//
//  * CPU layout, always present: 16-byte BinaryViews (Arrow utf8_view) over one or more shared
//    data buffers. Exported to Arrow/Polars as utf8_view without copying.
//  * Contiguous (GPU/Arrow utf8) layout: n+1 offsets (u32, or u64 once the payload passes
//    4 GiB - 1) into one UTF-8 payload. Kept, and exported without copying, when the tensor was
//    built from contiguous bytes (from_strings, from_contiguous, an Arrow utf8/large_utf8
//    import, slices of those); otherwise contiguous() builds it (one pass, one copy).
//
// Built from strings, the payload holds every string back to back and the views of strings
// longer than 12 bytes point into it (buffer 0, offset = the string's offset), exactly like
// pyarrow's zero-copy cast from utf8 to utf8_view. Past 2 GiB (Arrow's int32 view offsets) the
// payload is split into consecutive data buffers, each starting at a string boundary.
//
// Contract notes:
//  * immutable after construction: every method is const and thread-safe;
//  * no nulls: importers raise InvalidArgument naming the first null element;
//  * every string is valid UTF-8 (checked on construction, error naming the element) and at
//    most 2^31 - 1 bytes long (Arrow's limit for one view);
//  * slice() shares views, buffers and offsets; take(), filter() and concat() copy 16-byte views
//    only, never string bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "luminamoon/data/string_tensor/binary_view.h"
#include "luminamoon/data/string_tensor/shared_bytes.h"

namespace luminamoon::data {

enum class OffsetWidth : std::uint8_t { k32 = 4, k64 = 8 };

// The contiguous layout: string i is payload[offset(i), offset(i + 1)). Offsets are unsigned,
// `width` bytes each, in the host's byte order as in Arrow (little-endian on every supported
// host), and need not start at 0 (Arrow allows that for slices); contiguous() always returns
// offsets starting at 0 and a payload of exactly offset(size) bytes.
struct ContiguousStrings {
  OffsetWidth width = OffsetWidth::k32;
  std::size_t size = 0;  // number of strings; `offsets` holds size + 1 entries
  SharedBytes offsets;
  SharedBytes payload;

  // Loads go through memcpy: offsets from a producer need not be aligned.
  std::uint64_t offset(std::size_t i) const noexcept {
    if (width == OffsetWidth::k32) {
      std::uint32_t v;
      std::memcpy(&v, offsets.data() + 4 * i, 4);
      return v;
    }
    std::uint64_t v;
    std::memcpy(&v, offsets.data() + 8 * i, 8);
    return v;
  }
  std::string_view at(std::size_t i) const noexcept {
    const std::uint64_t begin = offset(i);
    return {reinterpret_cast<const char*>(payload.data() + begin),
            static_cast<std::size_t>(offset(i + 1) - begin)};
  }
};

// The largest payload that u32 offsets address.
inline constexpr std::uint64_t kMaxPayloadForU32Offsets = 0xFFFF'FFFFull;
// The largest data buffer a view can address (int32 offset + length).
inline constexpr std::uint64_t kMaxViewBufferBytes = BinaryView::kMaxLength;

class StringTensor {
 public:
  // No strings, no buffers.
  StringTensor() = default;

  // Whether construction checks UTF-8. kTrusted is for bytes that are valid by construction
  // (CPython's UTF-8 of a str, the TextCleaner's output); anything else must be validated.
  enum class Utf8 { kValidate, kTrusted };

  // Copies the bytes into one new payload (both layouts).
  static StringTensor from_strings(std::span<const std::string_view> strings,
                                   Utf8 utf8 = Utf8::kValidate);
  // Zero-copy: keeps `strings` as the contiguous layout and points the views into its payload.
  // Validates offsets (monotonic, inside the payload), lengths and UTF-8. Errors name elements
  // counting from `base_index` (an importer's position in a longer input).
  static StringTensor from_contiguous(ContiguousStrings strings, std::size_t base_index = 0);
  // Zero-copy over `size` Arrow views and their data buffers. Validates every view (buffer
  // index, bounds, prefix, UTF-8). Views are copied only when they must be repaired: inline
  // bytes not zero-padded, or a views pointer not aligned to 4 bytes.
  static StringTensor from_views(SharedBytes views, std::size_t size,
                                 std::vector<SharedBytes> buffers, std::size_t base_index = 0);
  // NumPy fixed-width text: `width` UTF-32 code units per element ('U' dtype, native order),
  // trailing U+0000 stripped as NumPy does; surrogates and code points > U+10FFFF are errors.
  static StringTensor from_utf32(std::span<const std::uint32_t> code_units, std::size_t width);
  // NumPy fixed-width bytes ('S' dtype): `width` bytes per element, trailing NULs stripped.
  static StringTensor from_fixed_width(std::span<const std::uint8_t> bytes, std::size_t width);
  // Empty parts are skipped; one non-empty part is returned as is (both layouts kept); more
  // are joined by copying their views (buffer indices renumbered), sharing every data buffer.
  static StringTensor concat(std::span<const StringTensor> parts);

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // Element i (unchecked); inline strings are read from the view itself.
  std::string_view operator[](std::size_t i) const noexcept;
  // Element i; throws std::out_of_range.
  std::string_view at(std::size_t i) const;

  std::span<const BinaryView> views() const noexcept { return {views_, size_}; }
  const std::vector<SharedBytes>& data_buffers() const noexcept;
  // What keeps views() alive (for zero-copy exports of the view buffer).
  const std::shared_ptr<const void>& views_owner() const noexcept { return views_owner_; }

  // Elements [start, start + length), sharing all memory. Throws std::out_of_range.
  StringTensor slice(std::size_t start, std::size_t length) const;
  // Elements at `indices` (each < size(), else std::out_of_range naming its position).
  StringTensor take(std::span<const std::uint64_t> indices) const;
  // Elements whose mask byte is non-zero; mask.size() must equal size() (else InvalidArgument).
  StringTensor filter(std::span<const std::uint8_t> mask) const;

  // Same strings in the same order. Compares length + prefix as one word first; inline strings
  // never touch the data buffers.
  bool equals(const StringTensor& other) const noexcept;
  // XXH3-64 of element i's bytes (the engine's document hash, equal to xxh3_64(at(i))).
  std::uint64_t hash_at(std::size_t i) const noexcept;

  // Sum of the string lengths: the size of the contiguous payload.
  std::uint64_t payload_size() const noexcept;
  // Bytes this tensor references: 16 per view, every data buffer in full (shared with slices),
  // and the kept offsets.
  std::size_t nbytes() const noexcept;

  // Whether the contiguous layout is kept (contiguous() then copies nothing but, for slices
  // and width changes, the offsets).
  bool has_contiguous() const noexcept { return contiguous_.has_value(); }
  // The kept contiguous layout as stored (offsets may start above 0), for zero-copy exports.
  const std::optional<ContiguousStrings>& kept_contiguous() const noexcept { return contiguous_; }
  // u32 offsets when payload_size() <= 4 GiB - 1, else u64.
  OffsetWidth natural_width() const noexcept;
  // The contiguous layout with offsets starting at 0; `width` defaults to natural_width().
  // Throws InvalidArgument when the payload does not fit u32 offsets and k32 is asked for.
  ContiguousStrings contiguous() const;
  ContiguousStrings contiguous(OffsetWidth width) const;
  // A copy holding exactly these strings, with both layouts.
  StringTensor compact() const;

 private:
  friend class StringTensorBuilder;
  static StringTensor from_valid_contiguous(ContiguousStrings strings);

  std::shared_ptr<const void> views_owner_;
  const BinaryView* views_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<const std::vector<SharedBytes>> buffers_;
  std::optional<ContiguousStrings> contiguous_;
};

// Builds a StringTensor from strings appended one by one (the native stages' output path: no
// Python objects in between). The bytes are copied once, into the future payload.
class StringTensorBuilder {
 public:
  void reserve(std::size_t strings, std::size_t bytes);
  void append(std::string_view bytes);
  std::size_t size() const noexcept { return ends_.size(); }
  // Validates UTF-8 (InvalidArgument naming the first bad element) and resets the builder.
  StringTensor finish();

 private:
  std::vector<std::uint8_t> payload_;
  std::vector<std::uint64_t> ends_;
};

}  // namespace luminamoon::data
