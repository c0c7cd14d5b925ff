// The Python side of a DocumentBatch: the native batch itself (shared, immutable once handed to
// Python) plus lists built on first access. The FusedPipeline reads the native batch directly,
// so a batch that goes from a ShardReader into a pipeline never makes a Python object per
// document.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "luminamoon/data/pipeline/document_batch.h"

namespace luminamoon::data::bindings {

struct PyDocumentBatch {
  std::shared_ptr<const DocumentBatch> batch;
  std::shared_ptr<const std::vector<std::string>> field_names;
  // Built on first access (None until then).
  nb::object texts;
  nb::object fields;
  nb::object coordinates;
};

// A DataValue as the Python object it stands for (None, bool, int, float, str, bytes, list,
// dict).
nb::object data_value_to_python(const DataValue& value);

// A new list of n items, each to be set with PyList_SetItem.
nb::list new_list(std::size_t n);

// Texts of batch[indices] as str (invalid UTF-8 decoded with U+FFFD, CPython's rule).
nb::list texts_to_python(const DocumentBatch& batch, const std::vector<std::size_t>& indices);

}  // namespace luminamoon::data::bindings
