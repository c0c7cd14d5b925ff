// Python bindings of the FusedPipeline engine: PipelineEngine, PipelineResult and
// PipelineRejection. The stages' Python objects are built by luminamoon/data/pipeline.py and
// handed in; a batch runs with the GIL released, and the result keeps its data native (texts as
// a StringTensor, masks as NumPy arrays over native memory, Python lists only when asked for).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <optional>

#include "common.h"
#include "document_batch.h"
#include "luminamoon/data/checkpoint/stream_coordinate.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/pipeline/arrow_columns.h"
#include "luminamoon/data/pipeline/fused_pipeline.h"
#include "luminamoon/data/string_tensor/string_tensor.h"
#include "pipeline_result.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

struct PyPipelineRejection {
  std::string stage;
  std::string rule;
  std::optional<double> value;
  std::optional<double> threshold;
};

template <typename T>
T* stage_pointer(nb::handle object, const char* name, const char* type) {
  if (object.is_none()) return nullptr;
  if (!nb::isinstance<T>(object)) {
    throw nb::type_error((std::string("PipelineEngine: ") + name + " must be a " + type +
                          " or None, got " + nb::type_name(object.type()).c_str())
                             .c_str());
  }
  return nb::cast<T*>(object);
}

nb::dict counters_to_python(const PipelineCounters& counters) {
  nb::dict out;
  for (const auto& [section, values] : counters) {
    nb::dict d;
    for (const auto& [name, value] : values) d[nb::str(name.data(), name.size())] = value;
    out[nb::str(section.data(), section.size())] = d;
  }
  return out;
}

template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> numpy_vector(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  static T empty{};
  const std::size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->empty() ? &empty : owned->data(), 1, shape,
                                                owner);
}

}  // namespace

void run_stages(PyPipelineEngine& engine, DocumentBatch& batch, PyPipelineResult& result) {
  const std::size_t n = batch.size();
  result.counters = engine.pipeline.process(batch);
  result.kept = batch.kept_indices();
  const std::vector<std::string_view> kept_texts = batch.texts_at(result.kept);
  // One copy of the kept texts into one payload: both StringTensor layouts, zero-copy to
  // Arrow utf8/utf8_view and to the writers.
  result.texts = StringTensor::from_strings(kept_texts, StringTensor::Utf8::kTrusted);
  auto dropped = std::make_shared<std::vector<std::uint8_t>>(n, 0);
  if (!batch.rejections.empty()) {
    for (std::size_t i = 0; i < n; ++i) {
      (*dropped)[i] = static_cast<std::uint8_t>(batch.rejections[i].stage);
    }
  }
  result.dropped_by = std::move(dropped);
  result.rejections = std::move(batch.rejections);
}

namespace {

PyPipelineResult process(PyPipelineEngine& engine, nb::handle input, nb::handle fields,
                         nb::handle coordinates) {
  PyPipelineResult result;
  DocumentBatch batch;
  DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
  std::optional<StringTensor> tensor_input;  // keeps a StringTensor's bytes alive
  if (nb::isinstance<PyDocumentBatch>(input)) {
    const PyDocumentBatch& in = nb::cast<const PyDocumentBatch&>(input);
    batch = *in.batch;  // views and shared storage: no text is copied
    result.field_names = in.field_names;
    result.coordinates = in.batch->coordinates;
    result.end = in.batch->end;
  } else if (nb::isinstance<StringTensor>(input)) {
    tensor_input = nb::cast<StringTensor>(input);
    batch.texts.reserve(tensor_input->size());
    for (std::size_t i = 0; i < tensor_input->size(); ++i) {
      batch.texts.push_back((*tensor_input)[i]);
    }
    batch.valid_utf8.assign(batch.texts.size(), 1);  // a StringTensor holds valid UTF-8 only
  } else if (PyList_Check(input.ptr()) || PyTuple_Check(input.ptr()) ||
             nb::hasattr(input, "__arrow_c_array__") || nb::hasattr(input, "__arrow_c_stream__")) {
    // The strs that must be encoded are encoded on the pool (GIL released), as each stage given
    // them alone would; a str's own UTF-8 is valid, so its flag spares the stages a check.
    views.encode_on_pool(engine.threads);
    views.add_batch(input);
    batch.texts = views.views();
    const std::span<const std::uint8_t> known_valid = views.known_valid_utf8();
    batch.valid_utf8.assign(known_valid.begin(), known_valid.end());
  } else {
    throw nb::type_error(
        ("FusedPipeline.process: batch must be a DocumentBatch, a StringTensor, an Arrow string "
         "array or a list/tuple of str/bytes, got " +
         std::string(nb::type_name(input.type()).c_str()))
            .c_str());
  }
  const std::size_t n = batch.size();
  if (!fields.is_none()) {
    nb::dict given;
    nb::object mapping = nb::module_::import_("builtins").attr("dict")(fields);
    for (auto [key, values] : nb::borrow<nb::dict>(mapping)) {
      const std::size_t count = nb::len(values);
      if (count != n) {
        throw nb::value_error(
            ("FusedPipeline.process: field " + std::string(nb::repr(key).c_str()) + " has " +
             std::to_string(count) + " values for " + std::to_string(n) + " documents")
                .c_str());
      }
      PyObject* copy = PySequence_List(values.ptr());
      if (copy == nullptr) throw nb::python_error();
      given[key] = nb::steal(copy);
    }
    result.py_fields = given;
  }
  if (!coordinates.is_none()) {
    const std::size_t count = nb::len(coordinates);
    if (count != n) {
      throw nb::value_error(("FusedPipeline.process: " + std::to_string(count) +
                             " coordinates for " + std::to_string(n) + " documents")
                                .c_str());
    }
    std::vector<StreamCoordinate> coords;
    coords.reserve(n);
    for (nb::handle c : nb::iter(coordinates)) {
      if (!nb::isinstance<StreamCoordinate>(c)) {
        throw nb::type_error(("FusedPipeline.process: coordinates must be StreamCoordinate, got " +
                              std::string(nb::type_name(c.type()).c_str()))
                                 .c_str());
      }
      coords.push_back(nb::cast<StreamCoordinate>(c));
    }
    result.coordinates = std::move(coords);
  }

  {
    nb::gil_scoped_release release;
    run_stages(engine, batch, result);
  }
  if (result.field_names) {
    // Keep the reader batch (its fields' bytes) alive; texts are in result.texts already.
    const PyDocumentBatch& in = nb::cast<const PyDocumentBatch&>(input);
    result.batch = in.batch;
  }
  return result;
}

nb::object result_fields(const PyPipelineResult& r) {
  nb::dict out;
  if (r.field_names) {
    for (std::size_t f = 0; f < r.field_names->size(); ++f) {
      nb::list column = new_list(r.kept.size());
      for (std::size_t k = 0; k < r.kept.size(); ++k) {
        PyList_SetItem(column.ptr(), static_cast<Py_ssize_t>(k),
                       data_value_to_python(r.batch->fields[f][r.kept[k]]).release().ptr());
      }
      const std::string& name = (*r.field_names)[f];
      out[nb::str(name.data(), name.size())] = column;
    }
  }
  if (r.py_fields.is_valid() && !r.py_fields.is_none()) {
    for (auto [key, values] : nb::borrow<nb::dict>(r.py_fields)) {
      nb::list column = new_list(r.kept.size());
      nb::list all = nb::borrow<nb::list>(values);
      for (std::size_t k = 0; k < r.kept.size(); ++k) {
        PyList_SetItem(column.ptr(), static_cast<Py_ssize_t>(k),
                       nb::object(all[r.kept[k]]).release().ptr());
      }
      out[key] = column;
    }
  }
  return out;
}

ArrowStringType parse_text_type(const std::string& name) {
  static constexpr std::string_view kNames[] = {"string", "large_string", "string_view"};
  if (name == kNames[0]) return ArrowStringType::kUtf8;
  if (name == kNames[1]) return ArrowStringType::kLargeUtf8;
  if (name == kNames[2]) return ArrowStringType::kUtf8View;
  std::string message = "PipelineResult.export_arrow: unknown text_type '" + name + "'";
  if (const auto best = did_you_mean(name, kNames)) {
    message += "; did you mean '" + *best + "'?";
  } else {
    message += "; valid: string, large_string, string_view";
  }
  throw ConfigError(message);
}

template <typename T>
void release_and_delete(void* p) noexcept {
  auto* value = static_cast<T*>(p);
  if (value->release != nullptr) value->release(value);
  delete value;
}

template <typename T>
T* capsule_pointer(nb::handle capsule, const char* name) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (p == nullptr) throw nb::python_error();
  return static_cast<T*>(p);
}

// One Arrow record batch: the text column, the reader's fields (typed by the rules of
// arrow_columns.h), then fields the caller gave as Python lists (typed by pyarrow, which the
// caller's objects came from anyway).
nb::capsule export_arrow(const PyPipelineResult& r, const std::string& text_column,
                         const std::string& text_type) {
  const ArrowStringType type = parse_text_type(text_type);
  std::vector<FieldColumn> fields;
  if (r.field_names) {
    for (std::size_t f = 0; f < r.field_names->size(); ++f) {
      FieldColumn column{(*r.field_names)[f], {}};
      column.values.reserve(r.kept.size());
      for (const std::size_t i : r.kept) column.values.push_back(r.batch->fields[f][i]);
      fields.push_back(std::move(column));
    }
  }
  std::vector<ForeignColumn> foreign;
  if (r.py_fields.is_valid() && !r.py_fields.is_none()) {
    nb::object pyarrow = nb::module_::import_("pyarrow");
    nb::dict columns = nb::borrow<nb::dict>(result_fields(r));
    for (auto [key, values] : nb::borrow<nb::dict>(r.py_fields)) {
      nb::object array = pyarrow.attr("array")(columns[key]);
      nb::object pair = array.attr("__arrow_c_array__")();
      ForeignColumn column;
      column.name = nb::cast<std::string>(key);
      // Moved out of the capsules: their destructors then see a released struct.
      auto* schema = capsule_pointer<ArrowSchema>(pair[0], "arrow_schema");
      auto* arr = capsule_pointer<ArrowArray>(pair[1], "arrow_array");
      column.schema = *schema;
      schema->release = nullptr;
      column.array = *arr;
      arr->release = nullptr;
      foreign.push_back(column);
    }
  }
  auto* stream = new ArrowArrayStream{};
  nb::capsule capsule(stream, "arrow_array_stream", release_and_delete<ArrowArrayStream>);
  {
    nb::gil_scoped_release release;
    export_record_batch_stream(r.texts, text_column, type, std::move(fields), std::move(foreign),
                               stream);
  }
  return capsule;
}

}  // namespace

void bind_pipeline(nb::module_& m) {
  nb::class_<PyPipelineRejection>(
      m, "PipelineRejection",
      "Why the pipeline dropped a document: the stage, its rule, and the measured value and "
      "threshold where the rule has them.")
      .def(nb::init<std::string, std::string, std::optional<double>, std::optional<double>>(),
           "stage"_a, "rule"_a, "value"_a.none() = nb::none(), "threshold"_a.none() = nb::none())
      .def_ro("stage", &PyPipelineRejection::stage)
      .def_ro("rule", &PyPipelineRejection::rule)
      .def_ro("value", &PyPipelineRejection::value, nb::sig("def value(self) -> float | None"))
      .def_ro("threshold", &PyPipelineRejection::threshold,
              nb::sig("def threshold(self) -> float | None"))
      .def(
          "__eq__",
          [](const PyPipelineRejection& a, nb::handle other) -> nb::object {
            if (!nb::isinstance<PyPipelineRejection>(other)) return nb::borrow(Py_NotImplemented);
            const auto& b = nb::cast<const PyPipelineRejection&>(other);
            return nb::bool_(a.stage == b.stage && a.rule == b.rule && a.value == b.value &&
                             a.threshold == b.threshold);
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__hash__",
           [](const PyPipelineRejection& r) {
             return nb::hash(nb::make_tuple(r.stage, r.rule, r.value, r.threshold));
           })
      .def("__repr__", [](const PyPipelineRejection& r) {
        return nb::str("PipelineRejection(stage={!r}, rule={!r}, value={!r}, threshold={!r})")
            .format(r.stage, r.rule, r.value, r.threshold);
      });

  nb::class_<PyPipelineResult>(
      m, "PipelineResult",
      "One batch after the pipeline: the kept texts, the keep mask, why each other document was "
      "dropped, the kept documents' fields and coordinates, and this batch's counters.")
      .def_prop_ro("texts", [](const PyPipelineResult& r) { return r.texts; })
      .def_prop_ro(
          "keep",
          [](const PyPipelineResult& r) {
            std::vector<std::uint8_t> keep(r.dropped_by->size());
            for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = (*r.dropped_by)[i] == 0;
            auto* owned = new std::vector<std::uint8_t>(std::move(keep));
            nb::capsule owner(
                owned, [](void* p) noexcept { delete static_cast<std::vector<std::uint8_t>*>(p); });
            static bool empty = false;
            const std::size_t shape[1] = {owned->size()};
            return nb::ndarray<nb::numpy, bool, nb::ndim<1>>(
                owned->empty() ? &empty : reinterpret_cast<bool*>(owned->data()), 1, shape, owner);
          },
          nb::rv_policy::reference, nb::sig("def keep(self) -> numpy.typing.NDArray[numpy.bool_]"))
      .def_prop_ro(
          "indices",
          [](const PyPipelineResult& r) {
            std::vector<std::int64_t> out(r.kept.begin(), r.kept.end());
            return numpy_vector(std::move(out));
          },
          nb::rv_policy::reference,
          nb::sig("def indices(self) -> numpy.typing.NDArray[numpy.int64]"))
      .def_prop_ro(
          "dropped_by",
          [](nb::handle self) {
            const auto& r = nb::cast<const PyPipelineResult&>(self);
            const std::size_t shape[1] = {r.dropped_by->size()};
            static std::uint8_t empty = 0;
            // A read-only view of the result's own array; the result object owns it.
            return nb::ndarray<nb::numpy, const std::uint8_t, nb::ndim<1>>(
                r.dropped_by->empty() ? &empty : r.dropped_by->data(), 1, shape, self);
          },
          nb::rv_policy::reference,
          nb::sig("def dropped_by(self) -> numpy.typing.NDArray[numpy.uint8]"))
      .def_prop_ro(
          "reasons",
          [](const PyPipelineResult& r) {
            const std::size_t n = r.dropped_by->size();
            nb::list out = new_list(n);
            for (std::size_t i = 0; i < n; ++i) {
              nb::object item = nb::none();
              if (!r.rejections.empty() && r.rejections[i].stage != PipelineStage::kKept) {
                const DocumentRejection& d = r.rejections[i];
                PyPipelineRejection p;
                p.stage = std::string(pipeline_stage_name(d.stage));
                p.rule = std::string(d.rule);
                if (!std::isnan(d.value)) p.value = d.value;
                if (!std::isnan(d.threshold)) p.threshold = d.threshold;
                item = nb::cast(std::move(p));
              }
              PyList_SetItem(out.ptr(), static_cast<Py_ssize_t>(i), item.release().ptr());
            }
            return out;
          },
          nb::sig("def reasons(self) -> list[PipelineRejection | None]"))
      .def_prop_ro("fields", &result_fields, nb::sig("def fields(self) -> dict[str, list[object]]"))
      .def_prop_ro(
          "coordinates",
          [](const PyPipelineResult& r) -> nb::object {
            if (!r.coordinates) return nb::none();
            nb::list out = new_list(r.kept.size());
            for (std::size_t k = 0; k < r.kept.size(); ++k) {
              PyList_SetItem(out.ptr(), static_cast<Py_ssize_t>(k),
                             nb::cast((*r.coordinates)[r.kept[k]]).release().ptr());
            }
            return out;
          },
          nb::sig("def coordinates(self) -> list[StreamCoordinate] | None"))
      .def_prop_ro(
          "end", [](const PyPipelineResult& r) { return r.end; },
          nb::sig("def end(self) -> StreamCoordinate | None"))
      .def_prop_ro(
          "counters", [](const PyPipelineResult& r) { return counters_to_python(r.counters); },
          nb::sig("def counters(self) -> dict[str, dict[str, int]]"))
      .def_prop_ro(
          "total", [](const PyPipelineResult& r) { return r.dropped_by->size(); },
          "Documents in the input batch.")
      .def("export_arrow", &export_arrow, "text_column"_a = "text", "text_type"_a = "string",
           nb::sig("def export_arrow(self, text_column: str = 'text', text_type: str = 'string') "
                   "-> object"),
           "The kept documents as one Arrow record batch (text column, then the fields), an "
           "'arrow_array_stream' PyCapsule; text_type: 'string', 'large_string' or "
           "'string_view'. Field types follow docs/pipeline.md.")
      .def(
          "__arrow_c_stream__",
          [](const PyPipelineResult& r, nb::handle requested_schema) {
            (void)requested_schema;  // the protocol lets a producer return its own schema
            return export_arrow(r, "text", "string");
          },
          "requested_schema"_a.none() = nb::none(),
          nb::sig("def __arrow_c_stream__(self, requested_schema: object | None = None) -> "
                  "object"),
          "Arrow PyCapsule stream interface: export_arrow() with its defaults.")
      .def("__len__", [](const PyPipelineResult& r) { return r.texts.size(); })
      .def("__repr__", [](const PyPipelineResult& r) {
        return nb::str("PipelineResult(kept={}, total={})")
            .format(r.texts.size(), r.dropped_by->size());
      });

  nb::class_<PyPipelineEngine>(
      m, "PipelineEngine",
      "The native engine behind FusedPipeline: runs a batch through the given stages in one "
      "call with the GIL released. Build it through luminamoon.data.FusedPipeline.")
      .def(
          "__init__",
          [](PyPipelineEngine* self, nb::object cleaner, nb::object quality, nb::object exact_dedup,
             nb::object near_dedup, nb::object pii, nb::handle threads, nb::object language) {
            const auto thread_count = static_cast<unsigned>(to_unsigned(threads, "threads", 4096));
            PipelineStages stages;
            stages.cleaner = stage_pointer<TextCleaner>(cleaner, "cleaner", "TextCleaner");
            stages.quality = stage_pointer<QualityFilter>(quality, "quality", "QualityFilter");
            stages.exact_dedup =
                stage_pointer<StreamDeduplicator>(exact_dedup, "exact_dedup", "StreamDeduplicator");
            stages.near_dedup =
                stage_pointer<MinHashDeduplicator>(near_dedup, "near_dedup", "MinHashDeduplicator");
            stages.pii = stage_pointer<PiiMasker>(pii, "pii", "PIIMasker");
            stages.language = stage_pointer<LanguageFilter>(language, "language", "LanguageFilter");
            new (self)
                PyPipelineEngine{std::move(cleaner),    std::move(quality), std::move(exact_dedup),
                                 std::move(near_dedup), std::move(pii),     std::move(language),
                                 FusedPipeline(stages), thread_count};
          },
          "cleaner"_a.none(), "quality"_a.none(), "exact_dedup"_a.none(), "near_dedup"_a.none(),
          "pii"_a.none(), "threads"_a = 0, "language"_a.none() = nb::none(),
          nb::sig(
              "def __init__(self, cleaner: TextCleaner | None, quality: QualityFilter | None, "
              "exact_dedup: StreamDeduplicator | None, near_dedup: MinHashDeduplicator | "
              "None, pii: PIIMasker | None, threads: int = 0, language: LanguageFilter | None = "
              "None) -> None"))
      .def("process", &process, "batch"_a, "fields"_a.none() = nb::none(),
           "coordinates"_a.none() = nb::none(),
           nb::sig("def process(self, batch: object, fields: collections.abc.Mapping[str, "
                   "collections.abc.Sequence[object]] | None = None, coordinates: "
                   "collections.abc.Sequence[StreamCoordinate] | None = None) -> PipelineResult"),
           "Runs every stage over the batch (see docs/pipeline.md).")
      .def(
          "stats", [](const PyPipelineEngine& e) { return counters_to_python(e.pipeline.stats()); },
          nb::sig("def stats(self) -> dict[str, dict[str, int]]"),
          "The counters of every batch processed so far.");
}

}  // namespace luminamoon::data::bindings
