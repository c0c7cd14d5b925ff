#include "luminamoon/data/common/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace luminamoon::data {
namespace {

TEST(WorkerPool, EveryIndexRunsExactlyOnce) {
  WorkerPool pool(3);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{10000}}) {
    for (const std::size_t block : {std::size_t{0}, std::size_t{1}, std::size_t{64}}) {
      std::vector<std::atomic<int>> hits(n);
      pool.run(n, 4, block, [&](std::size_t begin, std::size_t end, unsigned) {
        for (std::size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
    }
  }
}

TEST(WorkerPool, WorkerSlotsAreDistinctAndBounded) {
  WorkerPool pool(3);
  std::mutex mutex;
  std::set<std::pair<unsigned, std::thread::id>> seen;
  pool.run(4000, 3, 1, [&](std::size_t, std::size_t, unsigned worker) {
    std::lock_guard lock(mutex);
    seen.emplace(worker, std::this_thread::get_id());
  });
  std::set<unsigned> slots;
  std::set<std::thread::id> threads;
  for (const auto& [slot, id] : seen) {
    EXPECT_LT(slot, 3U);
    slots.insert(slot);
    threads.insert(id);
  }
  // One slot per thread: per-worker partial results are never shared.
  EXPECT_EQ(slots.size(), threads.size());
}

TEST(WorkerPool, ZeroThreadPoolRunsOnTheCaller) {
  WorkerPool none(0);  // 0 = hardware concurrency - 1: possibly no thread at all on 1 CPU
  std::size_t sum = 0;
  none.run(100, 1, 10, [&](std::size_t begin, std::size_t end, unsigned worker) {
    EXPECT_EQ(worker, 0U);
    for (std::size_t i = begin; i < end; ++i) sum += i;
  });
  EXPECT_EQ(sum, 4950U);
}

TEST(WorkerPool, RethrowsTheSmallestFailingBlock) {
  WorkerPool pool(3);
  for (int round = 0; round < 20; ++round) {
    try {
      pool.run(1000, 4, 10, [&](std::size_t begin, std::size_t, unsigned) {
        if (begin == 500 || begin == 130 || begin == 900) {
          throw std::runtime_error(std::to_string(begin));
        }
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "130");
    }
  }
}

TEST(WorkerPool, NestedJobsRunInlineWithoutDeadlock) {
  WorkerPool pool(2);
  std::atomic<std::size_t> total{0};
  pool.run(16, 3, 1, [&](std::size_t, std::size_t, unsigned) {
    pool.run(100, 3, 7, [&](std::size_t begin, std::size_t end, unsigned worker) {
      EXPECT_EQ(worker, 0U);
      total.fetch_add(end - begin);
    });
  });
  EXPECT_EQ(total.load(), 1600U);
}

TEST(WorkerPool, ConcurrentCallersShareTheWorkers) {
  WorkerPool pool(2);
  std::vector<std::thread> callers;
  std::vector<std::size_t> sums(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        std::vector<std::size_t> out(1000);
        pool.run(out.size(), 3, 16, [&](std::size_t begin, std::size_t end, unsigned) {
          for (std::size_t i = begin; i < end; ++i) out[i] = i;
        });
        std::size_t s = 0;
        for (std::size_t v : out) s += v;
        sums[static_cast<std::size_t>(c)] += s;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (std::size_t s : sums) EXPECT_EQ(s, 50U * 499500U);
}

TEST(WorkerPool, WorkersFor) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.workers_for(0, 0, 10), 1U);
  EXPECT_EQ(pool.workers_for(25, 0, 10), 2U);
  EXPECT_EQ(pool.workers_for(1000, 0, 10), 4U);
  EXPECT_EQ(pool.workers_for(1000, 2, 10), 2U);
  EXPECT_EQ(pool.workers_for(1000, 64, 10), 4U);
  EXPECT_EQ(resolve_thread_count(5), 5U);
  EXPECT_GE(resolve_thread_count(0), 1U);
}

}  // namespace
}  // namespace luminamoon::data
