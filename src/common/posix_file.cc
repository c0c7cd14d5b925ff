// POSIX file helpers for the durable checkpoint formats (see internal/posix_file.h).
#include "internal/posix_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data::internal {
namespace {

[[noreturn]] void throw_errno(int err, const std::string& path, const char* what) {
  throw IoError(err, path, std::string(what) + " " + path + ": " + std::strerror(err));
}

// Opens without blocking (a FIFO with no writer would block O_RDONLY forever), then restores
// blocking mode for the reads and writes. -1 with errno set on failure.
int open_nonblocking(const std::string& path, int flags, unsigned mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, static_cast<mode_t>(mode));
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 || (flags & O_NONBLOCK) != 0) return fd;
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

PosixFile::PosixFile(PosixFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

PosixFile& PosixFile::operator=(PosixFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

PosixFile::~PosixFile() { close(); }

PosixFile PosixFile::open(const std::string& path, int flags, unsigned mode) {
  const int fd = open_nonblocking(path, flags, mode);
  if (fd < 0) throw_errno(errno, path, "cannot open");
  return PosixFile(fd, path);
}

PosixFile PosixFile::open_if_exists(const std::string& path, int flags) {
  const int fd = open_nonblocking(path, flags, 0);
  if (fd < 0) {
    if (errno == ENOENT) return PosixFile();
    throw_errno(errno, path, "cannot open");
  }
  return PosixFile(fd, path);
}

std::uint64_t PosixFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_errno(errno, path_, "cannot stat");
  if (S_ISDIR(st.st_mode)) throw_errno(EISDIR, path_, "cannot use");
  return static_cast<std::uint64_t>(st.st_size);
}

std::string PosixFile::non_regular_kind() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_errno(errno, path_, "cannot stat");
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

void require_regular_file(const PosixFile& file, const std::string& what) {
  const std::string kind = file.non_regular_kind();
  if (kind.empty()) return;
  throw CorruptCheckpointError("corrupt checkpoint file " + file.path() + ": the " + what + " is " +
                               kind +
                               ", not a regular file; a checkpoint's files (.meta, .dedup, "
                               "companions) must be regular files");
}

std::size_t PosixFile::pread_some(void* buffer, std::size_t size, std::uint64_t offset) const {
  auto* out = static_cast<char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, path_, "cannot read");
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void PosixFile::pwrite_all(const void* buffer, std::size_t size, std::uint64_t offset) {
  const auto* in = static_cast<const char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd_, in + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, path_, "cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
}

void PosixFile::truncate(std::uint64_t size) {
  int rc;
  do {
    rc = ::ftruncate(fd_, static_cast<off_t>(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) throw_errno(errno, path_, "cannot truncate");
}

void PosixFile::sync_data() {
  if (::fdatasync(fd_) != 0) throw_errno(errno, path_, "cannot fdatasync");
}

bool PosixFile::try_lock_exclusive() {
  int rc;
  do {
    rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return true;
  if (errno == EWOULDBLOCK) return false;
  throw_errno(errno, path_, "cannot lock");
}

void PosixFile::close() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);  // closing also releases the flock held through this descriptor
    fd_ = -1;
  }
}

void sync_parent_directory(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  PosixFile d = PosixFile::open(dir, O_RDONLY | O_DIRECTORY);
  if (::fsync(d.fd()) != 0) throw_errno(errno, dir, "cannot fsync directory");
}

}  // namespace luminamoon::data::internal
