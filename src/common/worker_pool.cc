// WorkerPool: persistent threads that join jobs posted by callers (see worker_pool.h).
#include "luminamoon/data/common/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace luminamoon::data {
namespace {

// Set while a thread runs blocks of a job: a job started from inside one runs inline.
thread_local bool t_inside_job = false;

struct Job {
  std::size_t n = 0;
  std::size_t block = 1;
  const WorkerPool::Body* body = nullptr;
  unsigned helpers_wanted = 0;  // pool threads that may join (workers - 1)
  unsigned helpers_joined = 0;  // guarded by the pool mutex
  unsigned helpers_active = 0;  // guarded by the pool mutex
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failure{std::numeric_limits<std::size_t>::max()};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::condition_variable helpers_done;
};

void execute(Job& job, unsigned worker) {
  const bool was_inside = t_inside_job;
  t_inside_job = true;
  for (;;) {
    const std::size_t begin = job.next.fetch_add(job.block, std::memory_order_relaxed);
    if (begin >= job.n) break;
    if (begin > job.first_failure.load(std::memory_order_relaxed)) break;
    const std::size_t end = std::min(job.n, begin + job.block);
    try {
      (*job.body)(begin, end, worker);
    } catch (...) {
      std::lock_guard lock(job.failure_mutex);
      if (begin < job.first_failure.load(std::memory_order_relaxed)) {
        job.first_failure.store(begin, std::memory_order_relaxed);
        job.failure = std::current_exception();
      }
    }
  }
  t_inside_job = was_inside;
}

}  // namespace

struct WorkerPool::State {
  std::mutex mutex;
  std::condition_variable work_available;
  std::deque<Job*> jobs;  // jobs that still accept helpers
  std::vector<std::thread> threads;
  bool stopping = false;

  void worker_loop() {
    std::unique_lock lock(mutex);
    for (;;) {
      work_available.wait(lock, [&] { return stopping || !jobs.empty(); });
      if (stopping) return;
      Job* job = jobs.front();
      const unsigned slot = ++job->helpers_joined;
      ++job->helpers_active;
      if (job->helpers_joined == job->helpers_wanted) jobs.pop_front();
      lock.unlock();
      execute(*job, slot);
      lock.lock();
      if (--job->helpers_active == 0) job->helpers_done.notify_all();
    }
  }
};

WorkerPool::WorkerPool(unsigned threads) : state_(std::make_unique<State>()) {
  if (threads == 0) threads = resolve_thread_count(0) - 1;
  state_->threads.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) {
    state_->threads.emplace_back([s = state_.get()] { s->worker_loop(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->work_available.notify_all();
  for (std::thread& t : state_->threads) t.join();
}

WorkerPool& WorkerPool::shared() {
  // Never destroyed: stages may still run jobs from static destructors of other objects, and
  // joining threads during process exit is what leaves programs hanging.
  static WorkerPool* const pool = new WorkerPool(0);
  return *pool;
}

unsigned WorkerPool::threads() const noexcept {
  return static_cast<unsigned>(state_->threads.size());
}

unsigned WorkerPool::workers_for(std::size_t n, unsigned max_workers,
                                 std::size_t min_items_per_worker) const {
  const std::size_t available = std::size_t{threads()} + 1;
  std::size_t workers =
      max_workers == 0 ? available : std::min<std::size_t>(max_workers, available);
  const std::size_t by_size = n / std::max<std::size_t>(min_items_per_worker, 1);
  workers = std::min(workers, std::max<std::size_t>(by_size, 1));
  return static_cast<unsigned>(workers);
}

void WorkerPool::run(std::size_t n, unsigned workers, std::size_t block, const Body& body) {
  if (n == 0) return;
  if (block == 0) {
    block = std::clamp<std::size_t>(n / (std::size_t{std::max(workers, 1u)} * 64), 1, 256);
  }
  workers = std::min(std::max(workers, 1u), threads() + 1);
  Job job;
  job.n = n;
  job.block = block;
  job.body = &body;
  job.helpers_wanted = t_inside_job ? 0 : workers - 1;
  if (job.helpers_wanted > 0) {
    {
      std::lock_guard lock(state_->mutex);
      state_->jobs.push_back(&job);
    }
    if (job.helpers_wanted == 1) {
      state_->work_available.notify_one();
    } else {
      state_->work_available.notify_all();
    }
  }
  execute(job, 0);
  if (job.helpers_wanted > 0) {
    std::unique_lock lock(state_->mutex);
    // No new helper may join a job whose blocks are all handed out.
    auto it = std::find(state_->jobs.begin(), state_->jobs.end(), &job);
    if (it != state_->jobs.end()) state_->jobs.erase(it);
    job.helpers_done.wait(lock, [&] { return job.helpers_active == 0; });
  }
  if (job.failure) std::rethrow_exception(job.failure);
}

unsigned resolve_thread_count(unsigned threads) noexcept {
  if (threads != 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

}  // namespace luminamoon::data
