#include "luminamoon/data/pipeline/arrow_columns.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

DataValue number(double v) {
  DataValue d;
  d.kind = DataValue::Kind::kDouble;
  d.number = v;
  return d;
}
DataValue integer(std::int64_t v) {
  DataValue d;
  d.kind = DataValue::Kind::kInt64;
  d.int64 = v;
  return d;
}
DataValue text(std::string_view v) {
  DataValue d;
  d.kind = DataValue::Kind::kString;
  d.string = v;
  return d;
}

TEST(ArrowColumns, FloatsAreSpelledLikePythonRepr) {
  // Golden values: Python's json.dumps(float).
  const std::vector<std::pair<double, const char*>> cases = {
      {1.5, "1.5"},
      {2.0, "2.0"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {1e-5, "1e-05"},
      {0.0001, "0.0001"},
      {-0.5, "-0.5"},
      {0.0, "0.0"},
      {123.456, "123.456"},
      {1e100, "1e+100"},
      {5e-324, "5e-324"},
      {0.1, "0.1"},
      {1.0 / 3, "0.3333333333333333"},
      {-1e22, "-1e+22"},
  };
  for (const auto& [value, expected] : cases) EXPECT_EQ(field_value_text(number(value)), expected);
  EXPECT_EQ(field_value_text(number(std::nan(""))), "NaN");
  EXPECT_EQ(field_value_text(number(-std::numeric_limits<double>::infinity())), "-Infinity");
  EXPECT_EQ(field_value_text(integer(-12)), "-12");
  EXPECT_EQ(field_value_text(text("as is")), "as is");
}

TEST(ArrowColumns, TypeInference) {
  DataValue null;
  DataValue yes;
  yes.kind = DataValue::Kind::kBool;
  DataValue big;
  big.kind = DataValue::Kind::kUint64;
  big.uint64 = 1ULL << 63;
  using V = std::vector<DataValue>;
  EXPECT_EQ(infer_field_type(V{}), FieldType::kNull);
  EXPECT_EQ(infer_field_type(V{null, null}), FieldType::kNull);
  EXPECT_EQ(infer_field_type(V{yes, null}), FieldType::kBool);
  EXPECT_EQ(infer_field_type(V{integer(1), null}), FieldType::kInt64);
  EXPECT_EQ(infer_field_type(V{integer(1), number(2)}), FieldType::kFloat64);
  EXPECT_EQ(infer_field_type(V{integer(1), big}), FieldType::kUint64);
  EXPECT_EQ(infer_field_type(V{integer(-1), big}), FieldType::kFloat64);
  EXPECT_EQ(infer_field_type(V{text("a"), null}), FieldType::kString);
  EXPECT_EQ(infer_field_type(V{text("a"), integer(1)}), FieldType::kString);
  EXPECT_EQ(infer_field_type(V{yes, integer(1)}), FieldType::kString);
  EXPECT_EQ(field_type_name(FieldType::kFloat64), "double");
}

TEST(ArrowColumns, StreamHoldsOneRecordBatch) {
  const std::vector<std::string_view> strings = {"a", "bb"};
  StringTensor texts = StringTensor::from_strings(strings);
  std::vector<FieldColumn> fields;
  fields.push_back({"id", {integer(1), DataValue{}}});
  ArrowArrayStream stream{};
  export_record_batch_stream(texts, "text", ArrowStringType::kUtf8, std::move(fields), {}, &stream);
  ArrowSchema schema{};
  ASSERT_EQ(stream.get_schema(&stream, &schema), 0);
  EXPECT_STREQ(schema.format, "+s");
  ASSERT_EQ(schema.n_children, 2);
  EXPECT_STREQ(schema.children[0]->name, "text");
  EXPECT_STREQ(schema.children[1]->format, "l");
  schema.release(&schema);
  ArrowArray batch{};
  ASSERT_EQ(stream.get_next(&stream, &batch), 0);
  ASSERT_NE(batch.release, nullptr);
  EXPECT_EQ(batch.length, 2);
  EXPECT_EQ(batch.children[1]->null_count, 1);
  batch.release(&batch);
  ArrowArray end{};
  ASSERT_EQ(stream.get_next(&stream, &end), 0);
  EXPECT_EQ(end.release, nullptr);
  stream.release(&stream);
  std::vector<FieldColumn> wrong;
  wrong.push_back({"id", {integer(1)}});
  ArrowArrayStream bad{};
  EXPECT_THROW(
      export_record_batch_stream(texts, "text", ArrowStringType::kUtf8, std::move(wrong), {}, &bad),
      InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
