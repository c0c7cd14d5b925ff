// Python bindings of QualityFilter: settings and documents are converted with the GIL held, then
// the GIL is released for the metrics (one document) or the batch (the filter's worker threads).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <variant>

#include "common.h"
#include "luminamoon/data/quality/quality_filter.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

// Python value -> setting. Types the core does not take travel as their repr, so that unknown
// names are still reported first (ConfigError) and the value error names the setting.
QualitySetting to_setting(nb::handle value) {
  PyObject* obj = value.ptr();
  if (value.is_none()) return std::monostate{};
  if (PyBool_Check(obj)) return obj == Py_True;
  if (PyLong_Check(obj)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow == 0 && !(v == -1 && PyErr_Occurred())) return static_cast<std::int64_t>(v);
    PyErr_Clear();
    const double d = PyLong_AsDouble(obj);  // a ratio may be any number; counts reject it
    if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return d;
  }
  if (PyFloat_Check(obj)) return PyFloat_AsDouble(obj);
  // The "language" preset: a list/tuple of codes, or a mapping of code -> score.
  if (PyList_Check(obj) || PyTuple_Check(obj)) {
    QualityLanguages codes;
    for (nb::handle item : value) {
      if (!PyUnicode_Check(item.ptr())) return std::string(nb::repr(value).c_str());
      codes.emplace_back(nb::cast<std::string>(item));
    }
    return codes;
  }
  if (PyDict_Check(obj)) {
    QualityLanguageScores scores;
    for (auto [key, item] : nb::borrow<nb::dict>(value)) {
      PyObject* v = item.ptr();
      if (!PyUnicode_Check(key.ptr()) || PyBool_Check(v) || !(PyLong_Check(v) || PyFloat_Check(v)))
        return std::string(nb::repr(value).c_str());
      const double d = PyFloat_AsDouble(v);
      if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
      scores.emplace_back(nb::cast<std::string>(key), d);
    }
    return scores;
  }
  return std::string(nb::repr(value).c_str());
}

nb::object from_setting(const QualitySetting& setting) {
  struct Visitor {
    nb::object operator()(std::monostate) const { return nb::none(); }
    nb::object operator()(bool v) const { return nb::bool_(v); }
    nb::object operator()(std::int64_t v) const { return nb::int_(v); }
    nb::object operator()(double v) const { return nb::float_(v); }
    nb::object operator()(const std::string& v) const { return nb::str(v.data(), v.size()); }
    nb::object operator()(const QualityLanguages& v) const {
      nb::list out;
      for (const std::string& code : v) out.append(nb::str(code.data(), code.size()));
      return out;
    }
    nb::object operator()(const QualityLanguageScores& v) const {
      nb::dict out;
      for (const auto& [code, score] : v)
        out[nb::str(code.data(), code.size())] = nb::float_(score);
      return out;
    }
  };
  return std::visit(Visitor{}, setting);
}

nb::dict settings_dict(const std::vector<std::pair<std::string_view, QualitySetting>>& settings) {
  nb::dict out;
  for (const auto& [name, value] : settings) {
    out[nb::str(name.data(), name.size())] = from_setting(value);
  }
  return out;
}

std::vector<std::string> preset_list(nb::handle presets) {
  std::vector<std::string> names;
  if (PyUnicode_Check(presets.ptr())) {
    names.push_back(nb::cast<std::string>(presets));
    return names;
  }
  if (!PySequence_Check(presets.ptr())) {
    throw nb::type_error(("QualityFilter: presets must be a str or a sequence of str, got " +
                          std::string(nb::type_name(presets.type()).c_str()))
                             .c_str());
  }
  for (nb::handle item : nb::iter(presets)) {
    if (!PyUnicode_Check(item.ptr())) {
      throw nb::type_error(("QualityFilter: presets must be str, got " +
                            std::string(nb::type_name(item.type()).c_str()))
                               .c_str());
    }
    names.push_back(nb::cast<std::string>(item));
  }
  return names;
}

// The result of filter_batch, built from the core's result with the GIL held.
struct PyQualityResult {
  nb::list keep;
  nb::list reasons;
  nb::dict counters;
  nb::object texts;
};

nb::object rejection_object(const std::optional<QualityRejection>& rejection) {
  return rejection ? nb::cast(*rejection) : nb::none();
}

}  // namespace

void bind_quality(nb::module_& m) {
  nb::class_<QualityRejection>(
      m, "Rejection",
      "Why a document was rejected: the first rule it failed; `value comparison threshold` holds.")
      .def_prop_ro("rule", [](const QualityRejection& r) { return std::string(r.rule); })
      .def_prop_ro("metric", [](const QualityRejection& r) { return std::string(r.metric); })
      .def_ro("value", &QualityRejection::value)
      .def_ro("threshold", &QualityRejection::threshold)
      .def_prop_ro("comparison",
                   [](const QualityRejection& r) { return std::string(1, r.comparison); })
      .def(
          "__eq__",
          [](const QualityRejection& a, nb::handle b) {
            if (!nb::isinstance<QualityRejection>(b)) return false;
            return a == nb::cast<const QualityRejection&>(b);
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__hash__",
           [](const QualityRejection& r) {
             return nb::hash(nb::make_tuple(std::string(r.rule), std::string(r.metric), r.value,
                                            r.threshold, std::string(1, r.comparison)));
           })
      .def("__repr__", [](const QualityRejection& r) {
        return "Rejection(rule='" + std::string(r.rule) + "', metric='" + std::string(r.metric) +
               "', value=" + nb::repr(nb::float_(r.value)).c_str() +
               ", threshold=" + nb::repr(nb::float_(r.threshold)).c_str() + ", comparison='" +
               std::string(1, r.comparison) + "')";
      });

  nb::class_<PyQualityResult>(
      m, "QualityResult",
      "What filter_batch returns: keep mask, the first failing rule of every rejected document, "
      "counters per rule; `texts` holds the kept texts after C4 line removal (c4_lines only).")
      .def_ro("keep", &PyQualityResult::keep, nb::sig("def keep(self) -> list[bool]"))
      .def_ro("reasons", &PyQualityResult::reasons,
              nb::sig("def reasons(self) -> list[Rejection | None]"))
      .def_ro("counters", &PyQualityResult::counters,
              nb::sig("def counters(self) -> dict[str, int]"))
      .def_ro("texts", &PyQualityResult::texts,
              nb::sig("def texts(self) -> list[str | None] | None"))
      .def("__len__", [](const PyQualityResult& r) { return nb::len(r.keep); })
      .def("__repr__", [](const PyQualityResult& r) {
        auto count = [&](const char* key) { return nb::cast<std::uint64_t>(r.counters[key]); };
        return "QualityResult(total=" + std::to_string(count("total")) +
               ", kept=" + std::to_string(count("kept")) +
               ", rejected=" + std::to_string(count("rejected")) + ")";
      });

  nb::class_<QualityFilter>(
      m, "QualityFilter",
      "Document quality metrics and rule sets (presets), with a reason for every rejection.")
      .def(
          "__init__",
          [](QualityFilter* self, nb::handle presets, nb::handle threads,
             const nb::kwargs& thresholds) {
            const std::vector<std::string> names = preset_list(presets);
            const auto n = static_cast<unsigned>(
                to_unsigned(threads, "threads", std::numeric_limits<unsigned>::max()));
            std::vector<std::string> keys;
            std::vector<QualitySetting> values;
            for (auto [key, value] : thresholds) {
              keys.push_back(nb::cast<std::string>(key));
              values.push_back(to_setting(value));
            }
            std::vector<std::string_view> views(names.begin(), names.end());
            std::vector<std::pair<std::string_view, QualitySetting>> settings;
            for (std::size_t k = 0; k < keys.size(); ++k) settings.emplace_back(keys[k], values[k]);
            new (self) QualityFilter(views, settings, QualityFilterOptions{n});
          },
          "presets"_a = nb::make_tuple("default"), nb::kw_only(), "threads"_a = 0, "thresholds"_a,
          nb::sig("def __init__(self, presets: str | collections.abc.Sequence[str] = ('default',), "
                  "*, threads: int = 0, **thresholds: object) -> None"))
      .def_prop_ro(
          "presets",
          [](const QualityFilter& f) {
            nb::list out;
            for (const std::string_view p : f.presets()) out.append(nb::str(p.data(), p.size()));
            return nb::tuple(out);
          },
          nb::sig("def presets(self) -> tuple[str, ...]"))
      .def_prop_ro(
          "thresholds", [](const QualityFilter& f) { return settings_dict(f.thresholds()); },
          nb::sig("def thresholds(self) -> dict[str, float | int | bool | list[str] | dict[str, "
                  "float] | None]"),
          "Every setting of the selected presets (defaults and overrides), in rule order.")
      .def_prop_ro(
          "rules",
          [](const QualityFilter& f) {
            nb::list out;
            for (const std::string_view r : f.rules()) out.append(nb::str(r.data(), r.size()));
            return nb::tuple(out);
          },
          nb::sig("def rules(self) -> tuple[str, ...]"),
          "The rules that are on, in the order they are checked.")
      .def_static(
          "preset_defaults",
          [] {
            nb::dict out;
            for (const auto& [preset, settings] : QualityFilter::preset_defaults()) {
              out[nb::str(preset.data(), preset.size())] = settings_dict(settings);
            }
            return out;
          },
          nb::sig("def preset_defaults() -> dict[str, dict[str, float | int | bool | list[str] | "
                  "dict[str, float] | None]]"),
          "Every preset with its settings and their published defaults.")
      .def_static(
          "metric_names",
          [] {
            nb::list out;
            for (const std::string_view name : QualityFilter::metric_names()) {
              out.append(nb::str(name.data(), name.size()));
            }
            return nb::tuple(out);
          },
          nb::sig("def metric_names() -> tuple[str, ...]"), "The keys of metrics(), in order.")
      .def_static(
          "tokenize",
          [](nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            nb::gil_scoped_release release;
            return QualityFilter::tokenize(document);
          },
          "text"_a,
          nb::sig("def tokenize(text: str | bytes | bytearray | memoryview) -> list[str]"),
          "The word tokens every word-based metric uses (spaCy English, as datatrove).")
      .def(
          "metrics",
          [](const QualityFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            std::vector<std::pair<std::string_view, double>> values;
            std::optional<LanguageDetection> language;
            {
              nb::gil_scoped_release release;
              values = f.metrics(document);
              language = f.language_metrics(document);
            }
            nb::dict out;
            for (const auto& [name, value] : values) {
              out[nb::str(name.data(), name.size())] = nb::float_(value);
            }
            if (language) {
              out["language"] = nb::str(language->language.data(), language->language.size());
              out["language_score"] = nb::float_(language->score);
            }
            return out;
          },
          "text"_a,
          nb::sig("def metrics(self, text: str | bytes | bytearray | memoryview) -> "
                  "dict[str, float | str]"),
          "Every metric of the text (all presets, whichever are selected), by name; with the "
          "'language' preset also 'language' (CLD2 code) and 'language_score'.")
      .def(
          "check",
          [](const QualityFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            std::optional<QualityRejection> rejection;
            {
              nb::gil_scoped_release release;
              rejection = f.check(document);
            }
            return rejection_object(rejection);
          },
          "text"_a,
          nb::sig("def check(self, text: str | bytes | bytearray | memoryview) -> Rejection | "
                  "None"),
          "The first rule the text fails, or None when it passes every selected preset.")
      .def(
          "is_high_quality",
          [](const QualityFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            nb::gil_scoped_release release;
            return f.is_high_quality(document);
          },
          "text"_a,
          nb::sig("def is_high_quality(self, text: str | bytes | bytearray | memoryview) -> bool"),
          "Whether the text passes every rule of the selected presets.")
      .def(
          "clean_lines",
          [](const QualityFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            nb::gil_scoped_release release;
            return f.clean_lines(document);
          },
          "text"_a,
          nb::sig("def clean_lines(self, text: str | bytes | bytearray | memoryview) -> str"),
          "The text after C4 line removal (this filter's c4 settings), kept or not.")
      .def(
          "filter_batch",
          [](const QualityFilter& f, nb::handle texts) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            views.encode_on_pool(f.options().threads);
            views.add_batch(texts);
            // (a str's own UTF-8 is not checked again; bytes and surrogatepass text are)
            const std::span<const std::uint8_t> known_valid = views.known_valid_utf8();
            QualityBatchResult result;
            {
              nb::gil_scoped_release release;
              result = f.filter_batch(views.views(), known_valid);
            }
            PyQualityResult out;
            for (std::size_t i = 0; i < result.keep.size(); ++i) {
              out.keep.append(nb::bool_(result.keep[i] != 0));
              out.reasons.append(rejection_object(result.reasons[i]));
            }
            for (const auto& [name, count] : result.counters) {
              out.counters[nb::str(name.data(), name.size())] = nb::int_(count);
            }
            if (result.has_texts) {
              nb::list texts_out;
              for (const std::optional<std::string>& t : result.texts) {
                texts_out.append(t ? nb::object(nb::str(t->data(), t->size())) : nb::none());
              }
              out.texts = std::move(texts_out);
            } else {
              out.texts = nb::none();
            }
            return out;
          },
          "texts"_a,
          nb::sig("def filter_batch(self, texts: collections.abc.Sequence[str | bytes | bytearray "
                  "| memoryview] | typing.Any) -> QualityResult"),
          "Keep mask, first failing rule per rejected document, and counters per rule.")
      .def("__repr__", [](const QualityFilter& f) {
        std::string presets;
        for (const std::string_view p : f.presets()) {
          presets += (presets.empty() ? "'" : ", '") + std::string(p) + "'";
        }
        if (f.presets().size() == 1) presets += ",";
        return "QualityFilter(presets=(" + presets + "))";
      });
}

}  // namespace luminamoon::data::bindings
