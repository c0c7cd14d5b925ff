// Arrow export of a pipeline batch (see arrow_columns.h): column type inference, Python-style
// JSON spelling of mixed values, and one struct-array record batch behind a C stream.
#include "luminamoon/data/pipeline/arrow_columns.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

// Stands in for the null pointer of an empty buffer: consumers may reject null data pointers.
alignas(64) constexpr std::uint8_t kEmpty[64] = {};

const char* format_of(FieldType type) noexcept {
  switch (type) {
    case FieldType::kNull:
      return "n";
    case FieldType::kBool:
      return "b";
    case FieldType::kInt64:
      return "l";
    case FieldType::kUint64:
      return "L";
    case FieldType::kFloat64:
      return "g";
    case FieldType::kString:
      return "u";
  }
  return "n";
}

// Python's repr(float): the shortest round-trip digits, in exponent form when the decimal
// exponent is below -4 or at least 16 ("1e-05", "1e+16"), else positional with at least one
// fractional digit ("2.0", "0.0001").
std::string python_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // e.g. "-1.2345e+02"
  const std::size_t e = sci.find('e');
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string mantissa = sci.substr(0, e);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (const char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int magnitude = exponent < 0 ? -exponent : exponent;
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) out += "0";
    out += std::to_string(magnitude);
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  const auto point = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= point) {
    out += digits + std::string(point - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, point) + "." + digits.substr(point);
  }
  return out;
}

struct ColumnBuffers {
  std::vector<std::uint8_t> validity;  // empty when there is no null
  std::vector<std::uint8_t> bits;      // bool values
  std::vector<std::int64_t> i64;
  std::vector<std::uint64_t> u64;
  std::vector<double> f64;
  std::vector<std::int32_t> offsets;
  std::string payload;
  std::int64_t null_count = 0;
  std::vector<const void*> buffers;
};

void set_bit(std::vector<std::uint8_t>& bits, std::size_t i) {
  bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1u << (i % 8)));
}

struct BatchState {
  std::vector<ColumnBuffers> fields;
  std::vector<ArrowArray> children;  // exported children (text, fields, foreign), released here
  std::vector<ArrowArray*> child_pointers;
  const void* parent_buffers[1] = {nullptr};
};

void release_child_noop(ArrowArray* array) { array->release = nullptr; }

void release_batch(ArrowArray* array) {
  auto* state = static_cast<BatchState*>(array->private_data);
  for (ArrowArray& child : state->children) {
    if (child.release != nullptr) child.release(&child);
  }
  delete state;
  array->release = nullptr;
}

// The schema side: names and formats owned here; foreign child schemas are shared by every
// schema handed out and released when the last one goes.
struct ForeignSchemas {
  std::vector<ArrowSchema> schemas;
  ~ForeignSchemas() {
    for (ArrowSchema& s : schemas) {
      if (s.release != nullptr) s.release(&s);
    }
  }
};

struct SchemaSpec {
  std::vector<std::string> names;
  std::vector<std::string> formats;  // "" for foreign columns
  ArrowStringType text_type = ArrowStringType::kUtf8;
  std::shared_ptr<ForeignSchemas> foreign;
};

struct SchemaState {
  std::shared_ptr<const SchemaSpec> spec;
  std::vector<ArrowSchema> children;
  std::vector<ArrowSchema*> child_pointers;
};

void release_schema_noop(ArrowSchema* schema) { schema->release = nullptr; }

void release_parent_schema(ArrowSchema* schema) {
  delete static_cast<SchemaState*>(schema->private_data);
  schema->release = nullptr;
}

void fill_schema(const std::shared_ptr<const SchemaSpec>& spec, ArrowSchema* out) {
  auto state = std::make_unique<SchemaState>();
  state->spec = spec;
  const std::size_t n = spec->names.size();
  state->children.resize(n);
  std::size_t foreign_index = 0;
  for (std::size_t c = 0; c < n; ++c) {
    ArrowSchema& child = state->children[c];
    if (c == 0) {
      export_arrow_schema(spec->text_type, &child);
    } else if (spec->formats[c].empty()) {
      child = spec->foreign->schemas[foreign_index++];  // a borrowed copy
      child.release = release_schema_noop;
    } else {
      child = ArrowSchema{};
      child.format = spec->formats[c].c_str();
      child.flags = ARROW_FLAG_NULLABLE;
      child.release = release_schema_noop;
    }
    child.name = spec->names[c].c_str();
    state->child_pointers.push_back(&child);
  }
  *out = ArrowSchema{};
  out->format = "+s";
  out->name = "";
  out->n_children = static_cast<std::int64_t>(n);
  out->children = state->child_pointers.data();
  out->release = release_parent_schema;
  out->private_data = state.release();
}

struct StreamState {
  std::shared_ptr<const SchemaSpec> spec;
  ArrowArray pending{};
  std::string last_error;
};

int stream_get_schema(ArrowArrayStream* stream, ArrowSchema* out) {
  auto* state = static_cast<StreamState*>(stream->private_data);
  try {
    fill_schema(state->spec, out);
  } catch (const std::exception& e) {
    state->last_error = e.what();
    return ENOMEM;
  }
  return 0;
}

int stream_get_next(ArrowArrayStream* stream, ArrowArray* out) {
  auto* state = static_cast<StreamState*>(stream->private_data);
  *out = state->pending;  // a released array (end of stream) once handed out
  state->pending.release = nullptr;
  return 0;
}

const char* stream_last_error(ArrowArrayStream* stream) {
  const std::string& e = static_cast<StreamState*>(stream->private_data)->last_error;
  return e.empty() ? nullptr : e.c_str();
}

void stream_release(ArrowArrayStream* stream) {
  auto* state = static_cast<StreamState*>(stream->private_data);
  if (state->pending.release != nullptr) state->pending.release(&state->pending);
  delete state;
  stream->release = nullptr;
}

void build_column(FieldType type, const std::vector<DataValue>& values, ColumnBuffers& out) {
  const std::size_t n = values.size();
  out.validity.assign((n + 7) / 8, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (values[i].kind == DataValue::Kind::kNull) {
      ++out.null_count;
    } else {
      set_bit(out.validity, i);
    }
  }
  const void* validity = out.null_count == 0 ? nullptr : out.validity.data();
  if (out.null_count == 0) out.validity.clear();
  switch (type) {
    case FieldType::kNull:
      out.null_count = static_cast<std::int64_t>(n);
      out.buffers = {};
      return;
    case FieldType::kBool:
      out.bits.assign((n + 7) / 8, 0);
      for (std::size_t i = 0; i < n; ++i) {
        if (values[i].kind == DataValue::Kind::kBool && values[i].boolean) set_bit(out.bits, i);
      }
      out.buffers = {validity, out.bits.empty() ? kEmpty : out.bits.data()};
      return;
    case FieldType::kInt64:
      out.i64.resize(n, 0);
      for (std::size_t i = 0; i < n; ++i) {
        if (values[i].kind == DataValue::Kind::kInt64) out.i64[i] = values[i].int64;
      }
      out.buffers = {validity, out.i64.empty() ? kEmpty : static_cast<const void*>(out.i64.data())};
      return;
    case FieldType::kUint64:
      out.u64.resize(n, 0);
      for (std::size_t i = 0; i < n; ++i) {
        const DataValue& v = values[i];
        if (v.kind == DataValue::Kind::kUint64) out.u64[i] = v.uint64;
        if (v.kind == DataValue::Kind::kInt64) out.u64[i] = static_cast<std::uint64_t>(v.int64);
      }
      out.buffers = {validity, out.u64.empty() ? kEmpty : static_cast<const void*>(out.u64.data())};
      return;
    case FieldType::kFloat64:
      out.f64.resize(n, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        const DataValue& v = values[i];
        if (v.kind == DataValue::Kind::kDouble) out.f64[i] = v.number;
        if (v.kind == DataValue::Kind::kInt64) out.f64[i] = static_cast<double>(v.int64);
        if (v.kind == DataValue::Kind::kUint64) out.f64[i] = static_cast<double>(v.uint64);
      }
      out.buffers = {validity, out.f64.empty() ? kEmpty : static_cast<const void*>(out.f64.data())};
      return;
    case FieldType::kString:
      out.offsets.assign(n + 1, 0);
      for (std::size_t i = 0; i < n; ++i) {
        const DataValue& v = values[i];
        if (v.kind == DataValue::Kind::kString) {
          out.payload.append(v.string);
        } else if (v.kind != DataValue::Kind::kNull) {
          out.payload += field_value_text(v);
        }
        if (out.payload.size() >
            static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
          throw InvalidArgument("Arrow export: a string column of one batch exceeds 2 GiB");
        }
        out.offsets[i + 1] = static_cast<std::int32_t>(out.payload.size());
      }
      out.buffers = {validity, out.offsets.data(),
                     out.payload.empty() ? kEmpty : static_cast<const void*>(out.payload.data())};
      return;
  }
}

}  // namespace

std::string_view field_type_name(FieldType type) noexcept {
  switch (type) {
    case FieldType::kNull:
      return "null";
    case FieldType::kBool:
      return "bool";
    case FieldType::kInt64:
      return "int64";
    case FieldType::kUint64:
      return "uint64";
    case FieldType::kFloat64:
      return "double";
    case FieldType::kString:
      return "string";
  }
  return "null";
}

FieldType infer_field_type(std::span<const DataValue> values) noexcept {
  bool any_bool = false, any_int = false, any_double = false, any_string = false, other = false;
  bool any_negative = false, any_big = false;
  for (const DataValue& v : values) {
    switch (v.kind) {
      case DataValue::Kind::kNull:
        break;
      case DataValue::Kind::kBool:
        any_bool = true;
        break;
      case DataValue::Kind::kInt64:
        any_int = true;
        any_negative = any_negative || v.int64 < 0;
        break;
      case DataValue::Kind::kUint64:
        any_int = true;
        any_big = any_big ||
                  v.uint64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        break;
      case DataValue::Kind::kDouble:
        any_double = true;
        break;
      case DataValue::Kind::kString:
        any_string = true;
        break;
      default:
        other = true;
    }
  }
  const int kinds = int{any_bool} + int{any_int || any_double} + int{any_string} + int{other};
  if (kinds == 0) return FieldType::kNull;
  if (kinds > 1 || other) return FieldType::kString;
  if (any_bool) return FieldType::kBool;
  if (any_string) return FieldType::kString;
  if (any_double) return FieldType::kFloat64;
  if (any_big) return any_negative ? FieldType::kFloat64 : FieldType::kUint64;
  return FieldType::kInt64;
}

std::string field_value_text(const DataValue& v) {
  switch (v.kind) {
    case DataValue::Kind::kNull:
      return "null";
    case DataValue::Kind::kBool:
      return v.boolean ? "true" : "false";
    case DataValue::Kind::kInt64:
      return std::to_string(v.int64);
    case DataValue::Kind::kUint64:
      return std::to_string(v.uint64);
    case DataValue::Kind::kDouble:
      return python_float(v.number);
    case DataValue::Kind::kString:
      return std::string(v.string);
    default:
      throw InvalidArgument("Arrow export: bytes, list and struct field values are not supported");
  }
}

void export_record_batch_stream(const StringTensor& texts, const std::string& text_name,
                                ArrowStringType text_type, std::vector<FieldColumn> fields,
                                std::vector<ForeignColumn> foreign, ArrowArrayStream* stream) {
  const std::size_t rows = texts.size();
  // Foreign columns are owned from here on, whatever happens.
  auto foreign_schemas = std::make_shared<ForeignSchemas>();
  std::vector<ArrowArray> foreign_arrays;
  for (ForeignColumn& f : foreign) {
    foreign_schemas->schemas.push_back(f.schema);
    f.schema.release = nullptr;
    foreign_arrays.push_back(f.array);
    f.array.release = nullptr;
  }
  auto release_foreign_arrays = [&] {
    for (ArrowArray& a : foreign_arrays) {
      if (a.release != nullptr) a.release(&a);
    }
  };
  auto spec = std::make_shared<SchemaSpec>();
  spec->text_type = text_type;
  spec->foreign = foreign_schemas;
  spec->names.push_back(text_name);
  spec->formats.emplace_back("text");
  auto state = std::make_unique<BatchState>();
  try {
    for (const FieldColumn& f : fields) {
      if (f.values.size() != rows) {
        throw InvalidArgument("Arrow export: field '" + f.name + "' has " +
                              std::to_string(f.values.size()) + " values for " +
                              std::to_string(rows) + " rows");
      }
    }
    for (std::size_t k = 0; k < foreign.size(); ++k) {
      if (foreign_arrays[k].length != static_cast<std::int64_t>(rows)) {
        throw InvalidArgument("Arrow export: column '" + foreign[k].name + "' has " +
                              std::to_string(foreign_arrays[k].length) + " rows, the texts " +
                              std::to_string(rows));
      }
    }
    state->children.resize(1 + fields.size() + foreign.size());
    export_arrow_array(texts, text_type, &state->children[0]);
    state->fields.resize(fields.size());
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const FieldType type = infer_field_type(fields[f].values);
      ColumnBuffers& buffers = state->fields[f];
      build_column(type, fields[f].values, buffers);
      ArrowArray& child = state->children[1 + f];
      child = ArrowArray{};
      child.length = static_cast<std::int64_t>(rows);
      child.null_count = buffers.null_count;
      child.n_buffers = static_cast<std::int64_t>(buffers.buffers.size());
      child.buffers = buffers.buffers.empty() ? nullptr : buffers.buffers.data();
      child.release = release_child_noop;  // the buffers belong to the batch state
      spec->names.push_back(fields[f].name);
      spec->formats.emplace_back(format_of(type));
    }
    for (std::size_t k = 0; k < foreign.size(); ++k) {
      state->children[1 + fields.size() + k] = foreign_arrays[k];
      foreign_arrays[k].release = nullptr;  // now released by the batch
      spec->names.push_back(foreign[k].name);
      spec->formats.emplace_back();
    }
  } catch (...) {
    release_foreign_arrays();
    for (ArrowArray& child : state->children) {
      if (child.release != nullptr) child.release(&child);
    }
    throw;
  }
  for (ArrowArray& child : state->children) state->child_pointers.push_back(&child);
  auto stream_state = std::make_unique<StreamState>();
  stream_state->spec = spec;
  ArrowArray& batch = stream_state->pending;
  batch.length = static_cast<std::int64_t>(rows);
  batch.n_buffers = 1;
  batch.buffers = state->parent_buffers;
  batch.n_children = static_cast<std::int64_t>(state->children.size());
  batch.children = state->child_pointers.data();
  batch.release = release_batch;
  batch.private_data = state.release();
  *stream = ArrowArrayStream{};
  stream->get_schema = stream_get_schema;
  stream->get_next = stream_get_next;
  stream->get_last_error = stream_last_error;
  stream->release = stream_release;
  stream->private_data = stream_state.release();
}

}  // namespace luminamoon::data
