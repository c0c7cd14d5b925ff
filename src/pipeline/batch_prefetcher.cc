// BatchPrefetcher: the bounded producer thread (pipeline/batch_prefetcher.h).
#include "luminamoon/data/pipeline/batch_prefetcher.h"

#include <utility>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace luminamoon::data {

BatchPrefetcher::BatchPrefetcher(Produce produce, std::size_t depth)
    : produce_(std::move(produce)), depth_(depth == 0 ? 1 : depth) {
  thread_ = std::thread([this] { run(); });
}

BatchPrefetcher::~BatchPrefetcher() { stop(); }

void BatchPrefetcher::run() {
#if defined(__linux__)
  // Named for ps/top/gdb and for the tests that prove no prefetch thread outlives its stream.
  pthread_setname_np(pthread_self(), "lm-prefetch");
#endif
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || queue_.size() < depth_; });
      if (stopping_) break;
    }
    Item item;
    bool more = false;
    try {
      more = produce_(item);
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
      break;
    }
    if (!more) break;
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
    changed_.notify_all();
  }
  std::lock_guard lock(mutex_);
  finished_ = true;
  changed_.notify_all();
}

BatchPrefetcher::Item BatchPrefetcher::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !queue_.empty() || finished_ || stopping_; });
  if (!queue_.empty()) {
    Item item = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return item;
  }
  if (error_) {
    std::exception_ptr error = std::exchange(error_, nullptr);
    std::rethrow_exception(error);
  }
  return nullptr;
}

void BatchPrefetcher::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace luminamoon::data
