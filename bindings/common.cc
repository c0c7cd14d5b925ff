// Argument conversion, document views over Python/Arrow inputs, the exception translator, and
// the module-level functions xxh3_64, did_you_mean, simd_isa and supported_isas.
#include "common.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "luminamoon/data/arrow/c_data_interface.h"
#include "luminamoon/data/arrow/string_array.h"
#include "luminamoon/data/common/cpu_isa.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/suggest.h"
#include "luminamoon/data/common/utf8_decode.h"
#include "luminamoon/data/common/utf8_encode.h"
#include "luminamoon/data/common/worker_pool.h"
#include "luminamoon/data/common/xxh3.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"
#include "luminamoon/data/pii/pii_masker.h"

namespace luminamoon::data::bindings {

using namespace nb::literals;

std::uint64_t to_unsigned(nb::handle value, const char* what, std::uint64_t max) {
  auto fail = [&]() -> std::uint64_t {
    PyErr_Clear();
    const std::string shown = nb::repr(value).c_str();
    throw nb::value_error(
        (std::string(what) + " must be an int in [0, " + std::to_string(max) + "], got " + shown)
            .c_str());
  };
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) return fail();
  const unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return fail();
  if (v > max) return fail();
  return v;
}

void throw_type_error(const char* owner, const char* param, const char* expected,
                      nb::handle value) {
  throw nb::type_error((std::string(owner) + ": " + param + " must be " + expected + ", got " +
                        nb::type_name(value.type()).c_str())
                           .c_str());
}

bool to_bool(nb::handle value, const char* owner, const char* param) {
  if (!PyBool_Check(value.ptr())) throw_type_error(owner, param, "a bool", value);
  return value.ptr() == Py_True;
}

std::string to_str(nb::handle value, const char* owner, const char* param) {
  if (!PyUnicode_Check(value.ptr())) throw_type_error(owner, param, "a str", value);
  return nb::cast<std::string>(value);
}

namespace {

// The ValueError for a str with a lone surrogate, which UTF-8 cannot hold.
[[noreturn]] void throw_lone_surrogate(const std::string& where) {
  throw nb::value_error((where + ": str cannot be encoded as UTF-8 (it contains a lone surrogate); "
                                 "pass bytes, or fix the text with .encode('utf-8', 'replace')")
                            .c_str());
}

void check_path_type(nb::handle value, const char* owner, const char* param) {
  if (!PyUnicode_Check(value.ptr()) && !PyBytes_Check(value.ptr()) &&
      !nb::isinstance(value, nb::module_::import_("os").attr("PathLike"))) {
    throw_type_error(owner, param, "a str or os.PathLike", value);
  }
}

void reject_nul(const std::string& path) {
  if (path.find('\0') != std::string::npos) throw nb::value_error("embedded null byte");
}

}  // namespace

std::string to_path_str(nb::handle value, const char* owner, const char* param) {
  check_path_type(value, owner, param);
  std::string path = nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(value));
  reject_nul(path);
  return path;
}

std::string to_path_bytes(nb::handle value, const char* owner, const char* param) {
  check_path_type(value, owner, param);
  nb::object encoded = nb::module_::import_("os").attr("fsencode")(value);
  std::string path(PyBytes_AsString(encoded.ptr()),
                   static_cast<std::size_t>(PyBytes_Size(encoded.ptr())));
  reject_nul(path);
  return path;
}

#if !defined(Py_LIMITED_API)
namespace {

// The arena blocks that finished DocumentViews gave back, for the next ones on any thread: as
// many as the last DocumentViews to finish used, at least kMinCached and at most kMaxCached
// blocks of kArenaBlock bytes (16 to 128 MiB), kept until the process ends. So calls that encode
// batches of the same size again and again write to memory the process already has, and one
// large batch followed by small ones gives its memory back. Larger blocks (one document of over
// 1 MiB of UTF-8) are freed at once. One pool under a mutex, not one per thread: a thread_local
// with a destructor in a dlopen'ed module is freed by glibc out of ThreadSanitizer's sight (a
// reported race at every thread exit), and a block is taken once per MiB of text.
constexpr std::size_t kArenaBlock = std::size_t{1} << 20;
constexpr std::size_t kMinCached = 16;
// Code units (bytes) below which one more worker encoding a batch's strs costs more than it saves.
constexpr std::size_t kMinEncodeBytesPerWorker = 256 * 1024;
constexpr std::size_t kMaxCached = 128;

class ArenaBlockPool {
 public:
  std::unique_ptr<char[]> take() {
    std::lock_guard lock(mutex_);
    if (blocks_.empty()) return nullptr;
    std::unique_ptr<char[]> block = std::move(blocks_.back());
    blocks_.pop_back();
    return block;
  }
  // Keeps the kArenaBlock-sized ones of `used` (the blocks one DocumentViews had), up to
  // what that DocumentViews needed, and frees the rest.
  template <typename Blocks>
  void give_back(Blocks& used) {
    const std::size_t keep = std::clamp(used.size(), kMinCached, kMaxCached);
    std::lock_guard lock(mutex_);
    for (auto& block : used) {
      if (block.size == kArenaBlock && blocks_.size() < keep)
        blocks_.push_back(std::move(block.bytes));
    }
    if (blocks_.size() > keep) blocks_.resize(keep);
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<char[]>> blocks_;
};

// Never destroyed (the process's memory goes with it): no DocumentViews can outlive it.
ArenaBlockPool& arena_pool() {
  static auto* pool = new ArenaBlockPool;
  return *pool;
}

}  // namespace
#endif

DocumentViews::~DocumentViews() {
  for (Py_buffer& buffer : buffers_) PyBuffer_Release(&buffer);
#if !defined(Py_LIMITED_API)
  if (arenas_.size() == 1) {
    if (!arenas_[0].blocks.empty()) arena_pool().give_back(arenas_[0].blocks);
  } else {
    std::vector<ArenaBlock> all;
    for (Arena& arena : arenas_) {
      for (ArenaBlock& block : arena.blocks) all.push_back(std::move(block));
    }
    if (!all.empty()) arena_pool().give_back(all);
  }
#endif
}

std::string_view DocumentViews::add(nb::handle document, const std::string& where) {
  return add_object(document.ptr(), &where, 0);
}

std::string_view DocumentViews::add_object(PyObject* obj, const std::string* where,
                                           std::size_t index) {
  const auto prefix = [&] {
    return where != nullptr ? *where : "texts[" + std::to_string(index) + "]";
  };
  if (PyUnicode_Check(obj)) {
#if !defined(Py_LIMITED_API)
    // Compact ASCII (most text): its characters are its UTF-8 bytes, stored right after the
    // object header; read them in place, without PyUnicode_AsUTF8AndSize's call. The limited
    // API (the abi3 build for CPython >= 3.12) has no access to the object's layout, so it
    // always takes the call below; CPython answers it from the same buffer, no new object.
    if (PyUnicode_IS_COMPACT_ASCII(obj)) {
      return add_known_valid(std::string_view(static_cast<const char*>(PyUnicode_DATA(obj)),
                                              static_cast<std::size_t>(PyUnicode_GET_LENGTH(obj))));
    }
    return add_encoded(obj, where, index);
#endif
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
    if (data == nullptr && lone_surrogates_ == LoneSurrogates::kSurrogatepass) {
      PyErr_Clear();
      PyObject* encoded = PyUnicode_AsEncodedString(obj, "utf-8", "surrogatepass");
      if (encoded == nullptr) throw nb::python_error();
      nb::object bytes = nb::steal(encoded);
      const std::string_view view(PyBytes_AsString(encoded),
                                  static_cast<std::size_t>(PyBytes_Size(encoded)));
      keep_alive_.push_back(std::move(bytes));
      return views_.emplace_back(view);
    }
    if (data == nullptr) {
      PyErr_Clear();
      throw_lone_surrogate(prefix());
    }
    return add_known_valid(std::string_view(data, static_cast<std::size_t>(size)));
  }
  if (PyBytes_Check(obj)) {
    // Function forms, not the macros: the stable ABI (abi3) has no struct access.
    return views_.emplace_back(PyBytes_AsString(obj), static_cast<std::size_t>(PyBytes_Size(obj)));
  }
  if (PyObject_CheckBuffer(obj)) {
    // The buffer export pins bytearray/memoryview memory while the GIL is released.
    Py_buffer buffer;
    if (PyObject_GetBuffer(obj, &buffer, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw nb::type_error((prefix() + ": expected a contiguous bytes-like object").c_str());
    }
    buffers_.push_back(buffer);
    return views_.emplace_back(static_cast<const char*>(buffer.buf),
                               static_cast<std::size_t>(buffer.len));
  }
  throw nb::type_error((prefix() + ": expected str or bytes-like, got " +
                        std::string(nb::type_name(nb::handle(obj).type()).c_str()))
                           .c_str());
}

#if !defined(Py_LIMITED_API)
std::string_view DocumentViews::add_encoded(PyObject* obj, const std::string* where,
                                            std::size_t index) {
#if PY_VERSION_HEX < 0x030C0000
  // A str made by the legacy PyUnicode_FromUnicode has its characters only as wchar_t until it is
  // made ready (CPython < 3.12; every str is ready from 3.12 on).
  if (PyUnicode_READY(obj) != 0) throw nb::python_error();
#endif
  // UTF-8 that the str already holds (someone asked for it before): read in place. The field is
  // there for every str that is not compact ASCII (PEP 393's PyCompactUnicodeObject).
  const auto* compact = reinterpret_cast<const PyCompactUnicodeObject*>(obj);
  if (compact->utf8 != nullptr) {
    return add_known_valid(
        std::string_view(compact->utf8, static_cast<std::size_t>(compact->utf8_length)));
  }
  const auto width = static_cast<unsigned>(PyUnicode_KIND(obj));
  const auto count = static_cast<std::size_t>(PyUnicode_GET_LENGTH(obj));
  if (deferral_ != Deferral::kNone && where == nullptr) {
    deferred_units_.push_back({PyUnicode_DATA(obj), count, width});
    deferred_views_.push_back(views_.size());
    deferred_items_.push_back(index);
    return views_.emplace_back();
  }
  Arena& arena = arenas_[0];
  char* out = arena.space(utf8_encode_capacity(count, width));
  const Utf8Encoded encoded = encode_utf8(PyUnicode_DATA(obj), count, width, out);
  const std::string_view view(out, encoded.size);
  if (encoded.first_invalid == Utf8Encoded::npos) {
    arena.commit(encoded.size);
    return add_known_valid(view);
  }
  // A lone surrogate: its 'surrogatepass' form (what the encoder wrote), not valid UTF-8.
  if (lone_surrogates_ == LoneSurrogates::kSurrogatepass) {
    arena.commit(encoded.size);
    return views_.emplace_back(view);
  }
  throw_lone_surrogate(where != nullptr ? *where : "texts[" + std::to_string(index) + "]");
}

char* DocumentViews::Arena::space(std::size_t size) {
  if (size <= left) return next;
  ArenaBlock block;
  if (size <= kArenaBlock) block.bytes = arena_pool().take();
  if (block.bytes == nullptr) {
    block.bytes = std::make_unique_for_overwrite<char[]>(std::max(size, kArenaBlock));
  }
  block.size = std::max(size, kArenaBlock);
  next = block.bytes.get();
  left = block.size;
  blocks.push_back(std::move(block));
  return next;
}

void DocumentViews::encode_deferred() {
  const std::size_t n = deferred_units_.size();
  known_valid_.resize(views_.size(), 0);
  std::size_t bytes = 0;
  for (const CodeUnits& d : deferred_units_) bytes += d.count * d.width;
  WorkerPool& pool = WorkerPool::shared();
  const unsigned workers = pool.workers_for(bytes, pool_threads_, kMinEncodeBytesPerWorker);
  if (arenas_.size() < workers) arenas_.resize(workers);
  std::vector<std::size_t> first_invalid(workers, Utf8Encoded::npos);
  {
    nb::gil_scoped_release release;
    // Each deferred str is written by one worker into its own arena, and only its own view and
    // flag are set (distinct elements); the strs stay alive in add_batch's tuple.
    pool.run(n, workers, 0, [&](std::size_t begin, std::size_t end, unsigned worker) {
      Arena& arena = arenas_[worker];
      for (std::size_t k = begin; k < end; ++k) {
        const CodeUnits& d = deferred_units_[k];
        char* out = arena.space(utf8_encode_capacity(d.count, d.width));
        const Utf8Encoded encoded = encode_utf8(d.data, d.count, d.width, out);
        const bool valid = encoded.first_invalid == Utf8Encoded::npos;
        if (!valid && lone_surrogates_ == LoneSurrogates::kReject) {
          first_invalid[worker] = std::min(first_invalid[worker], k);
          continue;
        }
        arena.commit(encoded.size);
        views_[deferred_views_[k]] = std::string_view(out, encoded.size);
        known_valid_[deferred_views_[k]] = valid ? 1 : 0;
      }
    });
  }
  const std::size_t first = *std::min_element(first_invalid.begin(), first_invalid.end());
  if (first != Utf8Encoded::npos) {
    throw_lone_surrogate("texts[" + std::to_string(deferred_items_[first]) + "]");
  }
  deferred_units_.clear();
  deferred_views_.clear();
  deferred_items_.clear();
}
#endif

std::vector<PendingUtf8> DocumentViews::pending() const {
  std::vector<PendingUtf8> out(deferred_units_.size());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = {deferred_views_[k], deferred_units_[k]};
  return out;
}

void DocumentViews::check_deferred(std::size_t first_invalid) const {
  if (first_invalid == Utf8Encoded::npos || lone_surrogates_ == LoneSurrogates::kSurrogatepass) {
    return;
  }
  throw_lone_surrogate("texts[" + std::to_string(deferred_items_.at(first_invalid)) + "]");
}

void DocumentViews::check_deferred_before_error() const {
  if (deferred_units_.empty() || lone_surrogates_ == LoneSurrogates::kSurrogatepass) return;
  std::vector<std::uint64_t> unused(deferred_units_.size());
  check_deferred(hash_code_units(deferred_units_, unused, 1));
}

void DocumentViews::encode_on_pool(unsigned threads) noexcept {
#if !defined(Py_LIMITED_API)
  if (deferral_ == Deferral::kNone && resolve_thread_count(threads) > 1) {
    deferral_ = Deferral::kPool;
    pool_threads_ = threads;
  }
#else
  (void)threads;
#endif
}

PyObject* new_str_from_utf8(std::string_view text, bool known_valid, const char* errors) {
#if !defined(Py_LIMITED_API)
  // Most documents are ASCII: copied into an ASCII str as they are checked, in one pass.
  const auto size = static_cast<Py_ssize_t>(text.size());
  PyObject* str = PyUnicode_New(size, 0x7F);
  if (str == nullptr) return nullptr;
  const std::size_t ascii = copy_ascii_prefix(text, static_cast<char*>(PyUnicode_DATA(str)));
  if (ascii == text.size()) return str;
  Py_DECREF(str);
  // The rest's shape; the ASCII prefix ends before a character, so the rest is valid if all is.
  const std::string_view rest = text.substr(ascii);
  const Utf8Shape shape = utf8_shape(rest);
  const bool dense = shape.continuation_bytes * kDenseUtf8 >= text.size();
  if ((!dense || decode_utf8_dense_is_vectorized(shape.width)) &&
      (known_valid || utf8_is_valid(rest))) {
    const std::size_t code_points = ascii + shape.code_points;
    const Py_UCS4 largest = shape.width == 1 ? 0xFF : shape.width == 2 ? 0xFFFF : 0x10FFFF;
    str = PyUnicode_New(static_cast<Py_ssize_t>(code_points), largest);
    if (str == nullptr) return nullptr;
    decode_utf8(text, shape.width, PyUnicode_DATA(str), code_points);
    return str;
  }
#else
  (void)known_valid;
#endif
  return PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), errors);
}

void DocumentViews::add_batch(nb::handle documents) {
  if (PyList_Check(documents.ptr()) || PyTuple_Check(documents.ptr())) {
    // A tuple snapshot holds a reference to every element, so the views stay valid even if
    // another thread mutates the caller's list while the GIL is released.
    nb::tuple items = nb::steal<nb::tuple>(PySequence_Tuple(documents.ptr()));
    if (!items.is_valid()) throw nb::python_error();
    const std::size_t n = nb::len(items);
    views_.reserve(views_.size() + n);
    known_valid_.reserve(views_.size() + n);
    // Each str is a separate heap object, so reading its header is a cache miss on a large
    // batch: fetch the headers a few items ahead.
    constexpr std::size_t kAhead = 8;
    PyObject* tuple = items.ptr();
    const auto item = [tuple](std::size_t i) {
#if defined(Py_LIMITED_API)
      return PyTuple_GetItem(tuple, static_cast<Py_ssize_t>(i));  // borrowed
#else
      return PyTuple_GET_ITEM(tuple, static_cast<Py_ssize_t>(i));
#endif
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) __builtin_prefetch(item(i + kAhead));
      try {
        add_object(item(i), nullptr, i);
      } catch (...) {
        check_deferred_before_error();
        throw;
      }
    }
    keep_alive_.push_back(std::move(items));
#if !defined(Py_LIMITED_API)
    if (deferral_ == Deferral::kPool && !deferred_units_.empty()) encode_deferred();
#endif
    return;
  }
  if (nb::hasattr(documents, "__arrow_c_array__") || nb::hasattr(documents, "__arrow_c_stream__")) {
    add_arrow(documents);
    return;
  }
  throw nb::type_error(("texts: expected a list or tuple of str/bytes, or an Arrow string array "
                        "(__arrow_c_array__ / __arrow_c_stream__), got " +
                        std::string(nb::type_name(documents.type()).c_str()))
                           .c_str());
}

namespace {

template <typename T>
T* capsule_pointer(nb::handle capsule, const char* name) {
  void* p = PyCapsule_GetPointer(capsule.ptr(), name);
  if (p == nullptr) {
    PyErr_Clear();
    throw nb::type_error((std::string("texts: expected a PyCapsule named '") + name + "'").c_str());
  }
  return static_cast<T*>(p);
}

// Owns an ArrowSchema/ArrowArray we received from a stream; releases it when collected.
template <typename T>
nb::object owning_capsule(T* value) {
  return nb::capsule(value, [](void* p) noexcept {
    auto* v = static_cast<T*>(p);
    if (v->release != nullptr) v->release(v);
    delete v;
  });
}

[[noreturn]] void throw_stream_error(ArrowArrayStream* stream, int code) {
  const char* message = stream->get_last_error ? stream->get_last_error(stream) : nullptr;
  throw nb::value_error((std::string("texts: Arrow stream error ") + std::strerror(code) +
                         (message ? std::string(": ") + message : std::string()))
                            .c_str());
}

}  // namespace

void DocumentViews::add_arrow(nb::handle documents) {
  if (nb::hasattr(documents, "__arrow_c_array__")) {
    nb::object pair = documents.attr("__arrow_c_array__")();
    auto* schema = capsule_pointer<ArrowSchema>(pair[0], "arrow_schema");
    auto* array = capsule_pointer<ArrowArray>(pair[1], "arrow_array");
    append_string_views(*schema, *array, views_.size(), views_);
    keep_alive_.push_back(std::move(pair));
    return;
  }
  nb::object stream_capsule = documents.attr("__arrow_c_stream__")();
  auto* stream = capsule_pointer<ArrowArrayStream>(stream_capsule, "arrow_array_stream");
  auto* schema = new ArrowSchema{};
  nb::object schema_owner = owning_capsule(schema);
  if (int rc = stream->get_schema(stream, schema); rc != 0) throw_stream_error(stream, rc);
  keep_alive_.push_back(schema_owner);
  for (;;) {
    auto* chunk = new ArrowArray{};
    nb::object chunk_owner = owning_capsule(chunk);
    if (int rc = stream->get_next(stream, chunk); rc != 0) throw_stream_error(stream, rc);
    if (chunk->release == nullptr) break;  // end of stream
    append_string_views(*schema, *chunk, views_.size(), views_);
    keep_alive_.push_back(std::move(chunk_owner));
  }
  keep_alive_.push_back(std::move(stream_capsule));
}

void reject_unknown_kwargs(const char* owner, const nb::kwargs& kwargs,
                           std::initializer_list<std::string_view> known) {
  for (auto [key, value] : kwargs) {
    (void)value;
    const std::string name = nb::str(key).c_str();
    reject_unknown_option(owner, name,
                          std::span<const std::string_view>(known.begin(), known.size()));
  }
}

namespace {

// Raises the Python class `name` of luminamoon.data.errors, so both backends raise the same
// classes. Falls back to RuntimeError if the package is not importable (bare _native use).
void raise_engine_error(const char* name, const char* message) {
  PyObject* module = PyImport_ImportModule("luminamoon.data.errors");
  PyObject* cls = module ? PyObject_GetAttrString(module, name) : nullptr;
  Py_XDECREF(module);
  if (cls == nullptr) {
    PyErr_Clear();
    PyErr_SetString(PyExc_RuntimeError, message);
    return;
  }
  PyErr_SetString(cls, message);
  Py_DECREF(cls);
}

}  // namespace

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const CorruptCheckpointError& e) {
      raise_engine_error("CorruptCheckpointError", e.what());
    } catch (const CheckpointLockedError& e) {
      raise_engine_error("CheckpointLockedError", e.what());
    } catch (const ConfigError& e) {
      raise_engine_error("ConfigError", e.what());
    } catch (const MalformedInputError& e) {
      raise_engine_error("MalformedInputError", e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const InvalidType& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const IoError& e) {
      PyObject* args = Py_BuildValue("(iss)", e.error_number(), std::strerror(e.error_number()),
                                     e.path().c_str());
      if (args != nullptr) {
        PyErr_SetObject(PyExc_OSError, args);
        Py_DECREF(args);
      }
    } catch (const Error& e) {
      raise_engine_error("LuminaMoonError", e.what());
    }
  });
}

void bind_common(nb::module_& m) {
  m.def(
      "xxh3_64",
      [](nb::handle data) {
        DocumentViews views;
        return xxh3_64(views.add(data, "data"));
      },
      "data"_a, nb::sig("def xxh3_64(data: str | bytes | bytearray | memoryview) -> int"),
      "XXH3-64 (seed 0) of the UTF-8 bytes of a str, or of a bytes-like object.");
  m.def(
      "did_you_mean",
      [](const std::string& name, nb::iterable candidates) {
        std::vector<std::string> names;
        for (nb::handle c : candidates) names.push_back(nb::cast<std::string>(c));
        std::vector<std::string_view> views(names.begin(), names.end());
        return did_you_mean(name, views);
      },
      "name"_a, "candidates"_a,
      nb::sig(
          "def did_you_mean(name: str, candidates: collections.abc.Iterable[str]) -> str | None"),
      "The candidate closest to `name` by Damerau-Levenshtein distance, or None when none is "
      "close (distance > max(2, len(name) // 3)).");
  m.def(
      "simd_isa", [] { return std::string(isa_name(active_isa())); },
      nb::sig("def simd_isa() -> str"),
      "The instruction set the byte kernels use: 'scalar', 'avx2', 'avx512' or 'neon'. Probed once "
      "per process; LUMINAMOON_SIMD forces one, and an unknown or unsupported value raises "
      "ConfigError here.");
  m.def(
      "supported_isas",
      [] {
        std::vector<std::string> names;
        for (const Isa isa : supported_isas()) names.emplace_back(isa_name(isa));
        return names;
      },
      nb::sig("def supported_isas() -> list[str]"),
      "Every instruction set this CPU and build can run, 'scalar' first.");
}

}  // namespace luminamoon::data::bindings
