// Python bindings of TextCleaner: documents become string views with the GIL held (no Python
// object per string for Arrow input), cleaning runs with the GIL released, and the results are
// turned into str objects straight from the UTF-8 buffers.
#include <nanobind/stl/string.h>

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "common.h"
#include "luminamoon/data/cleaner/text_cleaner.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

// Below this size a single clean() keeps the GIL: releasing it costs more than the work.
constexpr std::size_t kReleaseGilBytes = 64 * 1024;

constexpr const char* kFlagNames[] = {"repair_utf8",
                                      "normalize_newlines",
                                      "remove_controls",
                                      "strip_trailing_spaces",
                                      "limit_newlines",
                                      "strip",
                                      "nfc"};

bool to_bool(nb::handle value, const char* what) {
  if (value.ptr() == Py_True) return true;
  if (value.ptr() == Py_False) return false;
  throw nb::type_error(
      (std::string("TextCleaner: ") + what + " must be a bool, got " + nb::repr(value).c_str())
          .c_str());
}

// Step 4 from `whitespace` (None = the default) and the deprecated `collapse_whitespace` alias
// (True = collapse, False = keep); the same rules and messages as the fallback.
Whitespace whitespace_of(nb::handle whitespace, nb::handle collapse_whitespace) {
  if (!whitespace.is_none() && !nb::isinstance<nb::str>(whitespace)) {
    throw nb::type_error(
        (std::string("TextCleaner: whitespace must be a str, got ") + nb::repr(whitespace).c_str())
            .c_str());
  }
  if (collapse_whitespace.is_none()) {
    return whitespace.is_none() ? Whitespace::kPreserveIndent
                                : parse_whitespace(nb::cast<std::string>(whitespace));
  }
  const bool collapse = to_bool(collapse_whitespace, "collapse_whitespace");
  if (!whitespace.is_none()) {
    throw ConfigError(
        "TextCleaner: pass either whitespace or the deprecated collapse_whitespace, not both");
  }
  if (PyErr_WarnEx(PyExc_DeprecationWarning,
                   "TextCleaner: collapse_whitespace is deprecated; use whitespace='collapse' "
                   "(for True) or whitespace='keep' (for False)",
                   1) != 0) {
    throw nb::python_error();
  }
  return collapse ? Whitespace::kCollapse : Whitespace::kKeep;
}

nb::str to_str(const std::string& text) {
  PyObject* s = new_str_from_utf8(text, true);  // the cleaner's output is valid UTF-8
  if (s == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(s);
}

// Frees each std::string as soon as its str exists, so peak memory is one copy plus one string.
nb::list to_str_list(std::vector<std::string>& texts) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(texts.size()));
  if (list == nullptr) throw nb::python_error();
  nb::list result = nb::steal<nb::list>(list);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    nb::str s = to_str(texts[i]);
    std::string().swap(texts[i]);
    PyList_SetItem(list, static_cast<Py_ssize_t>(i), s.release().ptr());  // steals; abi3-safe
  }
  return result;
}

using Flags = std::array<bool, std::size(kFlagNames)>;

Flags flags_of(const TextCleanerOptions& o) {
  return {o.repair_utf8,
          o.normalize_newlines,
          o.remove_controls,
          o.strip_trailing_spaces,
          o.limit_newlines,
          o.strip,
          o.nfc};
}

TextCleanerOptions options_of(const Flags& f, Whitespace whitespace, unsigned threads) {
  return {.repair_utf8 = f[0],
          .normalize_newlines = f[1],
          .remove_controls = f[2],
          .whitespace = whitespace,
          .strip_trailing_spaces = f[3],
          .limit_newlines = f[4],
          .strip = f[5],
          .nfc = f[6],
          .threads = threads};
}

nb::dict options_dict(const TextCleanerOptions& options) {
  const Flags flags = flags_of(options);
  nb::dict d;
  for (std::size_t i = 0; i < flags.size(); ++i) d[kFlagNames[i]] = flags[i];
  d["whitespace"] = std::string(whitespace_name(options.whitespace));
  d["threads"] = options.threads;
  return d;
}

// Same text as the fallback's repr: the options that differ from the defaults.
std::string repr(const TextCleaner& c) {
  const Flags flags = flags_of(c.options());
  const Flags defaults = flags_of(TextCleanerOptions{});
  std::string parts;
  auto add = [&](const std::string& part) { parts += (parts.empty() ? "" : ", ") + part; };
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] != defaults[i]) add(std::string(kFlagNames[i]) + (flags[i] ? "=True" : "=False"));
  }
  if (c.options().whitespace != Whitespace::kPreserveIndent) {
    add("whitespace='" + std::string(whitespace_name(c.options().whitespace)) + "'");
  }
  if (c.options().threads != 0) add("threads=" + std::to_string(c.options().threads));
  return "TextCleaner(" + parts + ")";
}

}  // namespace

void bind_cleaner(nb::module_& m) {
  nb::class_<TextCleaner>(
      m, "TextCleaner",
      "UTF-8 repair, newline/control/whitespace normalisation and optional NFC; the steps, "
      "character sets and counters are specified in docs/cleaner.md.")
      .def(
          "__init__",
          [](TextCleaner* self, nb::handle repair_utf8, nb::handle normalize_newlines,
             nb::handle remove_controls, nb::handle whitespace, nb::handle strip_trailing_spaces,
             nb::handle limit_newlines, nb::handle strip, nb::handle nfc, nb::handle threads,
             nb::handle collapse_whitespace, const nb::kwargs& options) {
            reject_unknown_kwargs("TextCleaner", options,
                                  {"repair_utf8", "normalize_newlines", "remove_controls",
                                   "whitespace", "strip_trailing_spaces", "limit_newlines", "strip",
                                   "nfc", "threads", "collapse_whitespace"});
            const nb::handle given[] = {repair_utf8,
                                        normalize_newlines,
                                        remove_controls,
                                        strip_trailing_spaces,
                                        limit_newlines,
                                        strip,
                                        nfc};
            Flags flags{};
            for (std::size_t i = 0; i < flags.size(); ++i) {
              flags[i] = to_bool(given[i], kFlagNames[i]);
            }
            const Whitespace mode = whitespace_of(whitespace, collapse_whitespace);
            const auto n = static_cast<unsigned>(
                to_unsigned(threads, "threads", std::numeric_limits<unsigned>::max()));
            const TextCleanerOptions o = options_of(flags, mode, n);
            new (self) TextCleaner(o);
          },
          nb::kw_only(), "repair_utf8"_a.none() = true, "normalize_newlines"_a.none() = true,
          "remove_controls"_a.none() = true, "whitespace"_a.none() = nb::none(),
          "strip_trailing_spaces"_a.none() = true, "limit_newlines"_a.none() = true,
          "strip"_a.none() = true, "nfc"_a.none() = false, "threads"_a.none() = 0,
          "collapse_whitespace"_a.none() = nb::none(), "options"_a,
          nb::sig("def __init__(self, *, repair_utf8: bool = True, normalize_newlines: bool = "
                  "True, remove_controls: bool = True, whitespace: str = 'preserve_indent', "
                  "strip_trailing_spaces: bool = True, limit_newlines: bool = True, strip: bool = "
                  "True, nfc: bool = False, threads: int = 0, collapse_whitespace: bool | None = "
                  "None, **options: object) -> None"))
      .def(
          "clean",
          [](TextCleaner& c, nb::handle text) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            const std::string_view view = views.add(text, "text");
            std::string out;
            if (view.size() >= kReleaseGilBytes) {
              nb::gil_scoped_release release;
              out = c.clean(view);
            } else {
              out = c.clean(view);
            }
            return to_str(out);
          },
          "text"_a, nb::sig("def clean(self, text: str | bytes | bytearray | memoryview) -> str"),
          "The cleaned text. bytes may be invalid UTF-8; a str is read as its UTF-8 encoding "
          "with 'surrogatepass' (a lone surrogate is repaired like the invalid bytes it encodes "
          "to).")
      .def(
          "clean_batch",
          [](TextCleaner& c, nb::handle texts) {
            DocumentViews views(DocumentViews::LoneSurrogates::kSurrogatepass);
            views.encode_on_pool(c.options().threads);
            views.add_batch(texts);
            std::vector<std::string> out;
            {
              nb::gil_scoped_release release;
              out = c.clean_batch(views.views());
            }
            return to_str_list(out);
          },
          "texts"_a,
          nb::sig("def clean_batch(self, texts: collections.abc.Sequence[str | bytes | bytearray "
                  "| memoryview] | typing.Any) -> list[str]"),
          "Every document cleaned, in order, on `threads` workers with the GIL released. texts: "
          "a list/tuple of str/bytes-like, or an Arrow utf8/large_utf8/utf8_view/binary/"
          "large_binary/binary_view array or stream.")
      .def(
          "stats",
          [](const TextCleaner& c) {
            nb::dict d;
            c.stats().for_each([&](const char* name, std::uint64_t value) { d[name] = value; });
            return d;
          },
          nb::sig("def stats(self) -> dict[str, int]"),
          "Counters since construction or reset_stats() (docs/cleaner.md).")
      .def("reset_stats", &TextCleaner::reset_stats, "Zero every counter.")
      .def_prop_ro(
          "options", [](const TextCleaner& c) { return options_dict(c.options()); },
          nb::sig("def options(self) -> dict[str, bool | int | str]"),
          "The effective options, every one of them (defaults included).")
      .def("__repr__", &repr);
}

}  // namespace luminamoon::data::bindings
