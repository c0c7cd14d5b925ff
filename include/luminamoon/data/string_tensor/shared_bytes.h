// SharedBytes: an immutable byte range plus the owner that keeps it alive. Every buffer of a
// StringTensor is one, so slices, views and Arrow/NumPy/DLPack exports share memory by copying a
// shared_ptr, never the bytes. The owner may be our own allocation, a producer's ArrowArray or a
// Python object; its deleter runs when the last range referring to it goes.
//
// Contract notes:
//  * the bytes are never written after construction (`allocate` hands out the one writable
//    pointer, to be filled before the range is shared);
//  * copying a SharedBytes is thread-safe (shared_ptr reference counting); so is reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace luminamoon::data {

class SharedBytes {
 public:
  // Arrow recommends 64-byte alignment (and padding) for buffers; allocate() provides both.
  static constexpr std::size_t kAlignment = 64;

  SharedBytes() noexcept = default;
  SharedBytes(std::shared_ptr<const void> owner, const std::uint8_t* data,
              std::size_t size) noexcept
      : owner_(std::move(owner)), data_(data), size_(size) {}

  // A new 64-byte aligned block of `size` bytes (never a null pointer, also for size 0). The
  // padding up to the next multiple of 64 is zeroed; the `size` bytes are not initialised:
  // `*writable` receives the pointer to fill before the range is shared.
  static SharedBytes allocate(std::size_t size, std::uint8_t** writable);
  static SharedBytes copy_of(std::span<const std::uint8_t> bytes);

  const std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::span<const std::uint8_t> span() const noexcept { return {data_, size_}; }
  const std::shared_ptr<const void>& owner() const noexcept { return owner_; }

  // [offset, offset + size) of this range, sharing its owner. Throws std::out_of_range.
  SharedBytes subrange(std::size_t offset, std::size_t size) const;

 private:
  std::shared_ptr<const void> owner_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace luminamoon::data
