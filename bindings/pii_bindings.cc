// Python bindings of the PIIMasker: options are checked with the GIL held, then the GIL is
// released for scanning and masking; documents that need no change come back as the very str
// object that went in.
#include <nanobind/stl/string.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <span>

#include "common.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/pii/pii_masker.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

// A span as Python sees it: code-point and byte offsets plus the matched text.
struct PySpan {
  std::string category;
  std::size_t start;
  std::size_t end;
  std::size_t byte_start;
  std::size_t byte_end;
  std::string text;
};

// The result of mask_batch: the masked texts and the batch's per-category counts.
struct PyMaskResult {
  nb::list texts;
  nb::dict counts;
};

bool to_bool(nb::handle value, const char* what) {
  if (!PyBool_Check(value.ptr())) {
    throw nb::type_error(
        (std::string("PIIMasker: ") + what + " must be a bool, got " + nb::repr(value).c_str())
            .c_str());
  }
  return value.ptr() == Py_True;
}

PiiCategory category_of_tag_key(nb::handle key) {
  if (!PyUnicode_Check(key.ptr())) {
    throw nb::type_error(("PIIMasker: tags keys must be category names (str), got " +
                          std::string(nb::repr(key).c_str()))
                             .c_str());
  }
  const std::string name = nb::cast<std::string>(key);
  if (auto c = pii_category_from_name(name)) return *c;
  std::vector<std::string_view> names;
  std::string upper = name, valid;
  for (char& ch : upper) {
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 32);
  }
  for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
    names.push_back(pii_category_name(static_cast<PiiCategory>(i)));
    valid += (i ? ", " : "") + std::string(names.back());
  }
  std::optional<std::string> best;
  if (pii_category_from_name(upper)) {
    best = upper;
  } else {
    best = did_you_mean(name, names);
  }
  if (best) {
    throw ConfigError("PIIMasker: unknown category '" + name + "' in tags; did you mean '" + *best +
                      "'?");
  }
  throw ConfigError("PIIMasker: unknown category '" + name +
                    "' in tags; valid categories: " + valid);
}

nb::dict counts_dict(const PiiCounts& counts) {
  nb::dict d;
  for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
    const std::string_view name = pii_category_name(static_cast<PiiCategory>(i));
    d[nb::str(name.data(), name.size())] = counts[i];
  }
  return d;
}

nb::object utf8_str(std::string_view s) {
  PyObject* obj = new_str_from_utf8(s, false);
  if (obj == nullptr) throw nb::python_error();
  return nb::steal(obj);
}

// A borrowed item of a tuple.
PyObject* tuple_item(nb::handle tuple, std::size_t i) {
#if defined(Py_LIMITED_API)
  return PyTuple_GetItem(tuple.ptr(), static_cast<Py_ssize_t>(i));
#else
  return PyTuple_GET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i));
#endif
}

// The tags as the output builders need them: as str objects, with their lengths in code points
// and (non-limited build) the largest character value their kind holds.
struct TagSet {
  std::array<nb::object, kPiiCategoryCount> str;
  std::array<std::size_t, kPiiCategoryCount> length{};
#if !defined(Py_LIMITED_API)
  std::array<Py_UCS4, kPiiCategoryCount> maxchar{};
  std::array<bool, kPiiCategoryCount> ascii{};
#endif

  explicit TagSet(const PiiMasker& masker) {
    for (std::size_t k = 0; k < kPiiCategoryCount; ++k) {
      str[k] = utf8_str(masker.options().tags[k]);
      length[k] = static_cast<std::size_t>(PyUnicode_GetLength(str[k].ptr()));
#if !defined(Py_LIMITED_API)
      maxchar[k] = PyUnicode_MAX_CHAR_VALUE(str[k].ptr());
      ascii[k] = PyUnicode_IS_ASCII(str[k].ptr());
#endif
    }
  }
};

#if !defined(Py_LIMITED_API)
// The masked document written straight into a new str, without an intermediate UTF-8 copy: the
// characters between the matches are copied from `original` (a str whose UTF-8 form is `utf8`),
// each match is replaced by its tag. Matches are ASCII, so the output keeps every non-ASCII
// character of the input: its kind is the wider of the input's and the used tags' kinds, which
// is what makes it the canonical (narrowest) form CPython requires. masked_str_new allocates the
// str (length and kind), masked_str_fill writes it; mask_batch allocates every output before
// writing any (see prefault_strs). nullptr / false with an exception set on failure.
PyObject* masked_str_new(PyObject* original, std::span<const PiiMatch> matches,
                         const TagSet& tags) {
  Py_UCS4 maxchar = PyUnicode_MAX_CHAR_VALUE(original);
  Py_ssize_t length = PyUnicode_GET_LENGTH(original);
  for (const PiiMatch& m : matches) {
    const auto k = static_cast<std::size_t>(m.category);
    maxchar = std::max(maxchar, tags.maxchar[k]);
    length += static_cast<Py_ssize_t>(tags.length[k]) -
              static_cast<Py_ssize_t>(m.byte_end - m.byte_start);
  }
  return PyUnicode_New(length, maxchar);
}

// A non-ASCII document whose output has the input's kind (the tags used are ASCII): the runs of
// characters between the matches are copied as they are, which is what PyUnicode_CopyCharacters
// does for equal kinds, without its checks and call per run (about 1.5% of mask_batch on the
// changelogs, where 29% of the bytes are in non-ASCII documents); each tag's ASCII bytes are
// widened to the kind. A match is ASCII, so its length in characters is its length in bytes.
template <typename Char>
void fill_same_kind(const PiiMasker& masker, Char* out, const Char* original, std::string_view utf8,
                    std::span<const PiiMatch> matches, std::size_t length) {
  std::size_t from = 0, to = 0, byte = 0;
  for (const PiiMatch& m : matches) {
    const std::size_t gap = utf8_code_points_of_valid(utf8.substr(byte, m.byte_start - byte));
    std::memcpy(out + to, original + from, gap * sizeof(Char));
    to += gap;
    from += gap + (m.byte_end - m.byte_start);
    for (const char c : masker.options().tags[static_cast<std::size_t>(m.category)]) {
      out[to++] = static_cast<Char>(static_cast<unsigned char>(c));
    }
    byte = m.byte_end;
  }
  std::memcpy(out + to, original + from, (length - to) * sizeof(Char));
}

bool masked_str_fill(const PiiMasker& masker, PyObject* out, PyObject* original,
                     std::string_view utf8, std::span<const PiiMatch> matches, const TagSet& tags) {
  const bool input_ascii = PyUnicode_IS_ASCII(original);
  bool tags_ascii = true;
  for (const PiiMatch& m : matches)
    tags_ascii = tags_ascii && tags.ascii[static_cast<std::size_t>(m.category)];
  if (input_ascii && tags_ascii) {
    // Everything is ASCII: characters are bytes, and the input's UTF-8 form is its buffer.
    masker.splice_valid_into(utf8, matches, reinterpret_cast<char*>(PyUnicode_1BYTE_DATA(out)));
    return true;
  }
  if (tags_ascii && PyUnicode_KIND(out) == PyUnicode_KIND(original)) {
    const auto length = static_cast<std::size_t>(PyUnicode_GET_LENGTH(out));
    switch (PyUnicode_KIND(out)) {
      case PyUnicode_1BYTE_KIND:
        fill_same_kind(masker, PyUnicode_1BYTE_DATA(out), PyUnicode_1BYTE_DATA(original), utf8,
                       matches, length);
        return true;
      case PyUnicode_2BYTE_KIND:
        fill_same_kind(masker, PyUnicode_2BYTE_DATA(out), PyUnicode_2BYTE_DATA(original), utf8,
                       matches, length);
        return true;
      case PyUnicode_4BYTE_KIND:
        fill_same_kind(masker, PyUnicode_4BYTE_DATA(out), PyUnicode_4BYTE_DATA(original), utf8,
                       matches, length);
        return true;
      default:
        break;  // no other kind: the general path below
    }
  }
  // Runs of characters are copied by CPython, which widens them to the output's kind.
  const Py_ssize_t length = PyUnicode_GET_LENGTH(out);
  Py_ssize_t from = 0, to = 0;
  std::size_t byte = 0;
  auto copy = [&](PyObject* source, Py_ssize_t at, Py_ssize_t count) {
    if (count == 0) return true;
    if (PyUnicode_CopyCharacters(out, to, source, at, count) < 0) return false;
    to += count;
    return true;
  };
  for (const PiiMatch& m : matches) {
    const auto k = static_cast<std::size_t>(m.category);
    const std::size_t gap_bytes = m.byte_start - byte;
    const auto gap = static_cast<Py_ssize_t>(
        input_ascii ? gap_bytes : utf8_code_points_of_valid(utf8.substr(byte, gap_bytes)));
    if (!copy(original, from, gap) ||
        !copy(tags.str[k].ptr(), 0, static_cast<Py_ssize_t>(tags.length[k]))) {
      return false;
    }
    from += gap + static_cast<Py_ssize_t>(m.byte_end - m.byte_start);
    byte = m.byte_end;
  }
  return copy(original, from, length - to);
}

PyObject* masked_str(const PiiMasker& masker, PyObject* original, std::string_view utf8,
                     std::span<const PiiMatch> matches, const TagSet& tags) {
  PyObject* out = masked_str_new(original, matches, tags);
  if (out == nullptr) return nullptr;
  if (!masked_str_fill(masker, out, original, utf8, matches, tags)) {
    Py_DECREF(out);
    return nullptr;
  }
  return out;
}

// Maps in the pages of freshly allocated strs before they are written, one madvise per stretch
// of adjacent strs. A batch's outputs are mostly new memory (every PII-dense document changes,
// and the heap gives the previous batch's pages back to the system when it is freed), and
// writing them page by page takes one page fault per 4 KiB: on 15 MB of masked changelogs that
// was a quarter of mask_batch. MADV_POPULATE_WRITE (Linux 5.14) maps the same pages in one
// system call, about twice as fast (the pages are still zeroed and charged; their contents do
// not change). Only pages that lie wholly inside a stretch of these strs (and the allocator's
// headers between them) are touched, and only stretches of 256 KiB or more are worth the call;
// an error (an older kernel: EINVAL) leaves the pages to be faulted in as before.
void prefault_strs(std::span<const nb::object> strs) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr std::uintptr_t kAdjacent = 64;  // at most this much between two strs
  constexpr std::uintptr_t kMinStretch = 256 * 1024;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  std::uintptr_t total = 0;
  for (const nb::object& s : strs) {
    if (!s.is_valid()) continue;
    PyObject* o = s.ptr();
    const auto begin = reinterpret_cast<std::uintptr_t>(o);
    const auto end = reinterpret_cast<std::uintptr_t>(PyUnicode_DATA(o)) +
                     static_cast<std::uintptr_t>(PyUnicode_GET_LENGTH(o) + 1) *
                         static_cast<std::uintptr_t>(PyUnicode_KIND(o));
    ranges.emplace_back(begin, end);
    total += end - begin;
  }
  if (total < kMinStretch) return;
  std::sort(ranges.begin(), ranges.end());
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  auto populate = [&](std::uintptr_t begin, std::uintptr_t end) {
    if (end - begin < kMinStretch) return;
    const std::uintptr_t first = (begin + page - 1) & ~(page - 1), last = end & ~(page - 1);
    if (last > first) {
      (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
    }
  };
  std::uintptr_t begin = ranges.front().first, end = ranges.front().second;
  for (const auto& [b, e] : ranges) {
    if (b > end + kAdjacent) {
      populate(begin, end);
      begin = b;
    }
    end = std::max(end, e);
  }
  populate(begin, end);
#else
  (void)strs;
#endif
}
#endif

// The masked document as a str. A str that needs no change comes back as the very same object;
// a changed str is written straight into the new str (non-limited build); everything else
// (bytes, Arrow, the abi3 build, which has no access to a str's buffer) is spliced into
// `scratch` as UTF-8 and decoded.
nb::object result_str(const PiiMasker& masker, nb::handle original, std::string_view input,
                      const PiiBatchMatches& found, std::size_t i, const TagSet& tags,
                      std::string& scratch) {
  const bool from_str = original.is_valid() && PyUnicode_Check(original.ptr());
  if (!found.changed(i)) {
    if (from_str) return nb::borrow(original);
    return utf8_str(input);  // unchanged means valid UTF-8
  }
#if !defined(Py_LIMITED_API)
  if (from_str) {
    PyObject* obj = masked_str(masker, original.ptr(), input, found.of(i), tags);
    if (obj == nullptr) throw nb::python_error();
    return nb::steal(obj);
  }
#else
  (void)tags;
#endif
  masker.splice(input, found.of(i), found.valid_utf8[i] != 0, scratch);
  return utf8_str(scratch);
}

}  // namespace

void bind_pii(nb::module_& m) {
  nb::class_<PySpan>(m, "PIISpan",
                     "One masked match: category, code-point and UTF-8 byte offsets, text.")
      .def(nb::init<std::string, std::size_t, std::size_t, std::size_t, std::size_t, std::string>(),
           "category"_a, "start"_a, "end"_a, "byte_start"_a, "byte_end"_a, "text"_a)
      .def_ro("category", &PySpan::category)
      .def_ro("start", &PySpan::start)
      .def_ro("end", &PySpan::end)
      .def_ro("byte_start", &PySpan::byte_start)
      .def_ro("byte_end", &PySpan::byte_end)
      .def_ro("text", &PySpan::text)
      .def(
          "__eq__",
          [](const PySpan& a, nb::handle other) -> nb::object {
            if (!nb::isinstance<PySpan>(other)) return nb::borrow(Py_NotImplemented);
            const PySpan& b = nb::cast<const PySpan&>(other);
            return nb::bool_(a.category == b.category && a.start == b.start && a.end == b.end &&
                             a.byte_start == b.byte_start && a.byte_end == b.byte_end &&
                             a.text == b.text);
          },
          nb::sig("def __eq__(self, other: object) -> bool"))
      .def("__hash__",
           [](const PySpan& s) {
             return nb::hash(
                 nb::make_tuple(s.category, s.start, s.end, s.byte_start, s.byte_end, s.text));
           })
      .def("__repr__", [](const PySpan& s) {
        return "PIISpan(category=" + std::string(nb::repr(nb::str(s.category.c_str())).c_str()) +
               ", start=" + std::to_string(s.start) + ", end=" + std::to_string(s.end) +
               ", byte_start=" + std::to_string(s.byte_start) +
               ", byte_end=" + std::to_string(s.byte_end) +
               ", text=" + nb::repr(nb::str(s.text.c_str())).c_str() + ")";
      });

  nb::class_<PyMaskResult>(m, "MaskResult",
                           "mask_batch's result: the masked texts and per-category counts.")
      .def_prop_ro(
          "texts", [](const PyMaskResult& r) { return r.texts; },
          nb::sig("def texts(self) -> list[str]"))
      .def_prop_ro(
          "counts", [](const PyMaskResult& r) { return r.counts.attr("copy")(); },
          nb::sig("def counts(self) -> dict[str, int]"))
      .def("__len__", [](const PyMaskResult& r) { return nb::len(r.texts); })
      .def(
          "__getitem__",
          [](const PyMaskResult& r, nb::handle i) { return r.texts.attr("__getitem__")(i); },
          nb::sig("def __getitem__(self, index: int) -> str"))
      .def(
          "__iter__", [](const PyMaskResult& r) { return nb::iter(r.texts); },
          nb::sig("def __iter__(self) -> collections.abc.Iterator[str]"))
      .def("__repr__", [](const PyMaskResult& r) {
        return "MaskResult(texts=<" + std::to_string(nb::len(r.texts)) +
               " texts>, counts=" + nb::repr(r.counts).c_str() + ")";
      });

  nb::class_<PiiMasker>(m, "PIIMasker",
                        "Masks e-mails, IP addresses, API keys and credit-card numbers with "
                        "validated rules (docs/pii.md).")
      .def(
          "__init__",
          [](PiiMasker* self, nb::handle email, nb::handle ip_address, nb::handle api_key,
             nb::handle credit_card, nb::handle mask_private_ips, nb::handle tags,
             nb::handle threads, const nb::kwargs& options) {
            reject_unknown_kwargs("PIIMasker", options,
                                  {"email", "ip_address", "api_key", "credit_card",
                                   "mask_private_ips", "tags", "threads"});
            PiiMaskerOptions o;
            o.enabled = {to_bool(email, "email"), to_bool(ip_address, "ip_address"),
                         to_bool(api_key, "api_key"), to_bool(credit_card, "credit_card")};
            o.mask_private_ips = to_bool(mask_private_ips, "mask_private_ips");
            o.threads = static_cast<unsigned>(
                to_unsigned(threads, "threads", std::numeric_limits<unsigned>::max()));
            if (!tags.is_none()) {
              if (!PyDict_Check(tags.ptr())) {
                throw nb::type_error(
                    ("PIIMasker: tags must be a dict of category name -> replacement str, got " +
                     std::string(nb::type_name(tags.type()).c_str()))
                        .c_str());
              }
              for (auto [key, value] : nb::borrow<nb::dict>(tags)) {
                const PiiCategory c = category_of_tag_key(key);
                if (!PyUnicode_Check(value.ptr())) {
                  throw nb::type_error(("PIIMasker: tags[" + std::string(nb::repr(key).c_str()) +
                                        "] must be a str, got " +
                                        std::string(nb::type_name(value.type()).c_str()))
                                           .c_str());
                }
                DocumentViews view;
                o.tags[static_cast<std::size_t>(c)] =
                    std::string(view.add(value, "tags[" + nb::cast<std::string>(key) + "]"));
              }
            }
            new (self) PiiMasker(std::move(o));
          },
          nb::kw_only(), "email"_a = true, "ip_address"_a = true, "api_key"_a = true,
          "credit_card"_a = true, "mask_private_ips"_a = false, "tags"_a.none() = nb::none(),
          "threads"_a = 0, "options"_a,
          nb::sig("def __init__(self, *, email: bool = True, ip_address: bool = True, "
                  "api_key: bool = True, credit_card: bool = True, mask_private_ips: bool = "
                  "False, tags: collections.abc.Mapping[str, str] | None = None, threads: int = "
                  "0, **options: object) -> None"))
      .def(
          "mask",
          [](PiiMasker& masker, nb::handle text) -> nb::object {
            DocumentViews views;
            const std::string_view input = views.add(text, "text");
            const std::uint8_t from_str = PyUnicode_Check(text.ptr()) ? 1 : 0;
            PiiBatchMatches found;
            {
              nb::gil_scoped_release release;
              masker.find_batch(std::span<const std::string_view>(&input, 1), found,
                                std::span<const std::uint8_t>(&from_str, 1));
            }
            std::string scratch;
            return result_str(masker, text, input, found, 0, TagSet(masker), scratch);
          },
          "text"_a, nb::sig("def mask(self, text: str | bytes | bytearray | memoryview) -> str"),
          "The text with every match replaced by its category's tag. Bytes are decoded as UTF-8 "
          "with U+FFFD for invalid sequences.")
      .def(
          "mask_batch",
          [](PiiMasker& masker, nb::handle texts) {
            DocumentViews views;
            views.encode_on_pool(masker.options().threads);
            // The str objects (a tuple), to return unchanged ones as they are.
            nb::object originals;
            std::vector<std::uint8_t> from_str;  // str input is valid UTF-8 by construction
            if (PyList_Check(texts.ptr()) || PyTuple_Check(texts.ptr())) {
              originals = nb::steal(PySequence_Tuple(texts.ptr()));
              if (!originals.is_valid()) throw nb::python_error();
              views.add_batch(originals);  // the same tuple: a tuple's snapshot is itself
              from_str.resize(views.views().size());
              for (std::size_t i = 0; i < from_str.size(); ++i) {
                from_str[i] = PyUnicode_Check(tuple_item(originals, i)) ? 1 : 0;
              }
            } else {
              views.add_batch(texts);
            }
            const std::vector<std::string_view>& inputs = views.views();
            PiiBatchMatches found;
            PiiCounts totals{};
            {
              nb::gil_scoped_release release;
              totals = masker.find_batch(inputs, found, from_str);
            }
            PyMaskResult result;
            PyObject* list = PyList_New(static_cast<Py_ssize_t>(inputs.size()));
            if (list == nullptr) throw nb::python_error();
            result.texts = nb::steal<nb::list>(list);
            const TagSet tags(masker);
            std::string scratch;
#if !defined(Py_LIMITED_API)
            // Changed str documents: every new str is allocated first, its pages mapped in as a
            // whole (prefault_strs), then written.
            std::vector<nb::object> fresh(originals.is_valid() ? inputs.size() : 0);
            for (std::size_t i = 0; i < fresh.size(); ++i) {
              PyObject* original = tuple_item(originals, i);
              if (!PyUnicode_Check(original) || !found.changed(i)) continue;
              fresh[i] = nb::steal(masked_str_new(original, found.of(i), tags));
              if (!fresh[i].is_valid()) throw nb::python_error();
            }
            prefault_strs(fresh);
            for (std::size_t i = 0; i < fresh.size(); ++i) {
              if (!fresh[i].is_valid()) continue;
              if (!masked_str_fill(masker, fresh[i].ptr(), tuple_item(originals, i), inputs[i],
                                   found.of(i), tags)) {
                throw nb::python_error();
              }
            }
#endif
            for (std::size_t i = 0; i < inputs.size(); ++i) {
              nb::handle original =
                  originals.is_valid() ? nb::handle(tuple_item(originals, i)) : nb::handle();
#if !defined(Py_LIMITED_API)
              nb::object s = i < fresh.size() && fresh[i].is_valid()
                                 ? std::move(fresh[i])
                                 : result_str(masker, original, inputs[i], found, i, tags, scratch);
#else
              nb::object s = result_str(masker, original, inputs[i], found, i, tags, scratch);
#endif
              PyList_SetItem(list, static_cast<Py_ssize_t>(i), s.release().ptr());
            }
            result.counts = counts_dict(totals);
            return result;
          },
          "texts"_a,
          nb::sig("def mask_batch(self, texts: collections.abc.Sequence[str | bytes | bytearray "
                  "| memoryview] | typing.Any) -> MaskResult"),
          "Masks every document (list/tuple of str or bytes, or an Arrow string/binary array) "
          "on `threads` workers with the GIL released.")
      .def(
          "find",
          [](const PiiMasker& masker, nb::handle text) {
            DocumentViews views;
            const std::string_view input = views.add(text, "text");
            std::vector<PiiSpan> spans;
            {
              nb::gil_scoped_release release;
              spans = masker.find(input);
            }
            nb::list out;
            for (const PiiSpan& s : spans) {
              out.append(PySpan{
                  std::string(pii_category_name(s.category)), s.start, s.end, s.byte_start,
                  s.byte_end, std::string(input.substr(s.byte_start, s.byte_end - s.byte_start))});
            }
            return out;
          },
          "text"_a,
          nb::sig("def find(self, text: str | bytes | bytearray | memoryview) -> list[PIISpan]"),
          "Every match, in text order: what mask() would replace.")
      .def_prop_ro(
          "counts", [](const PiiMasker& masker) { return counts_dict(masker.counts()); },
          nb::sig("def counts(self) -> dict[str, int]"),
          "Per-category counts of the last mask() or mask_batch() call.")
      .def(
          "stats",
          [](const PiiMasker& masker) {
            const PiiStats s = masker.stats();
            nb::dict d;
            d["documents"] = s.documents;
            d["bytes"] = s.bytes;
            d.update(counts_dict(s.counts));
            return d;
          },
          nb::sig("def stats(self) -> dict[str, int]"),
          "Cumulative documents, bytes and per-category counts over every mask()/mask_batch().")
      .def("reset_stats", &PiiMasker::reset_stats, "Zero stats() and counts.")
      .def_prop_ro(
          "tags",
          [](const PiiMasker& masker) {
            nb::dict d;
            for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
              const std::string_view name = pii_category_name(static_cast<PiiCategory>(i));
              d[nb::str(name.data(), name.size())] = utf8_str(masker.options().tags[i]);
            }
            return d;
          },
          nb::sig("def tags(self) -> dict[str, str]"))
      .def_prop_ro(
          "categories",
          [](const PiiMasker& masker) {
            nb::list l;
            for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
              if (!masker.options().enabled[i]) continue;
              const std::string_view name = pii_category_name(static_cast<PiiCategory>(i));
              l.append(nb::str(name.data(), name.size()));
            }
            return nb::tuple(l);
          },
          nb::sig("def categories(self) -> tuple[str, ...]"), "The enabled categories.")
      .def_prop_ro("mask_private_ips",
                   [](const PiiMasker& masker) { return masker.options().mask_private_ips; })
      .def_prop_ro("threads", [](const PiiMasker& masker) { return masker.options().threads; })
      .def("__repr__", [](const PiiMasker& masker) {
        std::string cats;
        for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
          if (!masker.options().enabled[i]) continue;
          cats += (cats.empty() ? "'" : ", '") +
                  std::string(pii_category_name(static_cast<PiiCategory>(i))) + "'";
        }
        return "PIIMasker(categories=(" + cats +
               (cats.find(',') == std::string::npos && !cats.empty() ? ",)" : ")") +
               ", mask_private_ips=" + (masker.options().mask_private_ips ? "True" : "False") + ")";
      });
}

}  // namespace luminamoon::data::bindings
