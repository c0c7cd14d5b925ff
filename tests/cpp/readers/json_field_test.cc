#include "luminamoon/data/readers/json_field.h"

#include <gtest/gtest.h>

#include <string>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

std::string message_of(std::string_view record, std::string_view path) {
  try {
    extract_field(record, path);
  } catch (const MalformedInputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FieldPathTest, SplitsSegmentsAndIndexes) {
  const FieldPath p("messages.0.content");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p.segment(0), "messages");
  EXPECT_EQ(p.index(1), 0u);
  EXPECT_FALSE(p.index(0).has_value());
  EXPECT_EQ(p.prefix(0), "");
  EXPECT_EQ(p.prefix(2), "messages.0");
  EXPECT_FALSE(FieldPath("99999999999999999999999").index(0).has_value());  // > u64
  for (const char* bad : {"", ".", "a..b", ".a", "a."}) {
    EXPECT_THROW(FieldPath{bad}, InvalidArgument) << bad;
  }
}

TEST(ExtractFieldTest, PathsObjectsArraysDigitKeys) {
  EXPECT_EQ(extract_field(R"({"text": "hi"})", "text"), "hi");
  EXPECT_EQ(extract_field(R"({"meta": {"body": "b"}})", "meta.body"), "b");
  EXPECT_EQ(extract_field(R"({"m": [{"c": "x"}, {"c": "y"}]})", "m.1.c"), "y");
  EXPECT_EQ(extract_field(R"({"m": {"0": "key"}})", "m.0"), "key");
  EXPECT_EQ(extract_field(R"({"t": "first", "t": "second"})", "t"), "first");
}

TEST(ExtractFieldTest, UnescapesEverything) {
  EXPECT_EQ(extract_field(R"({"t": "q\" b\\ s\/ \b\f\n\r\t"})", "t"), "q\" b\\ s/ \b\f\n\r\t");
  EXPECT_EQ(extract_field(R"({"t": "\u00e9\u4E2D"})", "t"), "\xC3\xA9\xE4\xB8\xAD");
  EXPECT_EQ(extract_field(R"({"t": "\ud83d\ude00"})", "t"), "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(extract_field(R"({"t": "a\u0000b"})", "t"), std::string("a\0b", 3));
}

TEST(ExtractFieldTest, MissingFieldSuggestsKeysAtThatLevel) {
  EXPECT_EQ(message_of(R"({"meta": {"body": "x"}})", "meta.bdy"),
            "field 'meta.bdy' not found; did you mean 'meta.body'?");
  EXPECT_EQ(message_of(R"({"text": "x"})", "txet"), "field 'txet' not found; did you mean 'text'?");
  EXPECT_EQ(message_of(R"({"a": 1, "b": 2, "a": 3})", "zzzzzz"),
            "field 'zzzzzz' not found; the record has keys 'a', 'b'");
  EXPECT_EQ(message_of(R"({"m": {}})", "m.x"), "field 'm.x' not found; 'm' is an empty object");
  EXPECT_EQ(message_of(R"({"m": [1, 2]})", "m.2"), "field 'm.2' not found; 'm' has 2 elements");
  EXPECT_EQ(message_of(R"({"m": [1]})", "m.k"),
            "field 'm.k' not found; 'm' is an array (index it with a number)");
  EXPECT_EQ(message_of(R"({"m": "s"})", "m.k"),
            "field 'm.k' not found; 'm' is a string, not an object");
  // A huge key is never a suggestion and costs no distance computation.
  const std::string huge = R"({")" + std::string(1 << 20, 'k') + R"(": 1})";
  EXPECT_EQ(message_of(huge, "text").substr(0, 41), "field 'text' not found; the record has ke");
}

TEST(ExtractFieldTest, NonStringNamesTheType) {
  EXPECT_EQ(message_of(R"({"t": 1})", "t"), "field 't' is a number, not a string");
  EXPECT_EQ(message_of(R"({"t": false})", "t"), "field 't' is a boolean, not a string");
  EXPECT_EQ(message_of(R"({"t": null})", "t"), "field 't' is null, not a string");
  EXPECT_EQ(message_of(R"({"t": {}})", "t"), "field 't' is an object, not a string");
  EXPECT_EQ(message_of(R"({"t": []})", "t"), "field 't' is an array, not a string");
}

TEST(ExtractFieldTest, MalformedRecords) {
  for (const std::string_view bad :
       {std::string_view(""), std::string_view("  "), std::string_view(R"({"t": "x")"),
        std::string_view(R"({"t": "x"} y)"), std::string_view(R"({"t": NaN})"),
        std::string_view(R"({"t": "\ud800"})"), std::string_view(R"({"t": "\udc00"})"),
        std::string_view(R"({"t": "x", "n": 1e400})"),
        std::string_view(R"({"t": "x", "n": 18446744073709551616})"),
        std::string_view("{\"t\": \"a\x01\"}"), std::string_view("{\"t\": \"\xff\"}"),
        std::string_view("{\"t\": \"a\0\"}", 10)}) {
    EXPECT_THROW(extract_field(bad, "t"), MalformedInputError) << bad;
  }
  EXPECT_EQ(message_of("{\"t\": \"ab\xff\"}", "t"), "malformed JSON: invalid UTF-8 at byte 9");
  EXPECT_THROW(extract_field(R"({"t": "x"})", "a..b"), InvalidArgument);
}

TEST(ExtractFieldTest, DepthLimit) {
  const auto nested = [](std::size_t arrays) {
    return std::string(arrays, '[') + std::string(arrays, ']');
  };
  JsonRecordParser parser;
  EXPECT_TRUE(parser.parse(nested(kJsonMaxDepth), false));  // innermost [] at depth 256
  EXPECT_FALSE(parser.parse(nested(kJsonMaxDepth + 1), false));
  EXPECT_NE(parser.error().find("deeper than 256"), std::string::npos);
  EXPECT_FALSE(
      parser.parse(std::string(kJsonMaxDepth, '[') + "1" + std::string(kJsonMaxDepth, ']'), false));
}

TEST(JsonRecordParserTest, ScalarsAndReuse) {
  JsonRecordParser parser;
  ASSERT_TRUE(parser.parse(
      R"({"i": -5, "u": 18446744073709551615, "d": 0.5, "b": true, "n": null, "s": "x", "o": {}})",
      false));
  JsonScalar v;
  std::string message;
  ASSERT_EQ(parser.find_scalar(FieldPath("i"), v, message), LookupStatus::kFound);
  EXPECT_EQ(v.kind, JsonScalar::Kind::kInt64);
  EXPECT_EQ(v.int64, -5);
  ASSERT_EQ(parser.find_scalar(FieldPath("u"), v, message), LookupStatus::kFound);
  EXPECT_EQ(v.kind, JsonScalar::Kind::kUint64);
  EXPECT_EQ(v.uint64, 18446744073709551615ull);
  ASSERT_EQ(parser.find_scalar(FieldPath("d"), v, message), LookupStatus::kFound);
  EXPECT_EQ(v.number, 0.5);
  ASSERT_EQ(parser.find_scalar(FieldPath("b"), v, message), LookupStatus::kFound);
  EXPECT_TRUE(v.boolean);
  ASSERT_EQ(parser.find_scalar(FieldPath("n"), v, message), LookupStatus::kFound);
  EXPECT_EQ(v.kind, JsonScalar::Kind::kNull);
  EXPECT_EQ(parser.find_scalar(FieldPath("o"), v, message), LookupStatus::kWrongType);
  EXPECT_EQ(message, "field 'o' is an object, not a string, number, boolean or null");
  EXPECT_EQ(parser.find_scalar(FieldPath("zz"), v, message), LookupStatus::kMissing);
  // A big record grows the parser; shrink_to gives the memory back and parsing still works.
  const std::string big = R"({"t": ")" + std::string(32 << 20, 'a') + R"("})";
  ASSERT_TRUE(parser.parse(big, false));
  std::string_view text;
  ASSERT_EQ(parser.find_string(FieldPath("t"), text, message), LookupStatus::kFound);
  EXPECT_EQ(text.size(), 32u << 20);
  parser.shrink_to(1 << 20);
  ASSERT_TRUE(parser.parse(R"({"t": "small"})", false));
  ASSERT_EQ(parser.find_string(FieldPath("t"), text, message), LookupStatus::kFound);
  EXPECT_EQ(text, "small");
}

}  // namespace
}  // namespace luminamoon::data
