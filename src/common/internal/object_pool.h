// Objects kept from one call to the next, whichever thread makes the call: a scratch buffer that
// a call would otherwise allocate (and first touch) afresh. take() hands out a kept object, or a
// new one when none is kept; the Lease gives it back when it goes, and the pool keeps at most
// `keep` of them (the rest are freed). One mutex, taken twice a lease.
//
// Not a thread_local: glibc frees a thread's dynamic TLS block (the library is loaded with
// dlopen) from the thread that reaps it, after the thread's TLS destructors ran, and
// ThreadSanitizer does not see the order between the two: a thread_local with a destructor was a
// reported data race at the exit of every Python thread that had used it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace luminamoon::data::internal {

template <typename T>
class ObjectPool {
 public:
  explicit ObjectPool(std::size_t keep) : keep_(keep) {
    free_.reserve(keep);  // so that give_back never allocates
  }
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;

  // An object of the pool's for as long as the lease lives.
  class Lease {
   public:
    explicit Lease(ObjectPool& pool) : pool_(&pool), object_(pool.take()) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (object_) pool_->give_back(std::move(object_));
    }
    T& operator*() const noexcept { return *object_; }
    T* operator->() const noexcept { return object_.get(); }

   private:
    ObjectPool* pool_;
    std::unique_ptr<T> object_;
  };

  // How many objects the pool keeps now (tests).
  std::size_t kept() const {
    std::lock_guard lock(mutex_);
    return free_.size();
  }

 private:
  std::unique_ptr<T> take() {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<T> object = std::move(free_.back());
        free_.pop_back();
        return object;
      }
    }
    return std::make_unique<T>();
  }
  void give_back(std::unique_ptr<T> object) noexcept {
    std::lock_guard lock(mutex_);
    if (free_.size() < keep_) free_.push_back(std::move(object));  // else freed here
  }

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<T>> free_;
  std::size_t keep_;
};

}  // namespace luminamoon::data::internal
