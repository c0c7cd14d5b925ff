// TextCleaner: options, cumulative counters, and the batch over clean_document on the shared
// worker pool.
#include "luminamoon/data/cleaner/text_cleaner.h"

#include <algorithm>

#include "luminamoon/data/common/worker_pool.h"

#include "cleaner/internal/clean_document.h"
#include "cleaner/internal/kernels.h"

namespace luminamoon::data {
namespace {

using cleaner_internal::active_kernels;
using cleaner_internal::clean_document;

// Below this many input bytes per worker a second worker costs more than it saves (waking one
// is a few us; cleaning runs at GB/s, so 256 KiB is ~0.1 ms of work).
constexpr std::size_t kMinBytesPerWorker = 256 << 10;

}  // namespace

CleanStats& CleanStats::operator+=(const CleanStats& other) noexcept {
  documents += other.documents;
  documents_changed += other.documents_changed;
  bytes_in += other.bytes_in;
  bytes_out += other.bytes_out;
  invalid_sequences_replaced += other.invalid_sequences_replaced;
  invalid_bytes_replaced += other.invalid_bytes_replaced;
  newlines_normalized += other.newlines_normalized;
  controls_removed += other.controls_removed;
  whitespace_runs_collapsed += other.whitespace_runs_collapsed;
  trailing_spaces_removed += other.trailing_spaces_removed;
  newline_runs_limited += other.newline_runs_limited;
  whitespace_stripped += other.whitespace_stripped;
  nfc_changed_documents += other.nfc_changed_documents;
  return *this;
}

TextCleaner::TextCleaner(TextCleanerOptions options) : options_(options) {
  (void)active_kernels();  // a bad LUMINAMOON_SIMD is a ConfigError now, not on first clean
}

std::string TextCleaner::clean(std::string_view text) {
  CleanStats local;
  std::string out = clean_document(text, options_, active_kernels(), local);
  std::lock_guard lock(mutex_);
  stats_ += local;
  return out;
}

std::vector<std::string> TextCleaner::clean_batch(std::span<const std::string_view> texts) {
  CleanStats batch_stats;
  std::vector<std::string> out = clean_batch(texts, batch_stats);
  std::lock_guard lock(mutex_);
  stats_ += batch_stats;
  return out;
}

std::vector<std::string> TextCleaner::clean_batch(std::span<const std::string_view> texts,
                                                  CleanStats& batch_stats) const {
  const cleaner_internal::Kernels& kernels = active_kernels();
  const std::size_t n = texts.size();
  std::vector<std::string> out(n);
  std::size_t total_bytes = 0;
  for (const std::string_view text : texts) total_bytes += text.size();
  WorkerPool& pool = WorkerPool::shared();
  const unsigned workers =
      std::min<unsigned>(pool.workers_for(total_bytes, options_.threads, kMinBytesPerWorker),
                         static_cast<unsigned>(std::max<std::size_t>(n, 1)));
  // out[i] depends only on texts[i]; the counters are summed per worker, then in worker order.
  // With repair_utf8 off the pool rethrows the error of the smallest failing index, and a
  // failed batch counts nothing.
  std::vector<CleanStats> partial(workers);
  pool.run(n, workers, 0, [&](std::size_t begin, std::size_t end, unsigned worker) {
    for (std::size_t i = begin; i < end; ++i) {
      out[i] = clean_document(texts[i], options_, kernels, partial[worker], i);
    }
  });
  CleanStats sum;
  for (const CleanStats& p : partial) sum += p;
  batch_stats = sum;
  return out;
}

CleanStats TextCleaner::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void TextCleaner::reset_stats() {
  std::lock_guard lock(mutex_);
  stats_ = {};
}

}  // namespace luminamoon::data
