// BatchPrefetcher: runs a producer on its own thread, a bounded number of items ahead of the
// consumer (ResumablePipeline's native prefetch: read a shard and run the FusedPipeline while
// the training step runs).
//
// Contract notes:
//  * `produce(item)` is called on the prefetch thread only, one call at a time, in order; it
//    fills `item` and returns true, or returns false at the end of the stream. Whatever it
//    touches must be safe to use from that thread while the consumer runs (the reader is the
//    thread's alone; the deduplicators are thread-safe);
//  * at most `depth` produced items wait in the queue; the producer blocks when it is full
//    (backpressure), so memory is bounded by (depth + 1) items;
//  * an exception thrown by `produce` ends the stream: next() rethrows it once, after the items
//    produced before it, then reports the end;
//  * stop() (also the destructor) makes a blocked producer return, waits for the thread to
//    finish its current item and joins it; it never leaves a thread behind. Idempotent;
//  * on Linux the thread is named "lm-prefetch".
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace luminamoon::data {

class BatchPrefetcher {
 public:
  using Item = std::shared_ptr<void>;
  using Produce = std::function<bool(Item&)>;

  BatchPrefetcher(Produce produce, std::size_t depth);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The next item in production order (blocks until there is one); nullptr at the end of the
  // stream or after stop(). Rethrows the producer's exception once.
  Item next();

  void stop() noexcept;

 private:
  void run();

  Produce produce_;
  std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;
  std::exception_ptr error_;
  bool finished_ = false;  // the producer returned (end, error or stop)
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace luminamoon::data
