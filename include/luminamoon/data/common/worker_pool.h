// WorkerPool: the one scheduler every stage runs its batch work on (reading, cleaning, quality,
// hashing, signatures, masking), instead of a thread fork-join per stage and per call.
//
// A job is a loop over [0, n) cut into blocks that workers take from a shared counter (document
// sizes vary a lot, so static ranges would leave workers idle). The caller always works on its
// own job too, so a job never waits for a free worker and a pool of zero threads still runs.
//
// Contract notes:
//  * results never depend on the number of workers: each block is handed to exactly one worker,
//    and callers write per-index outputs or merge per-worker partials in worker order;
//  * a job runs on at most `max_workers` threads (the caller included); 0 = every pool thread;
//  * if the body throws, the exception of the smallest failing block index is rethrown in the
//    caller once every worker has left the job; blocks after a known failure are skipped;
//  * nested jobs (a body that starts a job) run inline on the calling worker: no deadlock;
//  * thread-safe: any number of threads may run jobs at once; they share the workers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace luminamoon::data {

class WorkerPool {
 public:
  // A block of the loop: indices [begin, end), run by worker `worker` (0 = the calling thread,
  // 1..workers-1 = pool threads; a stable slot for per-worker partial results).
  using Body = std::function<void(std::size_t begin, std::size_t end, unsigned worker)>;

  // `threads` pool threads besides callers; 0 = hardware concurrency - 1.
  explicit WorkerPool(unsigned threads = 0);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The process-wide pool (hardware concurrency - 1 threads, started on first use).
  static WorkerPool& shared();

  // The number of workers a job over `n` items with `max_workers` (0 = all) would use: at most
  // n / min_items_per_worker (at least 1), at most threads() + 1.
  unsigned workers_for(std::size_t n, unsigned max_workers, std::size_t min_items_per_worker) const;

  // Runs body over [0, n) in blocks of `block` items (0 = chosen from n and the workers) on
  // `workers` threads (the caller is worker 0); returns when every block has run. See the notes.
  void run(std::size_t n, unsigned workers, std::size_t block, const Body& body);

  // Pool threads (not counting callers).
  unsigned threads() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// `threads` as the stages' options mean it: 0 = every core (hardware concurrency, at least 1).
unsigned resolve_thread_count(unsigned threads) noexcept;

}  // namespace luminamoon::data
