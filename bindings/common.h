// Shared helpers of the binding files: argument conversion with the engine's error wording.
// Bindings stay thin: conversion and GIL handling here, behaviour in the core.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminamoon/data/common/utf8_encode.h"

namespace luminamoon::data::bindings {

namespace nb = nanobind;

// An int (not bool) in [0, max]; otherwise ValueError "<what> must be an int in [0, max], got x".
std::uint64_t to_unsigned(nb::handle value, const char* what, std::uint64_t max);

// Typed arguments with the fallback's wording, naming the parameter (nanobind's own overload
// error, "incompatible function arguments", names none):
//   to_bool:  exactly a bool, else TypeError "<owner>: <param> must be a bool, got <type>";
//   to_str:   a str, else TypeError "<owner>: <param> must be a str, got <type>";
//   to_path_str / to_path_bytes: a str, bytes or os.PathLike as os.fsdecode / os.fsencode gives
//             it, else TypeError "<owner>: <param> must be a str or os.PathLike, got <type>"; a
//             NUL anywhere -> ValueError "embedded null byte" (what os.open raises), never a
//             silently shortened path;
//   to_instance<T>: an instance of the bound class T (or None when `allow_none`), else TypeError
//             "<owner>: <param> must be a <T>[ or None], got <type>".
bool to_bool(nb::handle value, const char* owner, const char* param);
std::string to_str(nb::handle value, const char* owner, const char* param);
std::string to_path_str(nb::handle value, const char* owner, const char* param);
std::string to_path_bytes(nb::handle value, const char* owner, const char* param);
[[noreturn]] void throw_type_error(const char* owner, const char* param, const char* expected,
                                   nb::handle value);

template <typename T>
T* to_instance(nb::handle value, const char* owner, const char* param, const char* type_name,
               bool allow_none) {
  if (allow_none && value.is_none()) return nullptr;
  if (!nb::isinstance<T>(value)) {
    const std::string expected = "a " + std::string(type_name) + (allow_none ? " or None" : "");
    throw_type_error(owner, param, expected.c_str(), value);
  }
  return nb::inst_ptr<T>(value);
}

// str / bytes / bytearray / memoryview as UTF-8 (str) or raw bytes. A str with a lone surrogate
// -> ValueError (or, with LoneSurrogates::kSurrogatepass, its 'surrogatepass' encoding: each
// surrogate becomes the invalid 3-byte sequence ED xx xx, for the TextCleaner to repair); any
// other type -> TypeError. `where` prefixes messages ("texts[3]").
// Buffers acquired here are released by ~DocumentViews.
// A str is read in place when it is ASCII (its characters are its UTF-8) or already holds its
// UTF-8; any other str is encoded here (common/utf8_encode.h) into memory these views own and
// free, so the str is left as it was (on the worker pool at the end of add_batch with
// encode_on_pool, or by the caller with defer_encoding). The abi3 build (no access to a str's
// layout) asks PyUnicode_AsUTF8AndSize, which encodes with CPython's encoder and keeps the UTF-8 on
// the str for its lifetime.
class DocumentViews {
 public:
  enum class LoneSurrogates { kReject, kSurrogatepass };

  DocumentViews() = default;
  explicit DocumentViews(LoneSurrogates lone_surrogates) : lone_surrogates_(lone_surrogates) {}
  DocumentViews(const DocumentViews&) = delete;
  DocumentViews& operator=(const DocumentViews&) = delete;
  ~DocumentViews();

  // One document (is_unique, xxh3_64, ...).
  std::string_view add(nb::handle document, const std::string& where);
  // A list/tuple of documents or an Arrow array / chunked array (PyCapsule interface).
  void add_batch(nb::handle documents);

  const std::vector<std::string_view>& views() const noexcept { return views_; }

  // For stages that read each document once and encode what they read themselves (exact
  // dedup's hashes: hash_code_units; MinHash's signatures: PendingUtf8): from this call on, a
  // str of a batch (add_batch) that must be encoded is not encoded here: it gets an empty view,
  // and deferred_units() lists its characters (deferred_views() its view index; pending() both)
  // for the stage to encode on the worker pool, with the GIL released, each worker in a buffer
  // of its own. So the batch's UTF-8 is never written out and read back (at 14K long real
  // documents it was 54 MB, which left the caches between the two), and the encoding is spread
  // over the threads with the stage's own work. The strs stay alive: add_batch keeps their
  // tuple. (No effect in the abi3 build, which has no encoder of its own.)
  void defer_encoding() noexcept { deferral_ = Deferral::kHashes; }
  // For the other stages with `threads` other than 1 (resolved as the stages resolve it): a str
  // of a batch that must be encoded is encoded at the end of add_batch on the worker pool, with
  // the GIL released, each worker into arena blocks of its own; a lone surrogate is reported as
  // it would have been in order. (No effect in the abi3 build.)
  void encode_on_pool(unsigned threads) noexcept;
  const std::vector<CodeUnits>& deferred_units() const noexcept { return deferred_units_; }
  const std::vector<std::size_t>& deferred_views() const noexcept { return deferred_views_; }
  // The deferred strs as the stages take them: each one's view index and characters.
  std::vector<PendingUtf8> pending() const;
  // With hash_code_units' answer for deferred_units(): the ValueError (location and all) that
  // add_batch raises for a str with a lone surrogate, unless such strs are accepted
  // (LoneSurrogates::kSurrogatepass). Call with the GIL held.
  void check_deferred(std::size_t first_invalid) const;

  // Per view: 1 when it is a str's own UTF-8 (valid by construction, so a consumer may skip its
  // check), 0 for bytes, buffers, Arrow strings and a str with lone surrogates (surrogatepass).
  std::span<const std::uint8_t> known_valid_utf8() {
    known_valid_.resize(views_.size(), 0);
    return known_valid_;
  }

 private:
  void add_arrow(nb::handle documents);
  // add() for texts[index] when where is null: the message prefix is built only on an error.
  std::string_view add_object(PyObject* obj, const std::string* where, std::size_t index);
  // Adds a view known to be valid UTF-8 (the views before it without a flag are not known).
  std::string_view add_known_valid(std::string_view view) {
    known_valid_.resize(views_.size(), 0);
    known_valid_.push_back(1);
    return views_.emplace_back(view);
  }
#if !defined(Py_LIMITED_API)
  // The UTF-8 of a str that is not ASCII, encoded here (common/utf8_encode.h) into the arena.
  std::string_view add_encoded(PyObject* obj, const std::string* where, std::size_t index);
  // The deferred strs encoded on the pool (encode_on_pool), their views set; then the error of
  // the first one with a lone surrogate, if such strs are rejected.
  void encode_deferred();
  struct ArenaBlock {
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0;
  };
  // space(size): `size` bytes that stay put until the DocumentViews is destroyed; commit(n) keeps
  // the first n of them. Blocks of 1 MiB (a larger request gets a block of its own), taken from
  // and given back to a pool of the process (common.cc), so that a batch's UTF-8 is written to
  // memory the process already has: fresh pages cost a page fault each, which took half of the
  // time of an exact dedup batch of real non-ASCII documents when every call had new blocks.
  struct Arena {
    std::vector<ArenaBlock> blocks;
    char* next = nullptr;
    std::size_t left = 0;
    char* space(std::size_t size);
    void commit(std::size_t used) noexcept {
      next += used;
      left -= used;
    }
  };
  std::vector<Arena> arenas_ = std::vector<Arena>(1);  // [0] the calling thread's; then workers'
#endif
  // The error add_batch would have raised first had the deferred strs been encoded as they came
  // (one of theirs comes before any later item's); called before rethrowing a later item's.
  void check_deferred_before_error() const;
  enum class Deferral { kNone, kHashes, kPool };
  Deferral deferral_ = Deferral::kNone;
  unsigned pool_threads_ = 1;
  std::vector<CodeUnits> deferred_units_;
  std::vector<std::size_t> deferred_views_;
  std::vector<std::size_t> deferred_items_;  // each one's index in the batch, for messages
  std::vector<std::string_view> views_;
  std::vector<std::uint8_t> known_valid_;  // per view up to the last valid one, see above
  std::vector<Py_buffer> buffers_;
  std::vector<nb::object> keep_alive_;  // tuples, capsules and stream chunks behind the views
  LoneSurrogates lone_surrogates_ = LoneSurrogates::kReject;
};

// A new str of UTF-8 `text` (a new reference; nullptr with a Python error set). Valid text (known
// valid, or checked here) is decoded by the engine (common/utf8_decode.h) straight into the str,
// unless it is dense with characters that are not ASCII (a continuation byte in every
// kDenseUtf8 bytes or more) of a width the engine decodes one character at a time there
// (decode_utf8_dense_is_vectorized), where CPython's decoder is as fast; other text goes to
// CPython's decoder with `errors` (nullptr: strict). The abi3 build always asks CPython.
inline constexpr std::size_t kDenseUtf8 = 8;
PyObject* new_str_from_utf8(std::string_view text, bool known_valid, const char* errors = nullptr);

// Raises ConfigError (via the core helper) for every key of `kwargs` not in `known`.
void reject_unknown_kwargs(const char* owner, const nb::kwargs& kwargs,
                           std::initializer_list<std::string_view> known);

void bind_errors(nb::module_& m);
void bind_build_info(nb::module_& m);
void bind_checkpoint(nb::module_& m);
void bind_dedup(nb::module_& m);
void bind_minhash(nb::module_& m);
void bind_cleaner(nb::module_& m);
void bind_readers(nb::module_& m);
void bind_pii(nb::module_& m);
void bind_string_tensor(nb::module_& m);
void bind_quality(nb::module_& m);
void bind_language(nb::module_& m);
void bind_common(nb::module_& m);
void bind_pipeline(nb::module_& m);
void bind_prefetch(nb::module_& m);

}  // namespace luminamoon::data::bindings
