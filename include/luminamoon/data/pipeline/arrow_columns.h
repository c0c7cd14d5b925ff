// Arrow export of a pipeline batch: the kept texts and their extra fields as one Arrow record
// batch (a struct array) through the C Stream Interface, so a batch read by a native reader
// reaches a Parquet/IPC writer without one Python object per document.
//
// Field columns get one Arrow type from their values (docs/pipeline.md, "Arrow export"):
//   only nulls -> null; bools -> bool; integers -> int64 (uint64 when one exceeds 2^63 - 1 and
//   none is negative, else double); integers and doubles -> double; strings -> string;
//   any other mixture -> string, each non-string value written as JSON (true, 12, 1.5, 1e+16).
// The Python fallback applies the same rules.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminamoon/data/arrow/c_data_interface.h"
#include "luminamoon/data/pipeline/document_batch.h"
#include "luminamoon/data/string_tensor/arrow_bridge.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data {

enum class FieldType : std::uint8_t { kNull, kBool, kInt64, kUint64, kFloat64, kString };

// "null", "bool", "int64", "uint64", "double", "string".
std::string_view field_type_name(FieldType type) noexcept;
// The column type of `values` by the rules above (kBytes, kList and kStruct count as "other").
FieldType infer_field_type(std::span<const DataValue> values) noexcept;
// A value as its string-column text: a string as it is, anything else as JSON (Python's
// json.dumps spelling: true, false, 12, 1.5, 1e+16, NaN, Infinity).
std::string field_value_text(const DataValue& value);

// A column produced elsewhere (e.g. pyarrow), moved into the batch and released with it.
struct ForeignColumn {
  std::string name;
  ArrowSchema schema{};
  ArrowArray array{};
};

struct FieldColumn {
  std::string name;
  std::vector<DataValue> values;  // one per row; copied into Arrow buffers by the export
};

// Fills `stream` with one record batch: `texts` as column `text_name` (in `text_type`), then the
// field columns, then the foreign ones. Every column must have texts.size() rows (else
// InvalidArgument naming it). Ownership of the foreign columns moves to the stream.
void export_record_batch_stream(const StringTensor& texts, const std::string& text_name,
                                ArrowStringType text_type, std::vector<FieldColumn> fields,
                                std::vector<ForeignColumn> foreign, ArrowArrayStream* stream);

}  // namespace luminamoon::data
