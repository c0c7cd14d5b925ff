// ObjectPool: a kept object is handed out again, at most `keep` are kept, and leases taken and
// given back from many threads at once each hold an object of their own.
#include "common/internal/object_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace luminamoon::data::internal {
namespace {

struct Counted {
  static inline std::atomic<int> alive{0};
  int value = 0;
  Counted() { ++alive; }
  ~Counted() { --alive; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
};

TEST(ObjectPool, KeptObjectsAreHandedOutAgain) {
  ObjectPool<Counted> pool(2);
  const Counted* first = nullptr;
  {
    const ObjectPool<Counted>::Lease lease(pool);
    lease->value = 7;
    first = &*lease;
    EXPECT_EQ(pool.kept(), 0U);
  }
  EXPECT_EQ(pool.kept(), 1U);
  const ObjectPool<Counted>::Lease again(pool);
  EXPECT_EQ(&*again, first);  // the same object, as it was left
  EXPECT_EQ(again->value, 7);
  EXPECT_EQ(pool.kept(), 0U);
}

TEST(ObjectPool, KeepsAtMostItsLimit) {
  const int before = Counted::alive;
  {
    ObjectPool<Counted> pool(2);
    {
      std::vector<ObjectPool<Counted>::Lease> leases;
      for (int i = 0; i < 5; ++i) leases.emplace_back(pool);  // moved as the vector grows
      EXPECT_EQ(Counted::alive - before, 5);
      std::vector<const Counted*> distinct;
      for (const auto& lease : leases) distinct.push_back(&*lease);
      std::sort(distinct.begin(), distinct.end());
      EXPECT_EQ(std::unique(distinct.begin(), distinct.end()), distinct.end());
    }
    EXPECT_EQ(pool.kept(), 2U);
    EXPECT_EQ(Counted::alive - before, 2);  // the other three were freed
  }
  EXPECT_EQ(Counted::alive, before);
}

TEST(ObjectPool, ManyThreadsEachHoldTheirOwn) {
  ObjectPool<Counted> pool(4);
  std::atomic<bool> shared{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool, &shared, t] {
      for (int round = 0; round < 2000; ++round) {
        const ObjectPool<Counted>::Lease lease(pool);
        lease->value = t;
        std::this_thread::yield();
        if (lease->value != t) shared = true;  // another thread wrote to it meanwhile
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(shared);
  EXPECT_LE(pool.kept(), 4U);
}

}  // namespace
}  // namespace luminamoon::data::internal
