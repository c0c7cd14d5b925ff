#include "luminamoon/data/arrow/string_array.h"

#include <gtest/gtest.h>

#include <cstring>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

ArrowSchema schema_of(const char* format) {
  ArrowSchema s{};
  s.format = format;
  return s;
}

TEST(StringArray, Utf8OffsetsWithArrayOffset) {
  const std::int32_t offsets[] = {0, 1, 3, 3, 6};
  const char data[] = "abbccc";
  const void* buffers[] = {nullptr, offsets, data};
  ArrowArray a{};
  a.length = 3;
  a.offset = 1;
  a.n_buffers = 3;
  a.buffers = buffers;
  std::vector<std::string_view> out;
  append_string_views(schema_of("u"), a, 0, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "bb");
  EXPECT_EQ(out[1], "");
  EXPECT_EQ(out[2], "ccc");
}

TEST(StringArray, NullIsReportedWithItsGlobalIndex) {
  const std::int64_t offsets[] = {0, 1, 2};
  const char data[] = "ab";
  const std::uint8_t validity[] = {0b01};
  const void* buffers[] = {validity, offsets, data};
  ArrowArray a{};
  a.length = 2;
  a.null_count = 1;
  a.n_buffers = 3;
  a.buffers = buffers;
  std::vector<std::string_view> out;
  try {
    append_string_views(schema_of("U"), a, 10, out);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 11 is null"), std::string::npos);
  }
}

TEST(StringArray, ViewsInlineAndOutOfLine) {
  const char long_text[] = "a string longer than twelve";
  std::uint8_t views[32] = {};
  const std::int32_t short_len = 5;
  std::memcpy(views, &short_len, 4);
  std::memcpy(views + 4, "hello", 5);
  const auto long_len = static_cast<std::int32_t>(std::strlen(long_text));
  const std::int32_t buffer_index = 0;
  const std::int32_t offset = 0;
  std::memcpy(views + 16, &long_len, 4);
  std::memcpy(views + 20, long_text, 4);
  std::memcpy(views + 24, &buffer_index, 4);
  std::memcpy(views + 28, &offset, 4);
  const std::int64_t sizes[] = {long_len};
  const void* buffers[] = {nullptr, views, long_text, sizes};
  ArrowArray a{};
  a.length = 2;
  a.n_buffers = 4;
  a.buffers = buffers;
  std::vector<std::string_view> out;
  append_string_views(schema_of("vu"), a, 0, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "hello");
  EXPECT_EQ(out[1], long_text);
}

TEST(StringArray, UnsupportedFormatIsATypeError) {
  ArrowArray a{};
  std::vector<std::string_view> out;
  EXPECT_THROW(append_string_views(schema_of("i"), a, 0, out), InvalidType);
  EXPECT_FALSE(is_string_format("i"));
  EXPECT_TRUE(is_string_format("vz"));
}

}  // namespace
}  // namespace luminamoon::data
