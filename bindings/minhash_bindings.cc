// Python bindings of MinHashDeduplicator: argument checks with the fallback's wording and error
// classes, inputs as string views taken with the GIL held, then the GIL released for hashing,
// querying and disk work.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <array>
#include <cmath>
#include <limits>

#include "common.h"
#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/minhash/minhash_deduplicator.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

constexpr std::array<std::string_view, 2> kShingleNames = {"word", "char"};

nb::list bool_list(const std::vector<std::uint8_t>& keep) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(keep.size()));
  if (list == nullptr) throw nb::python_error();
  for (std::size_t i = 0; i < keep.size(); ++i) {
    PyObject* value = keep[i] ? Py_True : Py_False;
    Py_INCREF(value);
    PyList_SetItem(list, static_cast<Py_ssize_t>(i), value);  // steals; abi3 has no macro
  }
  return nb::steal<nb::list>(list);
}

template <typename T>
nb::list int_list(const std::vector<T>& values) {
  nb::list out;
  for (const T v : values) out.append(v);
  return out;
}

std::uint64_t in_range(nb::handle value, const char* what, std::uint64_t lo, std::uint64_t hi) {
  bool ok = PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr());
  unsigned long long v = 0;
  if (ok) {
    v = PyLong_AsUnsignedLongLong(value.ptr());
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();  // negative, or above 2^64 - 1
      ok = false;
    }
  }
  if (!ok || v < lo || v > hi) {
    throw nb::value_error((std::string("MinHashDeduplicator: ") + what + " must be an int in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                           nb::repr(value).c_str())
                              .c_str());
  }
  return v;
}

double threshold_of(nb::handle value) {
  const bool number =
      (PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr())) && !PyBool_Check(value.ptr());
  const double t = number ? PyFloat_AsDouble(value.ptr()) : std::nan("");
  if (PyErr_Occurred()) PyErr_Clear();
  if (!(t > 0.0 && t <= 1.0)) {
    throw nb::value_error((std::string("MinHashDeduplicator: threshold must be a number in (0, "
                                       "1], got ") +
                           nb::repr(value).c_str())
                              .c_str());
  }
  return t;
}

ShingleKind shingle_of(nb::handle value) {
  if (!PyUnicode_Check(value.ptr())) {
    throw nb::type_error((std::string("MinHashDeduplicator: shingle must be 'word' or 'char', "
                                      "got ") +
                          nb::type_name(value.type()).c_str())
                             .c_str());
  }
  const std::string name = nb::cast<std::string>(value);
  if (name == "word") return ShingleKind::kWord;
  if (name == "char") return ShingleKind::kChar;
  std::string message = "MinHashDeduplicator: unknown shingle '" + name + "'";
  if (auto best = did_you_mean(name, kShingleNames)) {
    message += "; did you mean '" + *best + "'?";
  } else {
    message += "; valid shingles: word, char";
  }
  throw ConfigError(message);
}

}  // namespace

void bind_minhash(nb::module_& m) {
  nb::class_<MinHashDeduplicator>(
      m, "MinHashDeduplicator",
      "Near-duplicate detection: MinHash signatures, LSH banding, candidates verified against "
      "the signature estimate; staged until commit, persisted next to a StateTracker.")
      .def(
          "__init__",
          [](MinHashDeduplicator* self, nb::handle tracker_arg, nb::handle num_perm,
             nb::handle threshold, nb::handle bands, nb::handle rows, nb::handle shingle,
             nb::handle ngram, nb::handle seed, nb::handle store_signatures, nb::handle threads,
             const nb::kwargs& options) {
            reject_unknown_kwargs("MinHashDeduplicator", options,
                                  {"tracker", "num_perm", "threshold", "bands", "rows", "shingle",
                                   "ngram", "seed", "store_signatures", "threads"});
            MinHashOptions o;
            o.config.num_perm =
                static_cast<std::uint32_t>(in_range(num_perm, "num_perm", 1, kMaxNumPerm));
            o.threshold = threshold_of(threshold);
            o.bands = bands.is_none()
                          ? 0
                          : static_cast<std::uint32_t>(in_range(bands, "bands", 1, kMaxNumPerm));
            o.rows = rows.is_none()
                         ? 0
                         : static_cast<std::uint32_t>(in_range(rows, "rows", 1, kMaxNumPerm));
            o.config.shingle = shingle_of(shingle);
            o.config.ngram = static_cast<std::uint32_t>(in_range(ngram, "ngram", 1, kMaxNgram));
            o.config.seed = in_range(seed, "seed", 0, std::numeric_limits<std::uint64_t>::max());
            if (!PyBool_Check(store_signatures.ptr())) {
              throw nb::type_error(
                  (std::string("MinHashDeduplicator: store_signatures must be a bool, got ") +
                   nb::type_name(store_signatures.type()).c_str())
                      .c_str());
            }
            o.store_signatures = store_signatures.ptr() == Py_True;
            o.threads = static_cast<unsigned>(
                in_range(threads, "threads", 0, std::numeric_limits<unsigned>::max()));
            StateTracker* tracker = to_instance<StateTracker>(tracker_arg, "MinHashDeduplicator",
                                                              "tracker", "StateTracker", true);
            nb::gil_scoped_release release;
            new (self) MinHashDeduplicator(tracker, o);
          },
          "tracker"_a.none() = nb::none(), nb::kw_only(), "num_perm"_a.none() = 64,
          "threshold"_a.none() = 0.8, "bands"_a.none() = nb::none(), "rows"_a.none() = nb::none(),
          "shingle"_a.none() = "word", "ngram"_a.none() = 5, "seed"_a.none() = kDefaultMinHashSeed,
          "store_signatures"_a.none() = false, "threads"_a.none() = 0, "options"_a,
          nb::keep_alive<1, 2>(),
          nb::sig("def __init__(self, tracker: StateTracker | None = None, *, num_perm: int = 64, "
                  "threshold: float = 0.8, bands: int | None = None, rows: int | None = None, "
                  "shingle: str = 'word', ngram: int = 5, seed: int = 1, "
                  "store_signatures: bool = False, threads: int = 0, **options: object) -> None"))
      .def(
          "is_unique",
          [](MinHashDeduplicator& d, nb::handle text) {
            DocumentViews views;
            const std::string_view view = views.add(text, "text");
            nb::gil_scoped_release release;
            return d.is_unique(view);
          },
          "text"_a,
          nb::sig("def is_unique(self, text: str | bytes | bytearray | memoryview) -> bool"),
          "True (and staged) when no indexed document is a verified near-duplicate of text.")
      .def(
          "filter_batch",
          [](MinHashDeduplicator& d, nb::handle texts) {
            DocumentViews views;
            views.defer_encoding();  // a str that is not ASCII: encoded where it is hashed
            views.add_batch(texts);
            const std::vector<PendingUtf8> pending = views.pending();
            std::vector<std::uint8_t> keep(views.views().size());
            std::size_t first_invalid = 0;
            {
              nb::gil_scoped_release release;
              // A str that UTF-8 cannot hold: the error below, and nothing staged.
              first_invalid = d.filter_batch(views.views(), pending, keep);
            }
            views.check_deferred(first_invalid);
            return bool_list(keep);
          },
          "texts"_a,
          nb::sig("def filter_batch(self, texts: collections.abc.Sequence[str | bytes | bytearray "
                  "| memoryview] | typing.Any) -> list[bool]"),
          "Keep mask: the first of each group of near-duplicates wins, also within the batch; "
          "kept documents are staged.")
      .def(
          "signature",
          [](const MinHashDeduplicator& d, nb::handle text) {
            DocumentViews views;
            const std::string_view view = views.add(text, "text");
            std::vector<std::uint32_t> sig;
            {
              nb::gil_scoped_release release;
              sig = d.hasher().signature(view);
            }
            return int_list(sig);
          },
          "text"_a,
          nb::sig("def signature(self, text: str | bytes | bytearray | memoryview) -> list[int]"),
          "The num_perm MinHash values (u32) of text.")
      .def(
          "signatures",
          [](const MinHashDeduplicator& d, nb::handle texts) {
            DocumentViews views;
            views.defer_encoding();  // a str that is not ASCII: encoded where it is hashed
            views.add_batch(texts);
            const std::vector<PendingUtf8> pending = views.pending();
            const std::size_t n = views.views().size();
            const std::size_t p = d.options().config.num_perm;
            auto* values = new std::vector<std::uint32_t>(n * p);
            nb::capsule owner(values, [](void* q) noexcept {
              delete static_cast<std::vector<std::uint32_t>*>(q);
            });
            std::size_t first_invalid = 0;
            {
              nb::gil_scoped_release release;
              first_invalid =
                  d.hasher().signatures(views.views(), pending, *values, d.options().threads, {});
            }
            views.check_deferred(first_invalid);
            static std::uint32_t empty = 0;
            const std::size_t shape[2] = {n, p};
            return nb::ndarray<nb::numpy, std::uint32_t, nb::ndim<2>>(
                values->empty() ? &empty : values->data(), 2, shape, owner);
          },
          "texts"_a,
          nb::sig("def signatures(self, texts: collections.abc.Sequence[str | bytes | bytearray | "
                  "memoryview] | typing.Any) -> numpy.typing.NDArray[numpy.uint32]"),
          "Signatures of a batch as a (len(texts), num_perm) uint32 NumPy array, computed on "
          "`threads` workers; needs numpy.")
      .def(
          "similarity",
          [](const MinHashDeduplicator& d, nb::handle a, nb::handle b) {
            DocumentViews views;
            const std::string_view va = views.add(a, "a");
            const std::string_view vb = views.add(b, "b");
            nb::gil_scoped_release release;
            return estimate_similarity(d.hasher().signature(va), d.hasher().signature(vb));
          },
          "a"_a, "b"_a,
          nb::sig("def similarity(self, a: str | bytes | bytearray | memoryview, b: str | bytes | "
                  "bytearray | memoryview) -> float"),
          "Estimated Jaccard similarity: the fraction of equal signature values.")
      .def(
          "jaccard",
          [](const MinHashDeduplicator& d, nb::handle a, nb::handle b) {
            DocumentViews views;
            const std::string_view va = views.add(a, "a");
            const std::string_view vb = views.add(b, "b");
            nb::gil_scoped_release release;
            return shingle_jaccard(d.hasher(), va, vb);
          },
          "a"_a, "b"_a,
          nb::sig("def jaccard(self, a: str | bytes | bytearray | memoryview, b: str | bytes | "
                  "bytearray | memoryview) -> float"),
          "Exact Jaccard similarity of the two shingle sets (1.0 when both are empty).")
      .def(
          "query",
          [](const MinHashDeduplicator& d, nb::handle text, bool verify) {
            DocumentViews views;
            const std::string_view view = views.add(text, "text");
            std::vector<std::uint64_t> ids;
            {
              nb::gil_scoped_release release;
              ids = d.query(view, verify);
            }
            return int_list(ids);
          },
          "text"_a, nb::kw_only(), "verify"_a = true,
          nb::sig("def query(self, text: str | bytes | bytearray | memoryview, *, verify: bool = "
                  "True) -> list[int]"),
          "Ids (indexing order, committed first) of indexed documents that are verified "
          "near-duplicates of text, or with verify=False every LSH candidate; stages nothing.")
      .def(
          "cluster",
          [](const MinHashDeduplicator& d, nb::handle texts) {
            DocumentViews views;
            views.defer_encoding();  // a str that is not ASCII: encoded where it is hashed
            views.add_batch(texts);
            const std::vector<PendingUtf8> pending = views.pending();
            std::vector<std::uint64_t> ids;
            std::size_t first_invalid = 0;
            {
              nb::gil_scoped_release release;
              ids = d.cluster(views.views(), pending, first_invalid);
            }
            views.check_deferred(first_invalid);
            return int_list(ids);
          },
          "texts"_a,
          nb::sig("def cluster(self, texts: collections.abc.Sequence[str | bytes | bytearray | "
                  "memoryview] | typing.Any) -> list[int]"),
          "Offline: the cluster id of every document (the index of its cluster's first "
          "document); keep texts[i] where result[i] == i. Touches no state.")
      .def("commit", &MinHashDeduplicator::commit, nb::call_guard<nb::gil_scoped_release>(),
           "Attached: the tracker's commit (WAL, index records, slot, RAM). Detached: staged -> "
           "committed.")
      .def("rollback", &MinHashDeduplicator::rollback, nb::call_guard<nb::gil_scoped_release>(),
           "Attached: the tracker's rollback. Detached: drop the staged documents.")
      .def("limit_next_commit", &MinHashDeduplicator::limit_next_commit, "count"_a,
           "The next commit of the attached tracker writes and promotes only the first "
           "count staged rows; the rest stay staged. Cleared by that commit and by a "
           "rollback.")
      .def_prop_ro("staged_count", &MinHashDeduplicator::staged_count)
      .def_prop_ro("committed_count", &MinHashDeduplicator::committed_count)
      .def_prop_ro("tracker", &MinHashDeduplicator::tracker, nb::rv_policy::reference,
                   nb::sig("def tracker(self) -> StateTracker | None"))
      .def_prop_ro("num_perm",
                   [](const MinHashDeduplicator& d) { return d.options().config.num_perm; })
      .def_prop_ro("threshold", [](const MinHashDeduplicator& d) { return d.options().threshold; })
      .def_prop_ro("bands", [](const MinHashDeduplicator& d) { return d.shape().bands; })
      .def_prop_ro("rows", [](const MinHashDeduplicator& d) { return d.shape().rows; })
      .def_prop_ro(
          "shingle",
          [](const MinHashDeduplicator& d) {
            return std::string(d.options().config.shingle == ShingleKind::kWord ? "word" : "char");
          })
      .def_prop_ro("ngram", [](const MinHashDeduplicator& d) { return d.options().config.ngram; })
      .def_prop_ro("seed", [](const MinHashDeduplicator& d) { return d.options().config.seed; })
      .def_prop_ro("store_signatures",
                   [](const MinHashDeduplicator& d) { return d.options().store_signatures; })
      .def_prop_ro("value_bits", &MinHashDeduplicator::value_bits)
      .def_prop_ro("min_matches", &MinHashDeduplicator::min_matches)
      .def("memory_bytes", &MinHashDeduplicator::memory_bytes,
           "Bytes held by the index: rows and band tables (capacity, not size).")
      .def("__len__", &MinHashDeduplicator::size)
      .def("__repr__", [](const MinHashDeduplicator& d) {
        return "MinHashDeduplicator(num_perm=" + std::to_string(d.options().config.num_perm) +
               ", bands=" + std::to_string(d.shape().bands) +
               ", rows=" + std::to_string(d.shape().rows) +
               ", committed=" + std::to_string(d.committed_count()) +
               ", staged=" + std::to_string(d.staged_count()) +
               (d.tracker() != nullptr ? ", attached" : "") + ")";
      });
}

}  // namespace luminamoon::data::bindings
