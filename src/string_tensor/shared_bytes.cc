// SharedBytes: 64-byte aligned, padded allocations and owner-sharing subranges.
#include "luminamoon/data/string_tensor/shared_bytes.h"

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace luminamoon::data {

SharedBytes SharedBytes::allocate(std::size_t size, std::uint8_t** writable) {
  // Rounded up to a multiple of 64 (at least 64): Arrow's recommended padding, and a non-null
  // pointer even for empty buffers, which some consumers require.
  const std::size_t padded =
      size == 0 ? kAlignment : (size + kAlignment - 1) / kAlignment * kAlignment;
  if (padded < size) throw std::bad_alloc();
  auto* block = static_cast<std::uint8_t*>(::operator new (padded, std::align_val_t{kAlignment}));
  std::memset(block + size, 0, padded - size);
  std::shared_ptr<const void> owner(block, [](const void* p) {
    ::operator delete (const_cast<void*>(p), std::align_val_t{kAlignment});
  });
  *writable = block;
  return SharedBytes(std::move(owner), block, size);
}

SharedBytes SharedBytes::copy_of(std::span<const std::uint8_t> bytes) {
  std::uint8_t* out = nullptr;
  SharedBytes result = allocate(bytes.size(), &out);
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return result;
}

SharedBytes SharedBytes::subrange(std::size_t offset, std::size_t size) const {
  if (offset > size_ || size > size_ - offset) {
    throw std::out_of_range("SharedBytes::subrange: [" + std::to_string(offset) + ", +" +
                            std::to_string(size) + ") is outside a range of " +
                            std::to_string(size_) + " bytes");
  }
  return SharedBytes(owner_, data_ + offset, size);
}

}  // namespace luminamoon::data
