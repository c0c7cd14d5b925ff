// Python bindings of LanguageFilter: options and documents are converted with the GIL held, then
// the GIL is released for CLD2 (one document, or the batch on the filter's worker threads).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <limits>

#include "common.h"
#include "luminamoon/data/language/language_filter.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

constexpr const char* kOwner = "LanguageFilter";

double to_score(nb::handle value, const char* param) {
  if (PyBool_Check(value.ptr()) || !(PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr()))) {
    throw_type_error(kOwner, param, "a float", value);
  }
  const double d = PyFloat_AsDouble(value.ptr());
  if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return d;
}

std::vector<std::string> to_codes(nb::handle value) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  if (PyUnicode_Check(value.ptr()) || !PySequence_Check(value.ptr())) {
    throw_type_error(kOwner, "languages", "a sequence of str or None", value);
  }
  for (nb::handle item : nb::iter(value)) out.push_back(to_str(item, kOwner, "languages"));
  return out;
}

std::vector<std::pair<std::string, double>> to_min_scores(nb::handle value) {
  std::vector<std::pair<std::string, double>> out;
  if (value.is_none()) return out;
  if (!PyDict_Check(value.ptr())) throw_type_error(kOwner, "min_scores", "a dict or None", value);
  for (auto [key, score] : nb::borrow<nb::dict>(value)) {
    out.emplace_back(to_str(key, kOwner, "min_scores"), to_score(score, "min_scores"));
  }
  return out;
}

struct PyLanguageResult {
  nb::list keep;
  nb::list reasons;
  nb::list languages;
  nb::list scores;
  nb::dict counters;
};

nb::object rejection_object(const std::optional<LanguageRejection>& rejection) {
  return rejection ? nb::cast(*rejection) : nb::none();
}

nb::str code_str(std::string_view code) { return nb::str(code.data(), code.size()); }

}  // namespace

void bind_language(nb::module_& m) {
  nb::class_<LanguageDetection>(
      m, "LanguageDetection",
      "CLD2's answer for one document: its language code ('un' = unknown), the share of its "
      "letters in that language (0..1) and CLD2's reliability flag.")
      .def_prop_ro("language", [](const LanguageDetection& d) { return std::string(d.language); })
      .def_ro("score", &LanguageDetection::score)
      .def_ro("reliable", &LanguageDetection::reliable)
      .def(
          "__eq__",
          [](const LanguageDetection& a, nb::handle b) {
            if (!nb::isinstance<LanguageDetection>(b)) return false;
            return a == nb::cast<const LanguageDetection&>(b);
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__hash__",
           [](const LanguageDetection& d) {
             return nb::hash(nb::make_tuple(code_str(d.language), d.score, d.reliable));
           })
      .def("__repr__", [](const LanguageDetection& d) {
        return nb::str("LanguageDetection(language={!r}, score={!r}, reliable={!r})")
            .format(code_str(d.language), d.score, d.reliable);
      });

  nb::class_<LanguageRejection>(
      m, "LanguageRejection",
      "Why LanguageFilter dropped a document: rule 'language' (not a wanted language; threshold "
      "NaN) or 'min_language_score' (score < threshold).")
      .def_prop_ro("rule", [](const LanguageRejection& r) { return std::string(r.rule); })
      .def_prop_ro("language", [](const LanguageRejection& r) { return std::string(r.language); })
      .def_ro("score", &LanguageRejection::score)
      .def_ro("threshold", &LanguageRejection::threshold)
      .def(
          "__eq__",
          [](const LanguageRejection& a, nb::handle other) {
            if (!nb::isinstance<LanguageRejection>(other)) return false;
            const auto& b = nb::cast<const LanguageRejection&>(other);
            return a.rule == b.rule && a.language == b.language && a.score == b.score &&
                   (a.threshold == b.threshold ||
                    (std::isnan(a.threshold) && std::isnan(b.threshold)));
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__repr__", [](const LanguageRejection& r) {
        return nb::str("LanguageRejection(rule={!r}, language={!r}, score={!r}, threshold={!r})")
            .format(code_str(r.rule), code_str(r.language), r.score, r.threshold);
      });

  nb::class_<PyLanguageResult>(
      m, "LanguageResult",
      "What LanguageFilter.filter_batch returns: keep mask, the rejection of every dropped "
      "document, every document's language and score, and counters per rule.")
      .def_ro("keep", &PyLanguageResult::keep, nb::sig("def keep(self) -> list[bool]"))
      .def_ro("reasons", &PyLanguageResult::reasons,
              nb::sig("def reasons(self) -> list[LanguageRejection | None]"))
      .def_ro("languages", &PyLanguageResult::languages,
              nb::sig("def languages(self) -> list[str]"))
      .def_ro("scores", &PyLanguageResult::scores, nb::sig("def scores(self) -> list[float]"))
      .def_ro("counters", &PyLanguageResult::counters,
              nb::sig("def counters(self) -> dict[str, int]"))
      .def("__len__", [](const PyLanguageResult& r) { return nb::len(r.keep); })
      .def("__repr__", [](const PyLanguageResult& r) {
        auto count = [&](const char* key) { return nb::cast<std::uint64_t>(r.counters[key]); };
        return "LanguageResult(total=" + std::to_string(count("total")) +
               ", kept=" + std::to_string(count("kept")) +
               ", rejected=" + std::to_string(count("rejected")) + ")";
      });

  nb::class_<LanguageFilter>(
      m, "LanguageFilter",
      "Language identification (CLD2, model compiled in) and a keep rule: the document's "
      "language is one of `languages` (None = any) and its score >= min_score (or its "
      "min_scores entry).")
      .def(
          "__init__",
          [](LanguageFilter* self, nb::handle languages, nb::handle min_score,
             nb::handle min_scores, nb::handle threads) {
            LanguageFilterOptions options;
            options.languages = to_codes(languages);
            options.min_score = to_score(min_score, "min_score");
            options.min_scores = to_min_scores(min_scores);
            options.threads = static_cast<unsigned>(
                to_unsigned(threads, "threads", std::numeric_limits<unsigned>::max()));
            new (self) LanguageFilter(std::move(options));
          },
          "languages"_a.none() = nb::none(), "min_score"_a = 0.0, nb::kw_only(),
          "min_scores"_a.none() = nb::none(), "threads"_a = 0,
          nb::sig("def __init__(self, languages: collections.abc.Sequence[str] | None = None, "
                  "min_score: float = 0.0, *, min_scores: dict[str, float] | None = None, "
                  "threads: int = 0) -> None"))
      .def_prop_ro(
          "languages",
          [](const LanguageFilter& f) -> nb::object {
            if (f.options().languages.empty()) return nb::none();
            nb::list out;
            for (const std::string& c : f.options().languages) out.append(code_str(c));
            return nb::tuple(out);
          },
          nb::sig("def languages(self) -> tuple[str, ...] | None"))
      .def_prop_ro("min_score", [](const LanguageFilter& f) { return f.options().min_score; })
      .def_prop_ro(
          "min_scores",
          [](const LanguageFilter& f) {
            nb::dict out;
            for (const auto& [code, score] : f.options().min_scores) out[code_str(code)] = score;
            return out;
          },
          nb::sig("def min_scores(self) -> dict[str, float]"))
      .def_prop_ro("threads", [](const LanguageFilter& f) { return f.options().threads; })
      .def_static(
          "known_languages",
          [] {
            nb::list out;
            for (const std::string_view c : known_language_codes()) out.append(code_str(c));
            return nb::tuple(out);
          },
          nb::sig("def known_languages() -> tuple[str, ...]"),
          "Every language code CLD2 can answer, in its enum order (duplicates once).")
      .def_static(
          "model_version", [] { return std::string(language_model_version()); },
          "CLD2's version string (code version - data build date).")
      .def(
          "detect",
          [](const LanguageFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            nb::gil_scoped_release release;
            return f.detect(document);
          },
          "text"_a,
          nb::sig("def detect(self, text: str | bytes | bytearray | memoryview) -> "
                  "LanguageDetection"),
          "CLD2's language, score and reliability for the text.")
      .def(
          "metrics",
          [](const LanguageFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            LanguageDetection d;
            {
              nb::gil_scoped_release release;
              d = f.detect(document);
            }
            nb::dict out;
            out["language"] = code_str(d.language);
            out["language_score"] = nb::float_(d.score);
            return out;
          },
          "text"_a,
          nb::sig("def metrics(self, text: str | bytes | bytearray | memoryview) -> "
                  "dict[str, str | float]"),
          "{'language': code, 'language_score': score} of the text.")
      .def(
          "check",
          [](const LanguageFilter& f, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view document = views.add(text, "text");
            std::optional<LanguageRejection> rejection;
            {
              nb::gil_scoped_release release;
              rejection = f.check(document);
            }
            return rejection_object(rejection);
          },
          "text"_a,
          nb::sig("def check(self, text: str | bytes | bytearray | memoryview) -> "
                  "LanguageRejection | None"),
          "Why the text would be dropped, or None when it is kept.")
      .def(
          "filter_batch",
          [](const LanguageFilter& f, nb::handle texts) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            views.encode_on_pool(f.options().threads);
            views.add_batch(texts);
            LanguageBatchResult result;
            {
              nb::gil_scoped_release release;
              result = f.filter_batch(views.views());
            }
            PyLanguageResult out;
            for (std::size_t i = 0; i < result.keep.size(); ++i) {
              out.keep.append(nb::bool_(result.keep[i] != 0));
              out.reasons.append(rejection_object(result.reasons[i]));
              out.languages.append(code_str(result.detections[i].language));
              out.scores.append(nb::float_(result.detections[i].score));
            }
            for (const auto& [name, count] : result.counters) {
              out.counters[code_str(name)] = nb::int_(count);
            }
            return out;
          },
          "texts"_a,
          nb::sig("def filter_batch(self, texts: collections.abc.Sequence[str | bytes | bytearray "
                  "| memoryview] | typing.Any) -> LanguageResult"),
          "Keep mask, rejections, languages and scores, counters per rule.")
      .def("__repr__", [](const LanguageFilter& f) {
        std::string langs = "None";
        if (!f.options().languages.empty()) {
          langs = "(";
          for (const std::string& c : f.options().languages) langs += "'" + c + "', ";
          langs.resize(langs.size() - 2);
          langs += f.options().languages.size() == 1 ? ",)" : ")";
        }
        return nb::str("LanguageFilter(languages={}, min_score={!r})")
            .format(langs, f.options().min_score);
      });
}

}  // namespace luminamoon::data::bindings
