// BinaryView: the exact Arrow utf8_view bytes, the 12/13-byte boundary, and the payload cut into
// data buffers at the int32 limit (build_views with a small limit).
#include "luminamoon/data/string_tensor/binary_view.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

#include "string_tensor/internal/view_builder.h"

namespace luminamoon::data {
namespace {

std::array<std::uint8_t, 16> bytes_of(const BinaryView& v) {
  std::array<std::uint8_t, 16> out;
  std::memcpy(out.data(), &v, 16);
  return out;
}

const std::uint8_t* u8(const char* s) { return reinterpret_cast<const std::uint8_t*>(s); }

TEST(BinaryView, InlineIsLengthThenZeroPaddedBytes) {
  const BinaryView v = BinaryView::make_inline(u8("hello"), 5);
  EXPECT_TRUE(v.is_inline());
  const std::array<std::uint8_t, 16> expected = {5,   0, 0, 0, 'h', 'e', 'l', 'l',
                                                 'o', 0, 0, 0, 0,   0,   0,   0};
  EXPECT_EQ(bytes_of(v), expected);
}

TEST(BinaryView, TwelveBytesAreInlineThirteenAreNot) {
  const char* s = "abcdefghijklm";
  const BinaryView twelve = BinaryView::make_inline(u8(s), 12);
  EXPECT_TRUE(twelve.is_inline());
  EXPECT_EQ(std::memcmp(twelve.bytes.data(), s, 12), 0);

  const BinaryView thirteen = BinaryView::make_reference(u8(s), 13, 2, 0x01020304);
  EXPECT_FALSE(thirteen.is_inline());
  const std::array<std::uint8_t, 16> expected = {13, 0, 0, 0, 'a', 'b', 'c', 'd',
                                                 2,  0, 0, 0, 4,   3,   2,   1};
  EXPECT_EQ(bytes_of(thirteen), expected);
  EXPECT_EQ(thirteen.buffer_index(), 2u);
  EXPECT_EQ(thirteen.offset(), 0x01020304u);
}

TEST(BinaryView, EmptyStringIsAllZero) {
  const BinaryView v = BinaryView::make_inline(nullptr, 0);
  EXPECT_EQ(bytes_of(v), (std::array<std::uint8_t, 16>{}));
}

TEST(BinaryView, LengthAndPrefixWordSeparatesLengthsAndPrefixes) {
  const BinaryView a = BinaryView::make_inline(u8("abcd"), 4);
  const BinaryView b = BinaryView::make_inline(u8("abce"), 4);
  const BinaryView c = BinaryView::make_inline(u8("abcd!"), 5);
  EXPECT_NE(a.length_and_prefix(), b.length_and_prefix());
  EXPECT_NE(a.length_and_prefix(), c.length_and_prefix());
  const BinaryView d = BinaryView::make_inline(u8("abcd"), 4);
  EXPECT_EQ(a.length_and_prefix(), d.length_and_prefix());
  EXPECT_EQ(a.tail_word(), d.tail_word());
}

ContiguousStrings contiguous_of(const std::vector<std::string>& strings) {
  std::string payload;
  std::vector<std::uint32_t> offsets{0};
  for (const auto& s : strings) {
    payload += s;
    offsets.push_back(static_cast<std::uint32_t>(payload.size()));
  }
  ContiguousStrings c;
  c.width = OffsetWidth::k32;
  c.size = strings.size();
  c.offsets = SharedBytes::copy_of(
      {reinterpret_cast<const std::uint8_t*>(offsets.data()), offsets.size() * 4});
  c.payload = SharedBytes::copy_of({u8(payload.data()), payload.size()});
  return c;
}

TEST(BuildViews, OneBufferBelowTheLimitWithOffsetsEqualToTheStringOffsets) {
  const ContiguousStrings c =
      contiguous_of({"short", "a string of 21 bytes.", "", "x", "13 bytes long"});
  const auto vb = string_tensor_internal::build_views(c);
  ASSERT_EQ(vb.buffers.size(), 1u);
  EXPECT_EQ(vb.buffers[0].data(), c.payload.data());
  EXPECT_EQ(vb.buffers[0].size(), c.payload.size());
  const auto* views = reinterpret_cast<const BinaryView*>(vb.views.data());
  EXPECT_TRUE(views[0].is_inline());
  EXPECT_EQ(views[1].length, 21u);
  EXPECT_EQ(views[1].buffer_index(), 0u);
  EXPECT_EQ(views[1].offset(), 5u);
  EXPECT_EQ(views[4].length, 13u);
  EXPECT_EQ(views[4].offset(), 27u);
  EXPECT_EQ(std::memcmp(views[4].bytes.data(), "13 b", 4), 0);
}

TEST(BuildViews, PayloadIsCutAtStringBoundariesPastTheLimit) {
  // Limit 40. Payload: a [0, 20), b [20, 40), "tiny" [40, 44), c [44, 64), d [64, 94).
  // b ends 40 bytes past buffer 0's start (fits); c would end at 64 > 40: buffer 1 starts at 44;
  // d would end 50 past 44: buffer 2 starts at 64. Short strings never start a buffer.
  const std::string a(20, 'a'), b(20, 'b'), c(20, 'c'), d(30, 'd');
  const ContiguousStrings cs = contiguous_of({a, b, "tiny", c, d});
  const auto vb = string_tensor_internal::build_views(cs, 40);
  const auto* views = reinterpret_cast<const BinaryView*>(vb.views.data());
  ASSERT_EQ(vb.buffers.size(), 3u);
  EXPECT_EQ(views[0].buffer_index(), 0u);
  EXPECT_EQ(views[1].buffer_index(), 0u);
  EXPECT_EQ(views[1].offset(), 20u);
  EXPECT_EQ(views[3].buffer_index(), 1u);
  EXPECT_EQ(views[3].offset(), 0u);
  EXPECT_EQ(views[4].buffer_index(), 2u);
  EXPECT_EQ(views[4].offset(), 0u);
  EXPECT_EQ(vb.buffers[0].size(), 44u);
  EXPECT_EQ(vb.buffers[1].size(), 20u);
  EXPECT_EQ(vb.buffers[2].data(), cs.payload.data() + 64);
  EXPECT_EQ(vb.buffers[2].size(), 30u);
}

TEST(BuildViews, InlineViewsMatchAPlainCopyForEveryLength) {
  // Every length 0..13 at every alignment, including strings ending at the payload's end (where
  // fewer than 12 bytes can be read and the plain copy is used).
  std::vector<std::string> strings;
  for (std::uint32_t length = 0; length <= 13; ++length) {
    for (char c = 'a'; c < 'e'; ++c) strings.push_back(std::string(length, c) + "");
  }
  strings.push_back("xyz");
  const ContiguousStrings cs = contiguous_of(strings);
  const auto vb = string_tensor_internal::build_views(cs);
  const auto* views = reinterpret_cast<const BinaryView*>(vb.views.data());
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const auto length = static_cast<std::uint32_t>(strings[i].size());
    const BinaryView expected =
        length <= 12 ? BinaryView::make_inline(u8(strings[i].data()), length)
                     : BinaryView::make_reference(u8(strings[i].data()), length, 0,
                                                  static_cast<std::uint32_t>(cs.offset(i)));
    EXPECT_EQ(bytes_of(views[i]), bytes_of(expected)) << "string " << i;
  }
}

}  // namespace
}  // namespace luminamoon::data
