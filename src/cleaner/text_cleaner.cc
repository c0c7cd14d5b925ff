// TextCleaner: options, cumulative counters, and the multi-threaded batch over clean_document.
#include "luminamoon/data/cleaner/text_cleaner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "cleaner/internal/clean_document.h"
#include "cleaner/internal/kernels.h"

namespace luminamoon::data {
namespace {

using cleaner_internal::active_kernels;
using cleaner_internal::clean_document;

// Below this many input bytes per worker a thread costs more than it saves (starting one is
// ~20 us; cleaning runs at GB/s, so 1 MiB is ~0.5 ms of work).
constexpr std::size_t kMinBytesPerWorker = 1 << 20;

unsigned resolve_threads(unsigned threads) {
  if (threads != 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

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
  unicode_spaces_replaced += other.unicode_spaces_replaced;
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
  const cleaner_internal::Kernels& kernels = active_kernels();
  const std::size_t n = texts.size();
  std::vector<std::string> out(n);
  std::size_t total_bytes = 0;
  for (const std::string_view text : texts) total_bytes += text.size();
  const std::size_t workers =
      std::min<std::size_t>({std::max<std::size_t>(total_bytes / kMinBytesPerWorker, 1),
                             n == 0 ? 1 : n, resolve_threads(options_.threads)});

  if (workers == 1) {
    CleanStats local;
    for (std::size_t i = 0; i < n; ++i)
      out[i] = clean_document(texts[i], options_, kernels, local, i);
    std::lock_guard lock(mutex_);
    stats_ += local;
    return out;
  }

  // Documents are handed out in small blocks from a shared counter (sizes vary a lot, so static
  // ranges would leave workers idle); out[i] depends only on texts[i], so the order is fixed.
  const std::size_t block = std::clamp<std::size_t>(n / (workers * 64), 1, 256);
  std::atomic<std::size_t> next{0};
  // The error reported is the one of the smallest index, whichever worker hits it first:
  // documents after a known failure are skipped, documents before it still run.
  std::atomic<std::size_t> first_failure{n};
  std::mutex merge_mutex;
  std::exception_ptr failure;
  CleanStats batch_stats;

  auto work = [&] {
    CleanStats local;
    for (;;) {
      const std::size_t begin = next.fetch_add(block, std::memory_order_relaxed);
      if (begin >= n || begin > first_failure.load(std::memory_order_relaxed)) break;
      const std::size_t end = std::min(n, begin + block);
      for (std::size_t i = begin; i < end; ++i) {
        if (i > first_failure.load(std::memory_order_relaxed)) break;
        try {
          out[i] = clean_document(texts[i], options_, kernels, local, i);
        } catch (...) {
          std::lock_guard lock(merge_mutex);
          if (i < first_failure.load(std::memory_order_relaxed)) {
            first_failure.store(i, std::memory_order_relaxed);
            failure = std::current_exception();
          }
          break;
        }
      }
    }
    std::lock_guard lock(merge_mutex);
    batch_stats += local;
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(workers - 1);
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  }                                              // jthreads join here
  if (failure) std::rethrow_exception(failure);  // a failed batch counts nothing
  std::lock_guard lock(mutex_);
  stats_ += batch_stats;
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
