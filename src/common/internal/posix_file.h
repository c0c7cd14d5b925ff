// RAII file descriptor with the few POSIX calls the durable formats need. Every failure throws
// IoError carrying errno and the path; short reads/writes and EINTR are retried.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace luminamoon::data::internal {

class PosixFile {
 public:
  PosixFile() = default;
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  PosixFile(PosixFile&& other) noexcept;
  PosixFile& operator=(PosixFile&& other) noexcept;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;
  ~PosixFile();

  // Opens `path` with `flags` (O_CLOEXEC is added). The open itself is non-blocking, so a FIFO
  // without a writer cannot hang it; O_NONBLOCK is cleared again afterwards. Throws IoError.
  static PosixFile open(const std::string& path, int flags, unsigned mode = 0644);
  // Like open, but returns an invalid PosixFile instead of throwing when the path is missing.
  static PosixFile open_if_exists(const std::string& path, int flags);

  bool valid() const noexcept { return fd_ >= 0; }
  int fd() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }

  std::uint64_t size() const;
  // What the file is when it is not a regular file ("a FIFO", "a character device", ...);
  // empty for a regular file.
  std::string non_regular_kind() const;
  // Reads exactly `size` bytes at `offset` (fewer only at end of file); returns bytes read.
  std::size_t pread_some(void* buffer, std::size_t size, std::uint64_t offset) const;
  void pwrite_all(const void* buffer, std::size_t size, std::uint64_t offset);
  void truncate(std::uint64_t size);
  // fdatasync: data and the size, which is all our formats need to be durable.
  void sync_data();
  // Non-blocking exclusive flock; false when another open file description holds it.
  bool try_lock_exclusive();
  void close() noexcept;

 private:
  int fd_ = -1;
  std::string path_;
};

// Checkpoint files (.meta, .dedup, companions) must be regular files: otherwise throws
// CorruptCheckpointError "<path> is a FIFO, not a regular file; ..." (`what` names the role).
void require_regular_file(const PosixFile& file, const std::string& what);

// fsync of the directory holding `path`, so a newly created file's name is durable.
void sync_parent_directory(const std::string& path);

}  // namespace luminamoon::data::internal
