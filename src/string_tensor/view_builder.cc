// Views over a contiguous payload, cut into Arrow data buffers at 2 GiB.
#include "string_tensor/internal/view_builder.h"

#include <cstring>

#include "luminamoon/data/string_tensor/binary_view.h"

namespace luminamoon::data::string_tensor_internal {
namespace {

// An inline view of `length` (<= 12) bytes at `p`, where 12 bytes are readable: two fixed-size
// loads and a mask instead of a variable-length copy (this loop runs once per string).
BinaryView inline_view_of_12(const std::uint8_t* p, std::uint32_t length) noexcept {
  std::uint64_t low;
  std::uint32_t high;
  std::memcpy(&low, p, 8);
  std::memcpy(&high, p + 8, 4);
  if (length < 8) {
    low = length == 0 ? 0 : low & (~std::uint64_t{0} >> (64 - 8 * length));
    high = 0;
  } else if (length < 12) {
    high = length == 8 ? 0 : high & (~std::uint32_t{0} >> (32 - 8 * (length - 8)));
  }
  BinaryView v{length, {}};
  std::memcpy(v.bytes.data(), &low, 8);
  std::memcpy(v.bytes.data() + 8, &high, 4);
  return v;
}

template <typename Offset>
void fill_views(const ContiguousStrings& strings, std::uint64_t max_buffer_bytes, BinaryView* views,
                std::vector<std::uint64_t>& starts) {
  const std::size_t n = strings.size;
  const std::uint8_t* offsets = strings.offsets.data();
  const std::uint8_t* payload = strings.payload.data();
  const std::uint64_t readable = strings.payload.size();
  auto load = [offsets](std::size_t i) {
    Offset v;
    std::memcpy(&v, offsets + sizeof(Offset) * i, sizeof(Offset));
    return std::uint64_t{v};
  };
  std::uint64_t begin = load(0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t end = load(i + 1);
    const auto length = static_cast<std::uint32_t>(end - begin);
    if (length <= BinaryView::kInlineCapacity) {
      views[i] = begin + BinaryView::kInlineCapacity <= readable
                     ? inline_view_of_12(payload + begin, length)
                     : BinaryView::make_inline(payload + begin, length);
    } else {
      if (end - starts.back() > max_buffer_bytes) starts.push_back(begin);
      views[i] = BinaryView::make_reference(payload + begin, length,
                                            static_cast<std::uint32_t>(starts.size() - 1),
                                            static_cast<std::uint32_t>(begin - starts.back()));
    }
    begin = end;
  }
}

}  // namespace

ViewsAndBuffers build_views(const ContiguousStrings& strings, std::uint64_t max_buffer_bytes) {
  std::uint8_t* out = nullptr;
  ViewsAndBuffers result;
  result.views = SharedBytes::allocate(strings.size * sizeof(BinaryView), &out);
  auto* views = reinterpret_cast<BinaryView*>(out);
  std::vector<std::uint64_t> starts{0};  // first byte of each data buffer
  if (strings.width == OffsetWidth::k32) {
    fill_views<std::uint32_t>(strings, max_buffer_bytes, views, starts);
  } else {
    fill_views<std::uint64_t>(strings, max_buffer_bytes, views, starts);
  }
  const std::uint64_t last = strings.offset(strings.size);
  result.buffers.reserve(starts.size());
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::uint64_t stop = k + 1 < starts.size() ? starts[k + 1] : last;
    result.buffers.push_back(strings.payload.subrange(starts[k], stop - starts[k]));
  }
  return result;
}

}  // namespace luminamoon::data::string_tensor_internal
