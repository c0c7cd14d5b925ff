// Python bindings of StreamDeduplicator: inputs become string views with the GIL held, then the
// GIL is released for hashing and probing.
#include <nanobind/stl/string.h>

#include <limits>

#include "common.h"
#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

nb::list to_bool_list(const std::vector<std::uint8_t>& keep) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(keep.size()));
  if (list == nullptr) throw nb::python_error();
  for (std::size_t i = 0; i < keep.size(); ++i) {
    PyObject* value = keep[i] ? Py_True : Py_False;
    Py_INCREF(value);
    PyList_SetItem(list, static_cast<Py_ssize_t>(i), value);  // steals; abi3 has no macro
  }
  return nb::steal<nb::list>(list);
}

}  // namespace

void bind_dedup(nb::module_& m) {
  nb::class_<StreamDeduplicator>(
      m, "StreamDeduplicator",
      "Exact dedup by XXH3-64 in SwissTable sets, staged until commit (SPEC 3.3).")
      .def(
          "__init__",
          [](StreamDeduplicator* self, nb::handle tracker_arg, nb::handle threads,
             const nb::kwargs& options) {
            reject_unknown_kwargs("StreamDeduplicator", options, {"tracker", "threads"});
            const auto n = static_cast<unsigned>(
                to_unsigned(threads, "threads", std::numeric_limits<unsigned>::max()));
            StateTracker* tracker = to_instance<StateTracker>(tracker_arg, "StreamDeduplicator",
                                                              "tracker", "StateTracker", true);
            nb::gil_scoped_release release;
            new (self) StreamDeduplicator(tracker, StreamDeduplicatorOptions{n});
          },
          "tracker"_a.none() = nb::none(), nb::kw_only(), "threads"_a.none() = 0, "options"_a,
          nb::keep_alive<1, 2>(),
          nb::sig("def __init__(self, tracker: StateTracker | None = None, *, threads: int = 0, "
                  "**options: object) -> None"))
      .def(
          "is_unique",
          [](StreamDeduplicator& d, nb::handle text) {
            DocumentViews views;
            return d.is_unique(views.add(text, "text"));
          },
          "text"_a,
          nb::sig("def is_unique(self, text: str | bytes | bytearray | memoryview) -> bool"),
          "True (and staged) when the document was not seen before.")
      .def(
          "contains",
          [](const StreamDeduplicator& d, nb::handle text) {
            DocumentViews views;
            return d.contains(views.add(text, "text"));
          },
          "text"_a,
          nb::sig("def contains(self, text: str | bytes | bytearray | memoryview) -> bool"),
          "Whether the document is committed or staged; stages nothing.")
      .def(
          "filter_batch",
          [](StreamDeduplicator& d, nb::handle texts) {
            DocumentViews views;
            views.defer_encoding();  // a str that is not ASCII: encoded and hashed on the pool
            views.add_batch(texts);
            const std::size_t n = views.views().size();
            std::vector<std::uint8_t> keep(n);
            std::size_t first_invalid = 0;
            {
              nb::gil_scoped_release release;
              std::vector<std::uint64_t> hashes(n);
              hash_documents(views.views(), hashes, d.options().threads);
              const std::vector<CodeUnits>& deferred = views.deferred_units();
              std::vector<std::uint64_t> deferred_hashes(deferred.size());
              first_invalid = hash_code_units(deferred, deferred_hashes, d.options().threads);
              for (std::size_t k = 0; k < deferred.size(); ++k) {
                hashes[views.deferred_views()[k]] = deferred_hashes[k];
              }
              // A str that UTF-8 cannot hold: the error below, and nothing staged.
              if (first_invalid == Utf8Encoded::npos) d.filter_hashes(hashes, keep);
            }
            views.check_deferred(first_invalid);
            return to_bool_list(keep);
          },
          "texts"_a,
          nb::sig("def filter_batch(self, texts: collections.abc.Sequence[str | bytes | bytearray "
                  "| memoryview] | typing.Any) -> list[bool]"),
          "Keep mask: first occurrence wins, also within the batch; kept documents are staged.")
      .def("commit", &StreamDeduplicator::commit, nb::call_guard<nb::gil_scoped_release>(),
           "Attached: the tracker's commit (WAL, slot, RAM). Detached: staged -> committed.")
      .def("rollback", &StreamDeduplicator::rollback, nb::call_guard<nb::gil_scoped_release>(),
           "Attached: the tracker's rollback. Detached: drop staged hashes.")
      .def("limit_next_commit", &StreamDeduplicator::limit_next_commit, "count"_a,
           "The next commit of the attached tracker writes and promotes only the first "
           "count staged hashes; the rest stay staged. Cleared by that commit and by a "
           "rollback.")
      .def_prop_ro("staged_count", &StreamDeduplicator::staged_count)
      .def_prop_ro("committed_count", &StreamDeduplicator::committed_count)
      .def_prop_ro("tracker", &StreamDeduplicator::tracker, nb::rv_policy::reference,
                   nb::sig("def tracker(self) -> StateTracker | None"))
      .def("memory_bytes", &StreamDeduplicator::memory_bytes,
           "Bytes held by the hash sets and the staging log (capacity, not size).")
      .def("__len__", &StreamDeduplicator::size)
      .def("__repr__", [](const StreamDeduplicator& d) {
        return "StreamDeduplicator(committed=" + std::to_string(d.committed_count()) +
               ", staged=" + std::to_string(d.staged_count()) +
               (d.tracker() != nullptr ? ", attached" : "") + ")";
      });
}

}  // namespace luminamoon::data::bindings
