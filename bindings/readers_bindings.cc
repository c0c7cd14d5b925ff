// Python bindings of the readers: extract_field, ShardReader, DocumentBatch and ReadIssue. The
// GIL is released while a batch is read and parsed; its Python objects are built afterwards.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <limits>

#include "common.h"
#include "document_batch.h"
#include "luminamoon/data/checkpoint/stream_coordinate.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/readers/json_field.h"
#include "luminamoon/data/readers/shard_reader.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();

// Shard paths travel as bytes (os.fsencode) and come back as str (os.fsdecode), so names that
// are not valid UTF-8 survive the round trip.
nb::str decode_path(const std::string& path) {
  PyObject* s = PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
  if (s == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(s);
}

std::string encode_path(nb::handle path) { return to_path_bytes(path, "ShardReader", "paths"); }

// batch_size / max_record_bytes: 0 is as invalid as -1, so the range says [1, ...].
std::uint64_t to_positive(nb::handle value, const char* what) {
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    const long long v = PyLong_AsLongLong(value.ptr());
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    if (v >= 1 && static_cast<unsigned long long>(v) <= kU32) return static_cast<std::uint64_t>(v);
  }
  throw nb::value_error((std::string(what) + " must be an int in [1, " + std::to_string(kU32) +
                         "], got " + nb::repr(value).c_str())
                            .c_str());
}

// http_backoff / http_timeout: an int or float (not bool) of seconds; range checked by the core.
double to_seconds(nb::handle value, const char* what) {
  if ((PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr())) && !PyBool_Check(value.ptr())) {
    const double v = PyFloat_AsDouble(value.ptr());
    if (!(v == -1.0 && PyErr_Occurred())) return v;
    PyErr_Clear();
  }
  throw nb::type_error(("ShardReader: " + std::string(what) + " must be a number of seconds, got " +
                        std::string(nb::type_name(value.type()).c_str()))
                           .c_str());
}

std::vector<std::string> shard_patterns(nb::handle paths) {
  nb::object os = nb::module_::import_("os");
  if (PyUnicode_Check(paths.ptr()) || PyBytes_Check(paths.ptr()) ||
      nb::isinstance(paths, os.attr("PathLike"))) {
    return {encode_path(paths)};
  }
  if (!PySequence_Check(paths.ptr())) {
    throw nb::type_error(("ShardReader: paths must be a str, an os.PathLike or a sequence of them, "
                          "got " +
                          std::string(nb::type_name(paths.type()).c_str()))
                             .c_str());
  }
  std::vector<std::string> out;
  for (nb::handle item : nb::iter(paths)) out.push_back(encode_path(item));
  return out;
}

std::vector<std::string> field_list(nb::handle fields) {
  if (PyUnicode_Check(fields.ptr()) || !PySequence_Check(fields.ptr())) {
    throw nb::type_error(("ShardReader: fields must be a sequence of str such as ('id', 'url'), "
                          "got " +
                          std::string(nb::type_name(fields.type()).c_str()))
                             .c_str());
  }
  std::vector<std::string> out;
  for (nb::handle item : nb::iter(fields)) {
    if (!PyUnicode_Check(item.ptr())) {
      throw nb::type_error(("ShardReader: fields must hold str, got " +
                            std::string(nb::type_name(item.type()).c_str()))
                               .c_str());
    }
    out.push_back(nb::cast<std::string>(item));
  }
  return out;
}

nb::dict stats_dict(const ReadStats& s) {
  auto kind = [&](IssueKind k) { return s.by_kind[static_cast<std::size_t>(k)]; };
  nb::dict d;
  d["records"] = s.records;
  d["documents"] = s.documents;
  d["blank_lines"] = s.blank_lines;
  d["bytes_read"] = s.bytes_read;
  d["shards_opened"] = s.shards_opened;
  d["empty_shards"] = s.empty_shards;
  d["unmatched_globs"] = kind(IssueKind::kUnmatchedGlob);
  d["unreadable_shards"] = kind(IssueKind::kUnreadableShard);
  d["decompression_errors"] = kind(IssueKind::kDecompressionError);
  d["record_too_long"] = kind(IssueKind::kRecordTooLong);
  d["malformed_json"] = kind(IssueKind::kMalformedJson);
  d["missing_field"] = kind(IssueKind::kMissingField);
  d["non_string_field"] = kind(IssueKind::kNonStringField);
  d["missing_extra_field"] = kind(IssueKind::kMissingExtraField);
  d["non_scalar_extra_field"] = kind(IssueKind::kNonScalarExtraField);
  d["invalid_utf8_texts"] = s.invalid_utf8_texts;
  d["issues"] = s.issues;
  d["issues_not_kept"] = s.issues_not_kept;
  return d;
}

nb::str issue_str(const ReadIssue& issue) {
  return nb::str("{}:{} (byte {}): {}")
      .format(decode_path(issue.path), issue.line, issue.byte_offset, issue.message);
}

std::string_view record_view(nb::handle record, DocumentViews& views) {
  if (PyUnicode_Check(record.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(record.ptr(), &size);
    if (data == nullptr) {
      PyErr_Clear();
      throw MalformedInputError(
          "malformed JSON: the record str contains a lone surrogate, which is not valid UTF-8");
    }
    return {data, static_cast<std::size_t>(size)};
  }
  return views.add(record, "record");
}

std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

const nb::object& batch_texts(PyDocumentBatch& b) {
  if (!b.texts.is_valid()) b.texts = texts_to_python(*b.batch, all_indices(b.batch->size()));
  return b.texts;
}

const nb::object& batch_fields(PyDocumentBatch& b) {
  if (!b.fields.is_valid()) {
    nb::dict out;
    const std::size_t n = b.batch->size();
    for (std::size_t f = 0; f < b.field_names->size(); ++f) {
      nb::list column = new_list(n);
      for (std::size_t i = 0; i < n; ++i) {
        PyList_SetItem(column.ptr(), static_cast<Py_ssize_t>(i),
                       data_value_to_python(b.batch->fields[f][i]).release().ptr());
      }
      const std::string& name = (*b.field_names)[f];
      out[nb::str(name.data(), name.size())] = column;
    }
    b.fields = out;
  }
  return b.fields;
}

const nb::object& batch_coordinates(PyDocumentBatch& b) {
  if (!b.coordinates.is_valid()) {
    const std::size_t n = b.batch->size();
    nb::list out = new_list(n);
    for (std::size_t i = 0; i < n; ++i) {
      PyList_SetItem(out.ptr(), static_cast<Py_ssize_t>(i),
                     nb::cast(b.batch->coordinates[i]).release().ptr());
    }
    b.coordinates = out;
  }
  return b.coordinates;
}

}  // namespace

nb::object data_value_to_python(const DataValue& v) {
  switch (v.kind) {
    case DataValue::Kind::kNull:
      return nb::none();
    case DataValue::Kind::kBool:
      return nb::bool_(v.boolean);
    case DataValue::Kind::kInt64:
      return nb::steal(PyLong_FromLongLong(v.int64));
    case DataValue::Kind::kUint64:
      return nb::steal(PyLong_FromUnsignedLongLong(v.uint64));
    case DataValue::Kind::kDouble:
      return nb::steal(PyFloat_FromDouble(v.number));
    case DataValue::Kind::kString:
      return nb::str(v.string.data(), v.string.size());
    case DataValue::Kind::kBytes:
      return nb::bytes(v.string.data(), v.string.size());
    case DataValue::Kind::kList: {
      nb::list out;
      if (v.items) {
        for (const DataValue& item : *v.items) out.append(data_value_to_python(item));
      }
      return out;
    }
    case DataValue::Kind::kStruct: {
      nb::dict out;
      if (v.members) {
        for (const auto& [name, member] : *v.members) {
          out[nb::str(name.data(), name.size())] = data_value_to_python(member);
        }
      }
      return out;
    }
  }
  return nb::none();
}

nb::list new_list(std::size_t n) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (list == nullptr) throw nb::python_error();
  return nb::steal<nb::list>(list);
}

nb::list texts_to_python(const DocumentBatch& batch, const std::vector<std::size_t>& indices) {
  nb::list out = new_list(indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const std::size_t i = indices[k];
    const std::string_view t = batch.texts[i];
    // Text-format records may be invalid UTF-8: CPython's own "replace" rule gives U+FFFD,
    // exactly what the fallback's bytes.decode("utf-8", "replace") gives.
    PyObject* s = new_str_from_utf8(t, batch.known_valid_utf8(i), "replace");
    if (s == nullptr) throw nb::python_error();
    PyList_SetItem(out.ptr(), static_cast<Py_ssize_t>(k), s);  // steals
  }
  return out;
}

void bind_readers(nb::module_& m) {
  m.def(
      "extract_field",
      [](nb::handle record, const std::string& path) {
        DocumentViews views;
        const std::string_view view = record_view(record, views);
        std::string value;
        {
          nb::gil_scoped_release release;
          value = extract_field(view, path);
        }
        return nb::str(value.data(), value.size());
      },
      "record"_a, "path"_a,
      nb::sig("def extract_field(record: str | bytes | bytearray | memoryview, path: str) -> str"),
      "Parse one JSON record and return the string at the dotted `path` ('text', 'meta.body', "
      "'messages.0.content'), fully unescaped. Malformed JSON, a missing path (with a 'did you "
      "mean' suggestion) or a non-string value raise MalformedInputError.");

  nb::class_<ReadIssue>(m, "ReadIssue",
                        "One bad record or shard: where it is, what kind of problem, and why.")
      .def_ro("shard_id", &ReadIssue::shard_id, nb::sig("def shard_id(self) -> int | None"))
      .def_prop_ro("path", [](const ReadIssue& i) { return decode_path(i.path); })
      .def_ro("line", &ReadIssue::line)
      .def_ro("byte_offset", &ReadIssue::byte_offset)
      .def_ro("field", &ReadIssue::field, nb::sig("def field(self) -> str | None"))
      .def_prop_ro("kind", [](const ReadIssue& i) { return std::string(issue_kind_name(i.kind)); })
      .def_ro("message", &ReadIssue::message)
      .def("__str__", &issue_str)
      .def("__repr__",
           [](const ReadIssue& i) {
             nb::object shard = i.shard_id ? nb::object(nb::int_(*i.shard_id)) : nb::none();
             nb::object field = i.field ? nb::object(nb::str(i.field->c_str())) : nb::none();
             return nb::str(
                        "ReadIssue(shard_id={!r}, path={!r}, line={!r}, byte_offset={!r}, "
                        "field={!r}, kind={!r}, message={!r})")
                 .format(shard, decode_path(i.path), i.line, i.byte_offset, field,
                         std::string(issue_kind_name(i.kind)), i.message);
           })
      .def(
          "__eq__",
          [](const ReadIssue& a, nb::handle other) -> nb::object {
            if (!nb::isinstance<ReadIssue>(other)) return nb::borrow(Py_NotImplemented);
            const ReadIssue& b = nb::cast<const ReadIssue&>(other);
            return nb::bool_(a.shard_id == b.shard_id && a.path == b.path && a.line == b.line &&
                             a.byte_offset == b.byte_offset && a.field == b.field &&
                             a.kind == b.kind && a.message == b.message);
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__hash__", [](const ReadIssue& i) { return nb::hash(issue_str(i)); });

  nb::class_<PyDocumentBatch>(m, "DocumentBatch",
                              "Documents read by a ShardReader, with the coordinate after each.")
      .def_prop_ro("texts", &batch_texts, nb::sig("def texts(self) -> list[str]"))
      .def_prop_ro("fields", &batch_fields,
                   nb::sig("def fields(self) -> dict[str, list[str | int | float | bool | None]]"))
      .def_prop_ro("coordinates", &batch_coordinates,
                   nb::sig("def coordinates(self) -> list[StreamCoordinate]"))
      .def_prop_ro("end", [](const PyDocumentBatch& b) { return b.batch->end; })
      .def("__len__", [](const PyDocumentBatch& b) { return b.batch->size(); })
      .def("__repr__", [](const PyDocumentBatch& b) {
        return nb::str("DocumentBatch(documents={}, end={!r})")
            .format(b.batch->size(), b.batch->end);
      });

  nb::class_<ShardReader>(m, "ShardReader",
                          "Batches of documents from .jsonl / .txt shards (plain, .gz, .zst).")
      .def(
          "__init__",
          [](ShardReader* self, nb::handle paths, nb::handle text_field, nb::handle fields,
             nb::handle format, nb::handle txt_mode, nb::handle batch_size, nb::handle start,
             nb::handle strict, nb::handle max_record_bytes, nb::handle threads,
             nb::handle index_dir, nb::handle index_spacing, nb::handle http_retries,
             nb::handle http_backoff, nb::handle http_timeout, const nb::kwargs& options) {
            reject_unknown_kwargs(
                "ShardReader", options,
                {"text_field", "fields", "format", "txt_mode", "batch_size", "start", "strict",
                 "max_record_bytes", "threads", "index_dir", "index_spacing", "http_retries",
                 "http_backoff", "http_timeout"});
            ShardReaderOptions o;
            o.text_field = to_str(text_field, "ShardReader", "text_field");
            o.fields = field_list(fields);
            if (!PyUnicode_Check(format.ptr()) || !PyUnicode_Check(txt_mode.ptr())) {
              throw nb::type_error("ShardReader: format and txt_mode must be str");
            }
            o.format = parse_shard_format(nb::cast<std::string>(format));
            o.text_mode = parse_text_mode(nb::cast<std::string>(txt_mode));
            o.batch_size = static_cast<std::size_t>(to_positive(batch_size, "batch_size"));
            if (const StreamCoordinate* c = to_instance<StreamCoordinate>(
                    start, "ShardReader", "start", "StreamCoordinate", true)) {
              o.start = *c;
            }
            o.strict = to_bool(strict, "ShardReader", "strict");
            o.max_record_bytes = to_positive(max_record_bytes, "max_record_bytes");
            o.threads = static_cast<unsigned>(to_unsigned(threads, "threads", kU32));
            if (!index_dir.is_none()) {
              o.index_dir = to_path_bytes(index_dir, "ShardReader", "index_dir");
              if (o.index_dir.empty()) throw nb::value_error("ShardReader: index_dir is empty");
            }
            o.index_spacing = to_unsigned(index_spacing, "index_spacing", 1ull << 62);
            o.http_retries = static_cast<unsigned>(to_unsigned(http_retries, "http_retries", 100));
            o.http_backoff = to_seconds(http_backoff, "http_backoff");
            o.http_timeout = to_seconds(http_timeout, "http_timeout");
            std::vector<std::string> patterns = shard_patterns(paths);
            nb::gil_scoped_release release;
            new (self) ShardReader(patterns, std::move(o));
          },
          "paths"_a.none(), nb::kw_only(), "text_field"_a.none() = "text",
          "fields"_a.none() = nb::tuple(), "format"_a.none() = "auto", "txt_mode"_a.none() = "line",
          "batch_size"_a.none() = 1024, "start"_a.none() = nb::none(), "strict"_a.none() = false,
          "max_record_bytes"_a.none() = 256u << 20, "threads"_a.none() = 0,
          "index_dir"_a.none() = nb::none(), "index_spacing"_a.none() = 4u << 20,
          "http_retries"_a.none() = 4, "http_backoff"_a.none() = 0.5,
          "http_timeout"_a.none() = 30.0, "options"_a,
          nb::sig("def __init__(self, paths: str | os.PathLike[str] | "
                  "collections.abc.Sequence[str | os.PathLike[str]], *, text_field: str = 'text', "
                  "fields: collections.abc.Sequence[str] = (), format: str = 'auto', "
                  "txt_mode: str = 'line', batch_size: int = 1024, "
                  "start: StreamCoordinate | None = None, strict: bool = False, "
                  "max_record_bytes: int = 268435456, threads: int = 0, "
                  "index_dir: str | os.PathLike[str] | None = None, "
                  "index_spacing: int = 4194304, http_retries: int = 4, "
                  "http_backoff: float = 0.5, http_timeout: float = 30.0, "
                  "**options: object) -> "
                  "None"))
      .def_prop_ro(
          "shards",
          [](const ShardReader& r) {
            nb::list out;
            for (const std::string& s : r.shards()) out.append(decode_path(s));
            return out;
          },
          nb::sig("def shards(self) -> list[str]"))
      .def_prop_ro(
          "errors",
          [](const ShardReader& r) {
            nb::list out;
            for (ReadIssue& issue : r.issues()) out.append(nb::cast(std::move(issue)));
            return out;
          },
          nb::sig("def errors(self) -> list[ReadIssue]"))
      .def(
          "stats", [](const ShardReader& r) { return stats_dict(r.stats()); },
          nb::sig("def stats(self) -> dict[str, int]"))
      .def(
          "__iter__", [](nb::handle self) { return self; },
          nb::sig("def __iter__(self) -> ShardReader"))
      .def(
          "__next__",
          [](ShardReader& r) {
            auto batch = std::make_shared<DocumentBatch>();
            bool more = false;
            {
              nb::gil_scoped_release release;
              more = r.next_batch(*batch);
            }
            if (!more) throw nb::stop_iteration();
            PyDocumentBatch out;
            out.batch = std::move(batch);
            out.field_names = std::make_shared<const std::vector<std::string>>(r.options().fields);
            return out;
          },
          nb::sig("def __next__(self) -> DocumentBatch"))
      .def("close", &ShardReader::close, nb::call_guard<nb::gil_scoped_release>(),
           "Close the open shard and end the stream; idempotent.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          nb::sig("def __enter__(self) -> ShardReader"))
      .def(
          "__exit__", [](ShardReader& r, nb::handle, nb::handle, nb::handle) { r.close(); },
          nb::arg().none(), nb::arg().none(), nb::arg().none(),
          nb::sig("def __exit__(self, exc_type: object, exc: object, tb: object, /) -> None"))
      .def("__repr__", [](const ShardReader& r) {
        return "ShardReader(" + std::to_string(r.shards().size()) + " shards)";
      });
}

}  // namespace luminamoon::data::bindings
