// The Python-side objects of the FusedPipeline engine, shared by pipeline_bindings.cc and
// prefetch_bindings.cc (which runs the engine on ResumablePipeline's prefetch thread).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "luminamoon/data/checkpoint/stream_coordinate.h"
#include "luminamoon/data/pipeline/document_batch.h"
#include "luminamoon/data/pipeline/fused_pipeline.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace luminamoon::data::bindings {

struct PyPipelineResult {
  StringTensor texts;
  std::shared_ptr<std::vector<std::uint8_t>> dropped_by;  // 0 kept, else 1 + stage index
  std::vector<DocumentRejection> rejections;              // empty: every document kept
  std::vector<std::size_t> kept;
  // Reader input: the batch (fields and coordinates, and the storage their bytes live in).
  std::shared_ptr<const DocumentBatch> batch;
  std::shared_ptr<const std::vector<std::string>> field_names;
  nb::object py_fields;  // fields given as a Python mapping (None otherwise)
  std::optional<std::vector<StreamCoordinate>> coordinates;  // every input document's
  std::optional<StreamCoordinate> end;
  PipelineCounters counters;
};

struct PyPipelineEngine {
  // The stages' Python objects, kept alive for as long as the engine runs them.
  nb::object cleaner, quality, exact_dedup, near_dedup, pii, language;
  FusedPipeline pipeline;
  // The pipeline's `threads` (0: every core), which its stages were built with: a list of strs
  // has the ones that must be encoded encoded on the worker pool with as many.
  unsigned threads = 0;
};

// Runs the engine's stages over `batch` and fills the result's texts, kept indices, drop codes,
// rejections and counters. Touches no Python object: call it with the GIL released.
void run_stages(PyPipelineEngine& engine, DocumentBatch& batch, PyPipelineResult& result);

}  // namespace luminamoon::data::bindings
