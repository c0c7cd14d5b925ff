#include "luminamoon/data/pipeline/batch_prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

namespace luminamoon::data {
namespace {

BatchPrefetcher::Produce counter(int count, std::atomic<int>& produced) {
  return [count, &produced](BatchPrefetcher::Item& item) {
    const int n = produced.load();
    if (n == count) return false;
    item = std::make_shared<int>(n);
    produced.store(n + 1);
    return true;
  };
}

int value(const BatchPrefetcher::Item& item) { return *static_cast<const int*>(item.get()); }

TEST(BatchPrefetcher, DeliversEveryItemInOrderThenTheEnd) {
  std::atomic<int> produced{0};
  BatchPrefetcher prefetcher(counter(50, produced), 3);
  for (int i = 0; i < 50; ++i) {
    auto item = prefetcher.next();
    ASSERT_NE(item, nullptr);
    EXPECT_EQ(value(item), i);
  }
  EXPECT_EQ(prefetcher.next(), nullptr);
  EXPECT_EQ(prefetcher.next(), nullptr);
}

TEST(BatchPrefetcher, StaysAtMostDepthAhead) {
  std::atomic<int> produced{0};
  BatchPrefetcher prefetcher(counter(1000, produced), 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(produced.load(), 5);  // 4 queued + 1 in production
  EXPECT_EQ(value(prefetcher.next()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(produced.load(), 6);
}

TEST(BatchPrefetcher, RethrowsTheProducersErrorAfterItsItems) {
  int n = 0;
  BatchPrefetcher prefetcher(
      [&n](BatchPrefetcher::Item& item) {
        if (n == 2) throw std::runtime_error("shard 3 byte 42: truncated");
        item = std::make_shared<int>(n++);
        return true;
      },
      8);
  EXPECT_EQ(value(prefetcher.next()), 0);
  EXPECT_EQ(value(prefetcher.next()), 1);
  EXPECT_THROW(prefetcher.next(), std::runtime_error);
  EXPECT_EQ(prefetcher.next(), nullptr);
}

TEST(BatchPrefetcher, StopReleasesABlockedProducerAndJoins) {
  std::atomic<int> produced{0};
  auto prefetcher = std::make_unique<BatchPrefetcher>(counter(1 << 30, produced), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  prefetcher->stop();
  const int after_stop = produced.load();
  EXPECT_EQ(prefetcher->next(), nullptr);
  prefetcher->stop();  // idempotent
  prefetcher.reset();
  EXPECT_EQ(produced.load(), after_stop);
}

TEST(BatchPrefetcher, DestructorJoinsWhileTheConsumerIsAway) {
  std::atomic<int> produced{0};
  { BatchPrefetcher prefetcher(counter(1 << 30, produced), 1); }
  EXPECT_LE(produced.load(), 2);
}

}  // namespace
}  // namespace luminamoon::data
