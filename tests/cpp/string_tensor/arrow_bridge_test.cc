// Arrow C Data Interface export/import of StringTensor: the buffers handed out, zero-copy both
// ways, and release semantics (exports outlive the tensor; imports release the producer's array
// exactly once, after the last tensor sharing it). Run under ASan in CI.
#include "luminamoon/data/string_tensor/arrow_bridge.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

const std::vector<std::string> kSample = {"short", "", "a string longer than twelve",
                                          "thirteen byte", "日本語のテキストです"};

StringTensor make(const std::vector<std::string>& strings) {
  std::vector<std::string_view> views(strings.begin(), strings.end());
  return StringTensor::from_strings(views);
}

std::vector<std::string> strings_of(const StringTensor& t) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < t.size(); ++i) out.emplace_back(t[i]);
  return out;
}

// Decodes an exported utf8_view array without our code: the Arrow rules only.
std::vector<std::string> decode_views(const ArrowArray& a) {
  std::vector<std::string> out;
  const auto* views = static_cast<const std::uint8_t*>(a.buffers[1]);
  for (std::int64_t i = 0; i < a.length; ++i) {
    const std::uint8_t* v = views + 16 * (a.offset + i);
    std::int32_t length;
    std::memcpy(&length, v, 4);
    if (length <= 12) {
      out.emplace_back(reinterpret_cast<const char*>(v + 4), static_cast<std::size_t>(length));
    } else {
      std::int32_t index, offset;
      std::memcpy(&index, v + 8, 4);
      std::memcpy(&offset, v + 12, 4);
      const auto* data = static_cast<const char*>(a.buffers[2 + index]);
      out.emplace_back(data + offset, static_cast<std::size_t>(length));
    }
  }
  return out;
}

template <typename Offset>
std::vector<std::string> decode_offsets(const ArrowArray& a) {
  std::vector<std::string> out;
  const auto* offsets = static_cast<const Offset*>(a.buffers[1]);
  const auto* data = static_cast<const char*>(a.buffers[2]);
  for (std::int64_t i = 0; i < a.length; ++i) {
    const Offset begin = offsets[a.offset + i];
    out.emplace_back(data + begin, static_cast<std::size_t>(offsets[a.offset + i + 1] - begin));
  }
  return out;
}

TEST(ArrowBridge, FormatsRoundTrip) {
  EXPECT_EQ(arrow_string_type("vu"), ArrowStringType::kUtf8View);
  EXPECT_EQ(arrow_string_type("vz"), ArrowStringType::kUtf8View);
  EXPECT_EQ(arrow_string_type("u"), ArrowStringType::kUtf8);
  EXPECT_EQ(arrow_string_type("Z"), ArrowStringType::kLargeUtf8);
  EXPECT_EQ(arrow_string_type("i"), std::nullopt);
  EXPECT_EQ(arrow_string_type(nullptr), std::nullopt);
  EXPECT_STREQ(arrow_format(ArrowStringType::kLargeUtf8), "U");
  ArrowSchema schema;
  export_arrow_schema(ArrowStringType::kUtf8View, &schema);
  EXPECT_STREQ(schema.format, "vu");
  EXPECT_EQ(schema.n_children, 0);
  ASSERT_NE(schema.release, nullptr);
  schema.release(&schema);
  EXPECT_EQ(schema.release, nullptr);
}

TEST(ArrowBridge, Utf8ViewExportSharesViewsAndBuffers) {
  const StringTensor t = make(kSample);
  ArrowArray a;
  export_arrow_array(t, ArrowStringType::kUtf8View, &a);
  ASSERT_EQ(a.n_buffers, 4);  // validity, views, one data buffer, variadic sizes
  EXPECT_EQ(a.length, 5);
  EXPECT_EQ(a.null_count, 0);
  EXPECT_EQ(a.buffers[0], nullptr);
  EXPECT_EQ(a.buffers[1], t.views().data());
  EXPECT_EQ(a.buffers[2], t.data_buffers()[0].data());
  const auto* sizes = static_cast<const std::int64_t*>(a.buffers[3]);
  EXPECT_EQ(sizes[0], static_cast<std::int64_t>(t.data_buffers()[0].size()));
  EXPECT_EQ(decode_views(a), kSample);
  a.release(&a);
  EXPECT_EQ(a.release, nullptr);
}

TEST(ArrowBridge, ExportOutlivesTheTensor) {
  ArrowArray views_array;
  ArrowArray offsets_array;
  {
    const StringTensor t = make(kSample);
    export_arrow_array(t.slice(1, 4), ArrowStringType::kUtf8View, &views_array);
    export_arrow_array(t.slice(1, 4), ArrowStringType::kUtf8, &offsets_array);
  }  // the tensor and the slices are gone; the exports hold the buffers
  const std::vector<std::string> expected(kSample.begin() + 1, kSample.end());
  EXPECT_EQ(decode_views(views_array), expected);
  EXPECT_EQ(decode_offsets<std::int32_t>(offsets_array), expected);
  views_array.release(&views_array);
  offsets_array.release(&offsets_array);
}

TEST(ArrowBridge, Utf8ExportOfAKeptLayoutIsZeroCopy) {
  const StringTensor t = make(kSample);
  const StringTensor s = t.slice(2, 2);
  ArrowArray a;
  export_arrow_array(s, ArrowStringType::kUtf8, &a);
  // Offsets as stored (starting above 0, as Arrow allows), the whole payload.
  EXPECT_EQ(a.buffers[1], s.kept_contiguous()->offsets.data());
  EXPECT_EQ(a.buffers[2], t.kept_contiguous()->payload.data());
  EXPECT_EQ(decode_offsets<std::int32_t>(a),
            (std::vector<std::string>(kSample.begin() + 2, kSample.begin() + 4)));
  a.release(&a);

  ArrowArray large;
  export_arrow_array(t, ArrowStringType::kLargeUtf8, &large);
  EXPECT_NE(large.buffers[1], t.kept_contiguous()->offsets.data());  // widened: new offsets
  EXPECT_EQ(large.buffers[2], t.kept_contiguous()->payload.data());  // payload shared
  EXPECT_EQ(decode_offsets<std::int64_t>(large), kSample);
  large.release(&large);
}

TEST(ArrowBridge, Utf8ExportOfGatheredViewsBuildsOffsets) {
  const StringTensor t = make(kSample);
  const std::vector<std::uint64_t> idx = {4, 2};
  ArrowArray a;
  export_arrow_array(t.take(idx), ArrowStringType::kUtf8, &a);
  EXPECT_EQ(decode_offsets<std::int32_t>(a), (std::vector<std::string>{kSample[4], kSample[2]}));
  a.release(&a);
}

TEST(ArrowBridge, EmptyTensorExportsNonNullBuffers) {
  for (const StringTensor& t : {StringTensor(), make({})}) {
    for (auto type :
         {ArrowStringType::kUtf8View, ArrowStringType::kUtf8, ArrowStringType::kLargeUtf8}) {
      ArrowArray a;
      export_arrow_array(t, type, &a);
      EXPECT_EQ(a.length, 0);
      for (std::int64_t k = 1; k < a.n_buffers; ++k) EXPECT_NE(a.buffers[k], nullptr);
      a.release(&a);
    }
  }
}

// A producer whose release callback counts its calls.
struct Producer {
  std::vector<std::int32_t> offsets32;
  std::vector<std::int64_t> offsets64;
  std::string data;
  std::vector<std::uint8_t> views;
  std::vector<std::uint8_t> validity;
  std::vector<std::int64_t> sizes;
  std::vector<const void*> buffers;
  int releases = 0;
};

void producer_release(ArrowArray* a) {
  ++static_cast<Producer*>(a->private_data)->releases;
  a->release = nullptr;
}

ArrowArray producer_array(Producer& p, std::int64_t length, std::int64_t offset = 0) {
  ArrowArray a{};
  a.length = length;
  a.offset = offset;
  a.n_buffers = static_cast<std::int64_t>(p.buffers.size());
  a.buffers = p.buffers.data();
  a.release = producer_release;
  a.private_data = &p;
  return a;
}

ArrowSchema schema_of(const char* format) {
  ArrowSchema s{};
  s.format = format;
  return s;
}

Producer utf8_producer(const std::vector<std::string>& strings) {
  Producer p;
  p.offsets32.push_back(0);
  for (const auto& s : strings) {
    p.data += s;
    p.offsets32.push_back(static_cast<std::int32_t>(p.data.size()));
  }
  p.buffers = {nullptr, p.offsets32.data(), p.data.data()};
  return p;
}

TEST(ArrowBridge, Utf8ImportIsZeroCopyAndReleasesOnceAfterTheLastUser) {
  Producer p = utf8_producer(kSample);
  ArrowArray a = producer_array(p, 5);
  StringTensor slice;
  {
    const StringTensor t = import_arrow_array(schema_of("u"), &a);
    EXPECT_EQ(a.release, nullptr);  // moved into the tensor
    EXPECT_EQ(strings_of(t), kSample);
    EXPECT_EQ(t.data_buffers()[0].data(), reinterpret_cast<const std::uint8_t*>(p.data.data()));
    EXPECT_EQ(t.kept_contiguous()->offsets.data(),
              reinterpret_cast<const std::uint8_t*>(p.offsets32.data()));
    slice = t.slice(2, 1);
  }
  EXPECT_EQ(p.releases, 0);  // the slice still shares the producer's buffers
  EXPECT_EQ(slice[0], kSample[2]);
  slice = StringTensor();
  EXPECT_EQ(p.releases, 1);
}

TEST(ArrowBridge, Utf8ImportHonoursTheArrayOffset) {
  Producer p = utf8_producer(kSample);
  ArrowArray a = producer_array(p, 3, 2);
  const StringTensor t = import_arrow_array(schema_of("u"), &a);
  EXPECT_EQ(strings_of(t), (std::vector<std::string>(kSample.begin() + 2, kSample.end())));
  // The data buffer starts at the producer's byte 0: view offsets are the Arrow offsets.
  EXPECT_EQ(t.views()[0].offset(), 5u);
}

TEST(ArrowBridge, LargeUtf8Import) {
  Producer p;
  p.offsets64 = {0, 2, 2, 17};
  p.data =
      "ab"
      "fifteen bytes!!";
  p.buffers = {nullptr, p.offsets64.data(), p.data.data()};
  ArrowArray a = producer_array(p, 3);
  const StringTensor t = import_arrow_array(schema_of("U"), &a);
  EXPECT_EQ(strings_of(t), (std::vector<std::string>{"ab", "", "fifteen bytes!!"}));
  EXPECT_EQ(t.kept_contiguous()->width, OffsetWidth::k64);
}

TEST(ArrowBridge, ViewImportIsZeroCopy) {
  const StringTensor source = make(kSample);
  ArrowArray exported;
  export_arrow_array(source, ArrowStringType::kUtf8View, &exported);
  const StringTensor t = import_arrow_array(schema_of("vu"), &exported);
  EXPECT_EQ(exported.release, nullptr);
  EXPECT_EQ(t.views().data(), source.views().data());
  EXPECT_EQ(t.data_buffers()[0].data(), source.data_buffers()[0].data());
  EXPECT_TRUE(t.equals(source));
  EXPECT_FALSE(t.has_contiguous());
}

TEST(ArrowBridge, ViewImportHonoursTheArrayOffsetAndSurvivesTheSource) {
  StringTensor t;
  {
    const StringTensor source = make(kSample);
    ArrowArray exported;
    export_arrow_array(source, ArrowStringType::kUtf8View, &exported);
    exported.offset = 2;
    exported.length = 2;
    t = import_arrow_array(schema_of("vu"), &exported);
  }
  EXPECT_EQ(strings_of(t), (std::vector<std::string>{kSample[2], kSample[3]}));
}

TEST(ArrowBridge, NullsAreRejectedWithTheirIndexAndTheArrayIsReleased) {
  Producer p = utf8_producer({"a", "b", "c"});
  p.validity = {0b101};
  p.buffers[0] = p.validity.data();
  ArrowArray a = producer_array(p, 3);
  a.null_count = 1;
  try {
    (void)import_arrow_array(schema_of("u"), &a, 10);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 11 is null"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p.releases, 1);
}

TEST(ArrowBridge, UnsupportedTypeAndMalformedArraysThrowAndRelease) {
  Producer p = utf8_producer({"a"});
  ArrowArray a = producer_array(p, 1);
  EXPECT_THROW((void)import_arrow_array(schema_of("i"), &a), InvalidType);
  EXPECT_EQ(p.releases, 1);

  Producer q = utf8_producer({"abc", "de"});
  q.offsets32[1] = 6;  // 0, 6, 5: decreasing, and past the 5-byte payload
  ArrowArray b = producer_array(q, 2);
  EXPECT_THROW((void)import_arrow_array(schema_of("u"), &b), InvalidArgument);
  EXPECT_EQ(q.releases, 1);

  Producer r = utf8_producer({"abc"});
  r.offsets32[0] = -1;
  ArrowArray c = producer_array(r, 1);
  EXPECT_THROW((void)import_arrow_array(schema_of("u"), &c), InvalidArgument);

  Producer s = utf8_producer({"\xff"});
  ArrowArray d = producer_array(s, 1);
  EXPECT_THROW((void)import_arrow_array(schema_of("z"), &d), InvalidArgument);  // binary, not UTF-8

  ArrowArray released{};
  EXPECT_THROW((void)import_arrow_array(schema_of("u"), &released), InvalidArgument);
}

TEST(ArrowBridge, ViewImportChecksBuffersAgainstTheVariadicSizes) {
  const StringTensor source = make(kSample);
  ArrowArray exported;
  export_arrow_array(source, ArrowStringType::kUtf8View, &exported);
  auto* sizes = const_cast<std::int64_t*>(static_cast<const std::int64_t*>(exported.buffers[3]));
  sizes[0] = 10;  // the long strings now lie past the end of buffer 0
  EXPECT_THROW((void)import_arrow_array(schema_of("vu"), &exported), InvalidArgument);
  EXPECT_EQ(exported.release, nullptr);
}

TEST(ArrowBridge, StreamRoundTrip) {
  const StringTensor t = make(kSample);
  ArrowArrayStream stream;
  export_arrow_stream(t, ArrowStringType::kUtf8View, &stream);
  const StringTensor back = import_arrow_stream(&stream);
  EXPECT_TRUE(back.equals(t));
  EXPECT_EQ(back.views().data(), t.views().data());  // one chunk: zero-copy
  // Exhausted: a second read yields an empty tensor.
  EXPECT_TRUE(import_arrow_stream(&stream).empty());
  stream.release(&stream);
  EXPECT_EQ(stream.release, nullptr);
}

TEST(ArrowBridge, StreamReleasedUnreadFreesItsArray) {
  ArrowArrayStream stream;
  export_arrow_stream(make(kSample), ArrowStringType::kLargeUtf8, &stream);
  ArrowSchema schema;
  ASSERT_EQ(stream.get_schema(&stream, &schema), 0);
  EXPECT_STREQ(schema.format, "U");
  schema.release(&schema);
  EXPECT_EQ(stream.get_last_error(&stream), nullptr);
  stream.release(&stream);  // ASan: nothing leaks
}

// A stream of several chunks, produced by hand.
struct ChunkedStream {
  std::vector<StringTensor> chunks;
  Producer* raw_last = nullptr;  // a hand-made utf8 chunk emitted after `chunks` when set
  std::size_t next = 0;
};

TEST(ArrowBridge, StreamOfChunksIsConcatenatedAndNumbersErrorsGlobally) {
  Producer bad = utf8_producer({"b", "\xc3"});
  ChunkedStream state{{make({"a", "first long string!"}), make({})}, &bad};
  ArrowArrayStream stream{};
  stream.get_schema = [](ArrowArrayStream*, ArrowSchema* out) {
    export_arrow_schema(ArrowStringType::kUtf8, out);
    return 0;
  };
  stream.get_next = [](ArrowArrayStream* s, ArrowArray* out) {
    auto* st = static_cast<ChunkedStream*>(s->private_data);
    if (st->next < st->chunks.size()) {
      export_arrow_array(st->chunks[st->next++], ArrowStringType::kUtf8, out);
    } else if (st->next == st->chunks.size() && st->raw_last != nullptr) {
      ++st->next;
      *out = producer_array(*st->raw_last,
                            static_cast<std::int64_t>(st->raw_last->offsets32.size() - 1));
    } else {
      *out = ArrowArray{};
    }
    return 0;
  };
  stream.get_last_error = [](ArrowArrayStream*) -> const char* { return nullptr; };
  stream.release = [](ArrowArrayStream* s) { s->release = nullptr; };
  stream.private_data = &state;
  try {
    (void)import_arrow_stream(&stream);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("element 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bad.releases, 1);
  state.chunks.push_back(make({"b", "second long string"}));
  state.raw_last = nullptr;
  state.next = 0;
  const StringTensor t = import_arrow_stream(&stream);
  EXPECT_EQ(strings_of(t),
            (std::vector<std::string>{"a", "first long string!", "b", "second long string"}));
  EXPECT_EQ(t.data_buffers().size(), 2u);
}

}  // namespace
}  // namespace luminamoon::data
