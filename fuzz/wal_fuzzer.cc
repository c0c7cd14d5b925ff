// Fuzz target: opening a StateTracker over an arbitrary .meta + .dedup pair, then attaching a
// deduplicator and committing. Input: byte 0 = length of the .meta part, the rest after it is
// the WAL. Opening may only succeed or throw CorruptCheckpointError; after a successful open the
// WAL must hold exactly dedup_count hashes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"

namespace {

const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string templ = (std::filesystem::temp_directory_path() / "lm_wal_fuzz_XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    return templ;
  }();
  return dir;
}

void write(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace luminamoon::data;
  if (size == 0) return 0;
  const std::size_t meta_size = std::min<std::size_t>(data[0], size - 1);
  const std::string meta = scratch_dir() + "/fuzz.meta";
  write(meta, data + 1, meta_size);
  write(meta + ".dedup", data + 1 + meta_size, size - 1 - meta_size);
  try {
    StateTracker tracker(meta, {.read_only = false, .durable = false});
    const auto committed = tracker.committed();
    if (std::filesystem::file_size(meta + ".dedup") != std::uint64_t{committed.dedup_count} * 8) {
      std::abort();
    }
    StreamDeduplicator dedup(&tracker);
    dedup.is_unique("fuzz");
    tracker.commit();
    if (tracker.committed().epoch != committed.epoch + 1) std::abort();
  } catch (const CorruptCheckpointError&) {
  }
  return 0;
}
