// Exception types of the engine. The bindings map each one to the Python class of the same name
// in luminamoon/data/errors.py (InvalidArgument -> ValueError, IoError -> OSError).
#pragma once

#include <stdexcept>
#include <string>

namespace luminamoon::data {

// Base of every error the engine raises on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A checkpoint (.meta) or its WAL (.dedup) cannot be trusted. Never swallowed: a training run
// must not silently restart from zero.
class CorruptCheckpointError : public Error {
 public:
  using Error::Error;
};

// Another writer holds the advisory lock on the same .meta file.
class CheckpointLockedError : public Error {
 public:
  using Error::Error;
};

// Unknown option/field/preset name; the message carries a "did you mean" suggestion.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A value of the right type but outside its domain (wrong length, out of range, null element).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A value of the wrong kind (an unsupported Arrow type, a non-string element); -> TypeError.
class InvalidType : public Error {
 public:
  using Error::Error;
};

// A malformed input record or shard (bad JSON, a missing or non-string field, a damaged stream),
// raised in strict mode or by one-shot calls such as extract_field. The message says what and
// where (shard, path, line, byte offset, field). -> luminamoon.data.errors.MalformedInputError.
class MalformedInputError : public Error {
 public:
  using Error::Error;
};

// An operating-system call failed; keeps errno and the path so Python sees a proper OSError.
class IoError : public Error {
 public:
  IoError(int error_number, std::string path, const std::string& what)
      : Error(what), errno_(error_number), path_(std::move(path)) {}
  int error_number() const noexcept { return errno_; }
  const std::string& path() const noexcept { return path_; }

 private:
  int errno_;
  std::string path_;
};

}  // namespace luminamoon::data
