// StringTensor: construction and validation, both layouts and the conversions between them,
// slices (views), take/filter/concat (views gathered, bytes shared), equality and hashing.
#include "luminamoon/data/string_tensor/string_tensor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/xxh3.h"

namespace luminamoon::data {
namespace {

const std::vector<std::string> kSample = {
    "", "a", "twelve bytes", "thirteen byte", "héllo wörld, a longer one", "日本語テキスト", "x"};

StringTensor make(const std::vector<std::string>& strings) {
  std::vector<std::string_view> views(strings.begin(), strings.end());
  return StringTensor::from_strings(views);
}

std::vector<std::string> strings_of(const StringTensor& t) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < t.size(); ++i) out.emplace_back(t[i]);
  return out;
}

std::vector<std::uint64_t> offsets_of(const ContiguousStrings& c) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i <= c.size; ++i) out.push_back(c.offset(i));
  return out;
}

template <typename T>
SharedBytes bytes_of_vector(const std::vector<T>& v) {
  return SharedBytes::copy_of(
      {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)});
}

SharedBytes bytes_of_string(const std::string& s) {
  return SharedBytes::copy_of({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

ContiguousStrings contiguous(std::vector<std::uint32_t> offsets, const std::string& payload) {
  ContiguousStrings c;
  c.width = OffsetWidth::k32;
  c.size = offsets.size() - 1;
  c.offsets = bytes_of_vector(offsets);
  c.payload = bytes_of_string(payload);
  return c;
}

TEST(StringTensor, FromStringsKeepsBothLayouts) {
  const StringTensor t = make(kSample);
  EXPECT_EQ(strings_of(t), kSample);
  ASSERT_TRUE(t.has_contiguous());
  EXPECT_EQ(t.natural_width(), OffsetWidth::k32);
  const ContiguousStrings c = t.contiguous();
  std::string joined;
  std::vector<std::uint64_t> expected{0};
  for (const auto& s : kSample) {
    joined += s;
    expected.push_back(joined.size());
  }
  EXPECT_EQ(offsets_of(c), expected);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(c.payload.data()), c.payload.size()), joined);
  // Zero-copy: the contiguous layout is the kept one, and the one data buffer is its payload.
  EXPECT_EQ(c.payload.data(), t.kept_contiguous()->payload.data());
  ASSERT_EQ(t.data_buffers().size(), 1u);
  EXPECT_EQ(t.data_buffers()[0].data(), c.payload.data());
}

TEST(StringTensor, LayoutAtTheTwelveThirteenBoundary) {
  const StringTensor t = make({"abcdefghijkl", "abcdefghijklm"});
  const auto views = t.views();
  EXPECT_TRUE(views[0].is_inline());
  EXPECT_EQ(std::memcmp(views[0].bytes.data(), "abcdefghijkl", 12), 0);
  EXPECT_FALSE(views[1].is_inline());
  EXPECT_EQ(std::memcmp(views[1].bytes.data(), "abcd", 4), 0);
  EXPECT_EQ(views[1].buffer_index(), 0u);
  EXPECT_EQ(views[1].offset(), 12u);  // the payload holds every string, short ones too
  EXPECT_EQ(t[1], "abcdefghijklm");
}

TEST(StringTensor, InlineStringsAreReadFromTheView) {
  const StringTensor t = make({"short", "a string longer than twelve"});
  EXPECT_EQ(t[0].data(), reinterpret_cast<const char*>(t.views()[0].bytes.data()));
  EXPECT_EQ(t[1].data(), reinterpret_cast<const char*>(t.data_buffers()[0].data() + 5));
}

TEST(StringTensor, InvalidUtf8NamesTheElement) {
  const std::vector<std::string> bad = {"ok", "fine", "bad \xff byte", "also \xc3"};
  try {
    make(bad);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 2 is not valid UTF-8"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("0xff at offset 4"), std::string::npos) << e.what();
  }
  // A sequence split across two strings: the whole payload is valid, each half is not.
  try {
    make({"abc", "\xc3", "\xa9"});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make({"\xed\xa0\x80"}), InvalidArgument);  // surrogate
}

TEST(StringTensor, FromContiguousIsZeroCopyAndValidates) {
  const ContiguousStrings c = contiguous({0, 3, 3, 20},
                                         "abc"
                                         "seventeen bytes!!");
  const StringTensor t = StringTensor::from_contiguous(c);
  EXPECT_EQ(strings_of(t), (std::vector<std::string>{"abc", "", "seventeen bytes!!"}));
  EXPECT_EQ(t.data_buffers()[0].data(), c.payload.data());
  EXPECT_EQ(t.contiguous().offsets.data(), c.offsets.data());

  EXPECT_THROW(StringTensor::from_contiguous(contiguous({0, 4, 2}, "abcd")), InvalidArgument);
  EXPECT_THROW(StringTensor::from_contiguous(contiguous({0, 5}, "abcd")), InvalidArgument);
  EXPECT_THROW(StringTensor::from_contiguous(contiguous({9, 9}, "abcd")), InvalidArgument);
  ContiguousStrings short_offsets = contiguous({0, 1}, "a");
  short_offsets.size = 2;
  EXPECT_THROW(StringTensor::from_contiguous(short_offsets), InvalidArgument);
  EXPECT_THROW(StringTensor::from_contiguous(contiguous({0, 1, 2}, "a\x80")), InvalidArgument);
}

TEST(StringTensor, OffsetsMayStartAboveZero) {
  const StringTensor t =
      StringTensor::from_contiguous(contiguous({2, 4, 19}, "xxabthirteen bytes!"));
  EXPECT_EQ(strings_of(t), (std::vector<std::string>{"ab", "thirteen bytes!"}));
  // View offsets are relative to the payload start, as in pyarrow's utf8 -> utf8_view cast.
  EXPECT_EQ(t.views()[1].offset(), 4u);
  const ContiguousStrings c = t.contiguous();
  EXPECT_EQ(offsets_of(c), (std::vector<std::uint64_t>{0, 2, 17}));
  EXPECT_EQ(c.payload.data(), t.kept_contiguous()->payload.data() + 2);  // shared, not copied
}

TEST(StringTensor, WidthConversionsBothWays) {
  const StringTensor t = make(kSample);
  const ContiguousStrings wide = t.contiguous(OffsetWidth::k64);
  EXPECT_EQ(wide.width, OffsetWidth::k64);
  EXPECT_EQ(wide.offsets.size(), (kSample.size() + 1) * 8);
  EXPECT_EQ(offsets_of(wide), offsets_of(t.contiguous()));
  EXPECT_EQ(wide.payload.data(), t.contiguous().payload.data());  // payload shared

  const StringTensor back = StringTensor::from_contiguous(wide);
  EXPECT_TRUE(back.equals(t));
  EXPECT_EQ(back.kept_contiguous()->width, OffsetWidth::k64);
  EXPECT_EQ(back.natural_width(), OffsetWidth::k32);
  EXPECT_EQ(back.contiguous().width, OffsetWidth::k32);
}

TEST(StringTensor, ViewsOnlyTensorsBuildTheContiguousLayout) {
  const StringTensor t = make(kSample);
  const std::vector<std::uint64_t> reversed = {6, 5, 4, 3, 2, 1, 0};
  const StringTensor r = t.take(reversed);
  EXPECT_FALSE(r.has_contiguous());
  const ContiguousStrings c = r.contiguous();
  std::string joined;
  for (auto it = kSample.rbegin(); it != kSample.rend(); ++it) joined += *it;
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(c.payload.data()), c.payload.size()), joined);
  EXPECT_EQ(c.offset(c.size), joined.size());
  EXPECT_TRUE(StringTensor::from_contiguous(c).equals(r));
}

TEST(StringTensor, SliceSharesEverything) {
  const StringTensor t = make(kSample);
  const StringTensor s = t.slice(2, 3);
  EXPECT_EQ(strings_of(s), (std::vector<std::string>(kSample.begin() + 2, kSample.begin() + 5)));
  EXPECT_EQ(s.views().data(), t.views().data() + 2);
  EXPECT_EQ(s.data_buffers()[0].data(), t.data_buffers()[0].data());
  ASSERT_TRUE(s.has_contiguous());
  EXPECT_EQ(s.kept_contiguous()->offsets.data(), t.kept_contiguous()->offsets.data() + 8);
  const ContiguousStrings c = s.contiguous();
  EXPECT_EQ(c.offset(0), 0u);
  EXPECT_EQ(c.payload.data(), t.contiguous().payload.data() + 1);  // after "" and "a"
  EXPECT_TRUE(t.slice(0, 0).empty());
  EXPECT_TRUE(t.slice(7, 0).empty());
  EXPECT_THROW(t.slice(5, 3), std::out_of_range);
  EXPECT_THROW(t.slice(8, 0), std::out_of_range);
}

TEST(StringTensor, TakeAndFilterGatherViewsAndShareBytes) {
  const StringTensor t = make(kSample);
  const std::vector<std::uint64_t> idx = {4, 4, 0, 3};
  const StringTensor taken = t.take(idx);
  EXPECT_EQ(strings_of(taken), (std::vector<std::string>{kSample[4], kSample[4], "", kSample[3]}));
  EXPECT_EQ(taken[0].data(), t[4].data());  // same bytes, not a copy
  EXPECT_EQ(&taken.data_buffers(), &t.data_buffers());
  const std::vector<std::uint64_t> bad = {0, 7};
  try {
    (void)t.take(bad);
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("indices[1] = 7"), std::string::npos);
  }

  const std::vector<std::uint8_t> mask = {1, 0, 0, 1, 2, 0, 1};
  const StringTensor kept = t.filter(mask);
  EXPECT_EQ(strings_of(kept), (std::vector<std::string>{"", kSample[3], kSample[4], "x"}));
  EXPECT_EQ(kept[2].data(), t[4].data());
  const std::vector<std::uint8_t> short_mask = {1};
  EXPECT_THROW((void)t.filter(short_mask), InvalidArgument);
}

TEST(StringTensor, ConcatRenumbersBuffersAndSkipsEmptyParts) {
  const StringTensor a = make({"first long string here", "s"});
  const StringTensor b = make({"second long string here"});
  const StringTensor empty = make({});
  const std::vector<StringTensor> parts = {a, empty, b};
  const StringTensor c = StringTensor::concat(parts);
  EXPECT_EQ(strings_of(c),
            (std::vector<std::string>{"first long string here", "s", "second long string here"}));
  ASSERT_EQ(c.data_buffers().size(), 2u);
  EXPECT_EQ(c.views()[2].buffer_index(), 1u);
  EXPECT_EQ(c.data_buffers()[1].data(), b.data_buffers()[0].data());
  EXPECT_FALSE(c.has_contiguous());

  const std::vector<StringTensor> one = {empty, a, empty};
  const StringTensor same = StringTensor::concat(one);
  EXPECT_EQ(same.views().data(), a.views().data());  // returned as is
  EXPECT_TRUE(same.has_contiguous());
  EXPECT_TRUE(StringTensor::concat({}).empty());
}

TEST(StringTensor, EqualityUsesContentNotLayout) {
  const StringTensor a = make(kSample);
  const std::vector<std::uint64_t> all = {0, 1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(a.equals(a.take(all)));
  EXPECT_TRUE(a.equals(a.compact()));
  EXPECT_TRUE(a.equals(make(kSample)));
  std::vector<std::string> changed = kSample;
  changed[4].back() = '!';  // same length and prefix: decided by the bytes after the prefix
  EXPECT_FALSE(a.equals(make(changed)));
  changed = kSample;
  changed[2] = "twelve bytez";  // inline: decided by the tail word
  EXPECT_FALSE(a.equals(make(changed)));
  EXPECT_FALSE(a.equals(a.slice(0, 6)));
  EXPECT_TRUE(StringTensor().equals(make({})));
}

TEST(StringTensor, HashIsXxh3OfTheBytes) {
  const StringTensor t = make(kSample);
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.hash_at(i), xxh3_64(kSample[i]));
}

TEST(StringTensor, NbytesCountsViewsBuffersAndKeptOffsets) {
  const StringTensor t = make({"a", "a string longer than twelve"});
  EXPECT_EQ(t.nbytes(), 2 * 16 + 28 + 3 * 4);
  const std::vector<std::uint64_t> idx = {1};
  EXPECT_EQ(t.take(idx).nbytes(), 16 + 28);
  EXPECT_EQ(t.payload_size(), 28u);
  EXPECT_EQ(t.take(idx).payload_size(), 27u);
}

TEST(StringTensor, CompactCopiesIntoOnePayload) {
  const StringTensor t = make(kSample);
  const StringTensor c = t.slice(3, 2).compact();
  EXPECT_EQ(strings_of(c), (std::vector<std::string>{kSample[3], kSample[4]}));
  EXPECT_NE(c.data_buffers()[0].data(), t.data_buffers()[0].data());
  EXPECT_EQ(c.data_buffers()[0].size(), kSample[3].size() + kSample[4].size());
  EXPECT_TRUE(c.has_contiguous());
}

TEST(StringTensor, FromUtf32StripsTrailingNulsAndEncodes) {
  // NumPy 'U3' holding "a", "é日", "" and "ab\0c" (interior NUL kept) as width-4 elements.
  const std::vector<std::uint32_t> units = {'a', 0, 0, 0, 0xE9, 0x65E5, 0, 0,
                                            0,   0, 0, 0, 'a',  'b',    0, 'c'};
  const StringTensor t = StringTensor::from_utf32(units, 4);
  EXPECT_EQ(strings_of(t), (std::vector<std::string>{"a", "é日", "", std::string("ab\0c", 4)}));
  const std::vector<std::uint32_t> surrogate = {0xD800};
  EXPECT_THROW(StringTensor::from_utf32(surrogate, 1), InvalidArgument);
  const std::vector<std::uint32_t> too_big = {0x110000};
  EXPECT_THROW(StringTensor::from_utf32(too_big, 1), InvalidArgument);
  EXPECT_THROW(StringTensor::from_utf32(units, 3), InvalidArgument);
  const std::vector<std::uint32_t> astral = {0x1F600};
  EXPECT_EQ(StringTensor::from_utf32(astral, 1)[0], "\xF0\x9F\x98\x80");
}

TEST(StringTensor, FromFixedWidthStripsTrailingNulsAndValidates) {
  const std::string bytes(
      "ab\0\0"
      "\xc3\xa9\0\0"
      "\0\0\0\0",
      12);
  const StringTensor t = StringTensor::from_fixed_width(
      {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, 4);
  EXPECT_EQ(strings_of(t), (std::vector<std::string>{"ab", "é", ""}));
  const std::string bad("\xff\0", 2);
  EXPECT_THROW(StringTensor::from_fixed_width(
                   {reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size()}, 2),
               InvalidArgument);
}

TEST(StringTensor, FromViewsValidatesAndRepairsPadding) {
  const StringTensor t = make({"hi", "a string longer than twelve"});
  std::vector<BinaryView> views(t.views().begin(), t.views().end());
  const std::vector<SharedBytes> buffers = t.data_buffers();
  auto from = [&](const std::vector<BinaryView>& v) {
    return StringTensor::from_views(bytes_of_vector(v), v.size(), buffers);
  };
  EXPECT_TRUE(from(views).equals(t));

  std::vector<BinaryView> dirty = views;
  dirty[0].bytes[11] = 0x55;  // non-zero padding: repaired (copied), not rejected
  const StringTensor repaired = from(dirty);
  EXPECT_TRUE(repaired.equals(t));
  EXPECT_EQ(repaired.views()[0].bytes[11], 0);

  std::vector<BinaryView> bad = views;
  bad[1] = BinaryView::make_reference(reinterpret_cast<const std::uint8_t*>("a st"), 27, 1, 0);
  EXPECT_THROW(from(bad), InvalidArgument);  // no buffer 1
  bad[1] = BinaryView::make_reference(reinterpret_cast<const std::uint8_t*>("a st"), 27, 0, 5);
  EXPECT_THROW(from(bad), InvalidArgument);  // past the end of buffer 0
  bad[1] = BinaryView::make_reference(reinterpret_cast<const std::uint8_t*>("XXXX"), 27, 0, 2);
  EXPECT_THROW(from(bad), InvalidArgument);  // prefix mismatch
  bad[1] = views[1];
  bad[1].length = 0x8000'0000u;
  EXPECT_THROW(from(bad), InvalidArgument);  // negative int32 length
  bad[1] = BinaryView::make_inline(reinterpret_cast<const std::uint8_t*>("\xff"), 1);
  EXPECT_THROW(from(bad), InvalidArgument);  // invalid UTF-8 inline
  EXPECT_THROW(StringTensor::from_views(bytes_of_vector(views), 3, buffers), InvalidArgument);
}

TEST(StringTensor, BuilderAppendsWithoutIntermediateObjects) {
  StringTensorBuilder builder;
  builder.reserve(3, 64);
  for (const auto& s : kSample) builder.append(s);
  EXPECT_EQ(builder.size(), kSample.size());
  const StringTensor t = builder.finish();
  EXPECT_EQ(strings_of(t), kSample);
  EXPECT_TRUE(t.has_contiguous());
  EXPECT_EQ(builder.size(), 0u);
  builder.append("\xff");
  EXPECT_THROW(builder.finish(), InvalidArgument);
  EXPECT_TRUE(builder.finish().empty());
}

TEST(StringTensor, AtChecksBounds) {
  const StringTensor t = make({"a"});
  EXPECT_EQ(t.at(0), "a");
  EXPECT_THROW((void)t.at(1), std::out_of_range);
}

}  // namespace
}  // namespace luminamoon::data
