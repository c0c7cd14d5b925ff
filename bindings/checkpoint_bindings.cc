// Python bindings of StreamCoordinate and StateTracker (luminamoon.data.checkpoint in the docs).
#include <nanobind/stl/string.h>

#include <limits>

#include "common.h"
#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/checkpoint/stream_coordinate.h"
#include "luminamoon/data/common/error.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

namespace {

constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kU64 = std::numeric_limits<std::uint64_t>::max();

void set_field(StreamCoordinate& c, std::string_view name, nb::handle value) {
  if (name == "shard_id") {
    c.shard_id = static_cast<std::uint32_t>(to_unsigned(value, "shard_id", kU32));
  } else if (name == "byte_offset") {
    c.byte_offset = to_unsigned(value, "byte_offset", kU64);
  } else if (name == "row_group_idx") {
    c.row_group_idx = static_cast<std::uint32_t>(to_unsigned(value, "row_group_idx", kU32));
  } else if (name == "page_idx") {
    c.page_idx = static_cast<std::uint32_t>(to_unsigned(value, "page_idx", kU32));
  } else if (name == "row_offset_in_page") {
    c.row_offset_in_page =
        static_cast<std::uint32_t>(to_unsigned(value, "row_offset_in_page", kU32));
  } else if (name == "global_row_idx") {
    c.global_row_idx = to_unsigned(value, "global_row_idx", kU64);
  }
}

nb::bytes coordinate_bytes(const StreamCoordinate& c) {
  const auto raw = c.to_bytes();
  return nb::bytes(reinterpret_cast<const char*>(raw.data()), raw.size());
}

StreamCoordinate coordinate_from_python(nb::handle data) {
  if (PyUnicode_Check(data.ptr()) || !PyObject_CheckBuffer(data.ptr())) {
    throw nb::value_error(("StreamCoordinate.from_bytes: expected 32 bytes (a bytes-like "
                           "object), got " +
                           std::string(nb::type_name(data.type()).c_str()))
                              .c_str());
  }
  Py_buffer buffer;
  if (PyObject_GetBuffer(data.ptr(), &buffer, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw nb::value_error(
        "StreamCoordinate.from_bytes: expected 32 bytes in a contiguous bytes-like object");
  }
  try {
    StreamCoordinate c = StreamCoordinate::from_bytes(
        {static_cast<const std::uint8_t*>(buffer.buf), static_cast<std::size_t>(buffer.len)});
    PyBuffer_Release(&buffer);
    return c;
  } catch (...) {
    PyBuffer_Release(&buffer);
    throw;
  }
}

const char* slot_name(int slot) { return slot == 0 ? "A" : "B"; }

nb::object active_slot_object(const StateTracker& t) {
  const int slot = t.active_slot();
  if (slot < 0) return nb::none();
  return nb::str(slot_name(slot));
}

}  // namespace

void bind_checkpoint(nb::module_& m) {
  nb::class_<StreamCoordinate>(
      m, "StreamCoordinate",
      "The 32-byte position of a stream (SPEC 3.1): immutable, little-endian on the wire.")
      .def(
          "__init__",
          [](StreamCoordinate* self, nb::handle shard_id, nb::handle byte_offset,
             nb::handle row_group_idx, nb::handle page_idx, nb::handle row_offset_in_page,
             nb::handle global_row_idx) {
            StreamCoordinate c;
            set_field(c, "shard_id", shard_id);
            set_field(c, "byte_offset", byte_offset);
            set_field(c, "row_group_idx", row_group_idx);
            set_field(c, "page_idx", page_idx);
            set_field(c, "row_offset_in_page", row_offset_in_page);
            set_field(c, "global_row_idx", global_row_idx);
            new (self) StreamCoordinate(c);
          },
          // .none(): None must reach to_unsigned() and become the documented ValueError.
          "shard_id"_a.none() = 0, "byte_offset"_a.none() = 0, "row_group_idx"_a.none() = 0,
          "page_idx"_a.none() = 0, "row_offset_in_page"_a.none() = 0, "global_row_idx"_a.none() = 0,
          nb::sig("def __init__(self, shard_id: int = 0, byte_offset: int = 0, "
                  "row_group_idx: int = 0, page_idx: int = 0, row_offset_in_page: int = 0, "
                  "global_row_idx: int = 0) -> None"))
      .def_prop_ro("shard_id", [](const StreamCoordinate& c) { return c.shard_id; })
      .def_prop_ro("byte_offset", [](const StreamCoordinate& c) { return c.byte_offset; })
      .def_prop_ro("row_group_idx", [](const StreamCoordinate& c) { return c.row_group_idx; })
      .def_prop_ro("page_idx", [](const StreamCoordinate& c) { return c.page_idx; })
      .def_prop_ro("row_offset_in_page",
                   [](const StreamCoordinate& c) { return c.row_offset_in_page; })
      .def_prop_ro("global_row_idx", [](const StreamCoordinate& c) { return c.global_row_idx; })
      .def("to_bytes", &coordinate_bytes, "The 32-byte little-endian encoding.")
      .def_static("from_bytes", &coordinate_from_python, "data"_a.none(),
                  nb::sig("def from_bytes(data: bytes | bytearray | memoryview, /) -> "
                          "StreamCoordinate"),
                  "Decode 32 bytes; any other length or type raises ValueError.")
      .def(
          "replace",
          [](const StreamCoordinate& self, const nb::kwargs& fields) {
            reject_unknown_kwargs("StreamCoordinate.replace", fields,
                                  {"shard_id", "byte_offset", "row_group_idx", "page_idx",
                                   "row_offset_in_page", "global_row_idx"});
            StreamCoordinate c = self;
            for (auto [key, value] : fields) set_field(c, nb::str(key).c_str(), value);
            return c;
          },
          "fields"_a, nb::sig("def replace(self, **fields: int) -> StreamCoordinate"),
          "A copy with the given fields changed.")
      .def(
          "__eq__",
          [](const StreamCoordinate& self, nb::handle other) -> nb::object {
            if (!nb::isinstance<StreamCoordinate>(other)) {
              return nb::borrow(Py_NotImplemented);
            }
            return nb::bool_(self == nb::cast<const StreamCoordinate&>(other));
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def(
          "__ne__",
          [](const StreamCoordinate& self, nb::handle other) -> nb::object {
            if (!nb::isinstance<StreamCoordinate>(other)) {
              return nb::borrow(Py_NotImplemented);
            }
            return nb::bool_(!(self == nb::cast<const StreamCoordinate&>(other)));
          },
          nb::sig("def __ne__(self, other: object, /) -> bool"))
      .def("__hash__",
           [](const StreamCoordinate& self) { return nb::hash(coordinate_bytes(self)); })
      .def("__repr__", &StreamCoordinate::repr)
      // Pickle support (coordinates travel to DataLoader workers): state is the 32-byte form.
      .def("__getstate__", &coordinate_bytes)
      .def(
          "__setstate__",
          [](StreamCoordinate* self, nb::handle state) {
            new (self) StreamCoordinate(coordinate_from_python(state));
          },
          nb::sig("def __setstate__(self, state: bytes, /) -> None"));

  nb::class_<StateTracker>(
      m, "StateTracker",
      "The 128-byte ping-pong .meta checkpoint (SPEC 3.2) and its .dedup WAL (SPEC 3.3).")
      .def(
          "__init__",
          [](StateTracker* self, nb::handle path, nb::handle read_only, nb::handle durable,
             const nb::kwargs& options) {
            reject_unknown_kwargs("StateTracker", options, {"read_only", "durable"});
            const StateTrackerOptions o{to_bool(read_only, "StateTracker", "read_only"),
                                        to_bool(durable, "StateTracker", "durable")};
            const std::string p = to_path_str(path, "StateTracker", "path");
            nb::gil_scoped_release release;
            new (self) StateTracker(p, o);
          },
          "path"_a.none(), nb::kw_only(), "read_only"_a.none() = false, "durable"_a.none() = true,
          "options"_a,
          nb::sig("def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False, "
                  "durable: bool = True, **options: object) -> None"))
      .def_prop_ro("path", &StateTracker::path)
      .def_prop_ro("closed", &StateTracker::closed)
      .def_prop_ro("epoch", [](const StateTracker& t) { return t.committed().epoch; })
      .def_prop_ro("committed_batch_id",
                   [](const StateTracker& t) { return t.committed().committed_batch_id; })
      .def_prop_ro("coordinate", [](const StateTracker& t) { return t.committed().coordinate; })
      .def_prop_ro("dedup_count", [](const StateTracker& t) { return t.committed().dedup_count; })
      .def_prop_ro("active_slot", &active_slot_object,
                   nb::sig("def active_slot(self) -> str | None"))
      .def_prop_ro("has_pending", &StateTracker::has_pending)
      .def(
          "read",
          [](const StateTracker& t) {
            const CheckpointState s = t.committed();
            return nb::make_tuple(s.epoch, s.committed_batch_id, s.coordinate, s.dedup_count);
          },
          nb::sig("def read(self) -> tuple[int, int, StreamCoordinate, int]"),
          "(epoch, committed_batch_id, coordinate, dedup_count) of the active slot.")
      .def(
          "update",
          [](StateTracker& t, nb::handle batch_id, nb::handle coordinate) {
            const std::uint64_t id = to_unsigned(batch_id, "StateTracker.update: batch_id", kU64);
            const StreamCoordinate* c = to_instance<StreamCoordinate>(
                coordinate, "StateTracker.update", "coordinate", "StreamCoordinate", false);
            t.update(id, *c);
          },
          "batch_id"_a.none(), "coordinate"_a.none(),
          nb::sig("def update(self, batch_id: int, coordinate: StreamCoordinate) -> None"),
          "Stage the position after `batch_id` in RAM; commit() makes it durable.")
      .def("commit", &StateTracker::commit, nb::call_guard<nb::gil_scoped_release>(),
           "WAL append + fsync, next slot + fsync, then RAM (SPEC 3.3). Returns the new epoch.")
      .def("rollback", &StateTracker::rollback, nb::call_guard<nb::gil_scoped_release>(),
           "Drop everything staged since the last commit.")
      .def("close", &StateTracker::close, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "__enter__",
          [](nb::handle self) {
            const StateTracker& t = nb::cast<const StateTracker&>(self);
            if (t.closed()) throw Error("StateTracker: checkpoint " + t.path() + " is closed");
            return self;
          },
          nb::sig("def __enter__(self) -> StateTracker"))
      .def(
          "__exit__", [](StateTracker& t, nb::handle, nb::handle, nb::handle) { t.close(); },
          nb::arg().none(), nb::arg().none(), nb::arg().none(),
          nb::sig("def __exit__(self, exc_type: object, exc: object, tb: object, /) -> None"))
      .def("__repr__", [](const StateTracker& t) {
        const std::string path = nb::repr(nb::str(t.path().c_str())).c_str();
        if (t.closed()) return "StateTracker(" + path + ", closed)";
        const int slot = t.active_slot();
        return "StateTracker(" + path + ", epoch=" + std::to_string(t.committed().epoch) +
               ", active_slot=" +
               (slot < 0 ? std::string("None") : "'" + std::string(slot_name(slot)) + "'") + ")";
      });
}

}  // namespace luminamoon::data::bindings
