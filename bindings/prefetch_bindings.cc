// ShardPrefetcher (internal, used by luminamoon/data/streaming.py): a ShardReader and, optionally,
// a PipelineEngine run on a native BatchPrefetcher thread with no GIL, a bounded number of
// batches ahead of the training loop. The Python side takes each batch with its PipelineResult,
// the entries it staged in each deduplicator and the reader issues it raised.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common.h"
#include "document_batch.h"
#include "luminamoon/data/pipeline/batch_prefetcher.h"
#include "luminamoon/data/readers/shard_reader.h"
#include "pipeline_result.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

struct Prefetched {
  std::shared_ptr<DocumentBatch> batch;  // as read (the result keeps it for fields)
  std::optional<PyPipelineResult> result;
  // Entries the batch added to each deduplicator (committed + staged before and after: a commit
  // on the consumer thread moves entries between the two and leaves the sum alone).
  std::uint64_t exact_staged = 0;
  std::uint64_t near_staged = 0;
  std::vector<ReadIssue> issues;  // raised while reading this batch
};

struct PyShardPrefetcher {
  nb::object reader_object;  // keeps the reader and the engine alive while the thread runs
  nb::object engine_object;
  ShardReader* reader = nullptr;
  PyPipelineEngine* engine = nullptr;
  StreamDeduplicator* exact = nullptr;
  MinHashDeduplicator* near = nullptr;
  std::shared_ptr<const std::vector<std::string>> field_names;
  std::size_t issues_seen = 0;                  // the prefetch thread's alone
  std::unique_ptr<BatchPrefetcher> prefetcher;  // last: destroyed (joined) first

  bool produce(BatchPrefetcher::Item& item) {
    auto batch = std::make_shared<DocumentBatch>();
    if (!reader->next_batch(*batch)) return false;
    auto out = std::make_shared<Prefetched>();
    std::vector<ReadIssue> issues = reader->issues();
    if (issues.size() > issues_seen) {
      out->issues.assign(std::make_move_iterator(issues.begin() + static_cast<long>(issues_seen)),
                         std::make_move_iterator(issues.end()));
      issues_seen = issues.size();
    }
    if (engine != nullptr) {
      const std::uint64_t exact_before = exact != nullptr ? exact->size() : 0;
      const std::uint64_t near_before = near != nullptr ? near->size() : 0;
      DocumentBatch work = *batch;  // views and shared storage, as PipelineEngine.process does
      PyPipelineResult result;
      run_stages(*engine, work, result);
      result.batch = batch;
      result.field_names = field_names;
      result.coordinates = batch->coordinates;
      result.end = batch->end;
      out->exact_staged = (exact != nullptr ? exact->size() : 0) - exact_before;
      out->near_staged = (near != nullptr ? near->size() : 0) - near_before;
      out->result = std::move(result);
    }
    out->batch = std::move(batch);
    item = std::move(out);
    return true;
  }
};

nb::object next_batch(PyShardPrefetcher& p) {
  if (!p.prefetcher) throw nb::stop_iteration();
  BatchPrefetcher::Item item;
  {
    nb::gil_scoped_release release;
    item = p.prefetcher->next();
  }
  if (item == nullptr) throw nb::stop_iteration();
  auto* got = static_cast<Prefetched*>(item.get());
  PyDocumentBatch batch;
  batch.batch = got->batch;
  batch.field_names = p.field_names;
  nb::object result = nb::none();
  if (got->result) result = nb::cast(std::move(*got->result));
  nb::list issues;
  for (ReadIssue& issue : got->issues) issues.append(nb::cast(std::move(issue)));
  return nb::make_tuple(nb::cast(std::move(batch)), result, got->exact_staged, got->near_staged,
                        issues);
}

}  // namespace

void bind_prefetch(nb::module_& m) {
  nb::class_<PyShardPrefetcher>(
      m, "ShardPrefetcher",
      "Internal (ResumablePipeline): reads a ShardReader and runs a PipelineEngine on a native "
      "thread without the GIL, at most `depth` batches ahead.")
      .def(
          "__init__",
          [](PyShardPrefetcher* self, nb::object reader, nb::object engine, std::size_t depth) {
            new (self) PyShardPrefetcher();
            self->reader = nb::cast<ShardReader*>(reader);
            self->reader_object = std::move(reader);
            if (!engine.is_none()) {
              self->engine = nb::cast<PyPipelineEngine*>(engine);
              if (!self->engine->exact_dedup.is_none()) {
                self->exact = nb::cast<StreamDeduplicator*>(self->engine->exact_dedup);
              }
              if (!self->engine->near_dedup.is_none()) {
                self->near = nb::cast<MinHashDeduplicator*>(self->engine->near_dedup);
              }
            }
            self->engine_object = std::move(engine);
            self->field_names =
                std::make_shared<const std::vector<std::string>>(self->reader->options().fields);
            PyShardPrefetcher* state = self;
            self->prefetcher = std::make_unique<BatchPrefetcher>(
                [state](BatchPrefetcher::Item& item) { return state->produce(item); }, depth);
          },
          "reader"_a, "engine"_a.none(), "depth"_a,
          nb::sig("def __init__(self, reader: ShardReader, engine: PipelineEngine | None, "
                  "depth: int) -> None"))
      .def(
          "__iter__", [](nb::handle self) { return self; },
          nb::sig("def __iter__(self) -> ShardPrefetcher"))
      .def("__next__", &next_batch,
           nb::sig("def __next__(self) -> tuple[DocumentBatch, PipelineResult | None, int, int, "
                   "list[ReadIssue]]"),
           "The next batch, its result (None without an engine), the entries it staged in the "
           "exact and near deduplicators, and the reader issues it raised.")
      .def(
          "close",
          [](PyShardPrefetcher& p) {
            nb::gil_scoped_release release;
            if (p.prefetcher) p.prefetcher->stop();
          },
          "Stops the thread and waits for it; idempotent.");
}

}  // namespace luminamoon::data::bindings
