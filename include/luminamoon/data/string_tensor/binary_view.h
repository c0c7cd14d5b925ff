// BinaryView: one 16-byte element of Arrow's utf8_view / binary_view layout ("German strings"),
// the CPU layout of a StringTensor. Byte for byte what Arrow specifies (little-endian hosts):
//
//   length <= 12:  [u32 length][12 bytes: the string, zero-padded]
//   length  > 12:  [u32 length][4-byte prefix][u32 buffer index][u32 offset into that buffer]
//
// Arrow declares length, buffer index and offset as int32; values here never exceed INT32_MAX.
// Because inline strings are zero-padded, the first 8 bytes (length + first four bytes) decide
// most comparisons and, for strings of at most 12 bytes, all 16 bytes are the whole value.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace luminamoon::data {

struct BinaryView {
  static constexpr std::uint32_t kInlineCapacity = 12;
  static constexpr std::uint32_t kPrefixSize = 4;
  // Arrow's int32 limit on one string's length, a buffer index and an offset.
  static constexpr std::uint32_t kMaxLength = 0x7FFF'FFFF;

  std::uint32_t length;
  // Inline: the bytes, zero-padded. Otherwise: prefix[4], buffer index (u32), offset (u32).
  std::array<std::uint8_t, 12> bytes;

  bool is_inline() const noexcept { return length <= kInlineCapacity; }
  std::uint32_t buffer_index() const noexcept { return load_u32(4); }
  std::uint32_t offset() const noexcept { return load_u32(8); }

  // A view of `size` (<= 12) bytes stored inline.
  static BinaryView make_inline(const std::uint8_t* data, std::uint32_t size) noexcept {
    BinaryView v{size, {}};
    if (size != 0) std::memcpy(v.bytes.data(), data, size);
    return v;
  }
  // A view of `size` (> 12) bytes that live at data buffer `buffer_index`, byte `offset`;
  // `data` points at those bytes (the prefix is copied from it).
  static BinaryView make_reference(const std::uint8_t* data, std::uint32_t size,
                                   std::uint32_t buffer_index, std::uint32_t offset) noexcept {
    BinaryView v{size, {}};
    std::memcpy(v.bytes.data(), data, kPrefixSize);
    std::memcpy(v.bytes.data() + 4, &buffer_index, 4);
    std::memcpy(v.bytes.data() + 8, &offset, 4);
    return v;
  }

  // Length and the first four bytes as one word: two views whose words differ hold different
  // strings, whatever their layout.
  std::uint64_t length_and_prefix() const noexcept {
    std::uint64_t word;
    std::memcpy(&word, this, 8);
    return word;
  }
  // Bytes 8..16: the rest of an inline string (zero-padded), or buffer index + offset.
  std::uint64_t tail_word() const noexcept {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + 4, 8);
    return word;
  }

 private:
  std::uint32_t load_u32(std::size_t at) const noexcept {
    std::uint32_t value;
    std::memcpy(&value, bytes.data() + at, 4);
    return value;
  }
};

static_assert(sizeof(BinaryView) == 16, "Arrow's view element is 16 bytes");
static_assert(std::is_trivially_copyable_v<BinaryView>);
static_assert(std::is_standard_layout_v<BinaryView>);

}  // namespace luminamoon::data
