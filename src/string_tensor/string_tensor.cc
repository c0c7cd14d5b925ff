// StringTensor: construction (strings, offsets + payload, views, NumPy fixed-width), the
// operations that share or gather views, and the conversion to the contiguous layout.
#include "luminamoon/data/string_tensor/string_tensor.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "common/internal/utf8.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/xxh3.h"
#include "string_tensor/internal/utf8_validation.h"
#include "string_tensor/internal/view_builder.h"

namespace luminamoon::data {

using string_tensor_internal::build_views;
using string_tensor_internal::is_valid_utf8;
using string_tensor_internal::throw_invalid_utf8;
using string_tensor_internal::validate_contiguous_utf8;

namespace {

std::size_t bytes_of(OffsetWidth width) noexcept { return static_cast<std::size_t>(width); }

void store_offset(std::uint8_t* offsets, OffsetWidth width, std::size_t i, std::uint64_t value) {
  if (width == OffsetWidth::k32) {
    const auto v = static_cast<std::uint32_t>(value);
    std::memcpy(offsets + 4 * i, &v, 4);
  } else {
    std::memcpy(offsets + 8 * i, &value, 8);
  }
}

OffsetWidth width_for(std::uint64_t payload_size) noexcept {
  return payload_size <= kMaxPayloadForU32Offsets ? OffsetWidth::k32 : OffsetWidth::k64;
}

[[noreturn]] void throw_too_long(std::size_t index, std::uint64_t length) {
  throw InvalidArgument("element " + std::to_string(index) + " is " + std::to_string(length) +
                        " bytes long; a StringTensor element holds at most 2^31 - 1 bytes "
                        "(Arrow's limit for one string view)");
}

const std::vector<SharedBytes>& no_buffers() {
  static const std::vector<SharedBytes> empty;
  return empty;
}

// New offsets (n + 1 entries of `width`) and payload filled by `fill(offsets, payload)`.
template <typename Fill>
ContiguousStrings allocate_contiguous(std::size_t n, std::uint64_t payload_size, OffsetWidth width,
                                      Fill&& fill) {
  ContiguousStrings c;
  c.width = width;
  c.size = n;
  std::uint8_t* offsets = nullptr;
  std::uint8_t* payload = nullptr;
  c.offsets = SharedBytes::allocate((n + 1) * bytes_of(width), &offsets);
  c.payload = SharedBytes::allocate(static_cast<std::size_t>(payload_size), &payload);
  fill(offsets, payload);
  return c;
}

// Code point -> UTF-8 length; 0 for surrogates and values past U+10FFFF.
std::size_t utf8_length(std::uint32_t cp) noexcept {
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  if (cp < 0x10000) return 3;
  if (cp <= 0x10FFFF) return 4;
  return 0;
}

std::uint8_t* encode_utf8(std::uint8_t* out, std::uint32_t cp) noexcept {
  return out + utf8_internal::encode(cp, out);  // the common encoder (common/internal/utf8.h)
}

}  // namespace

// -- construction -----------------------------------------------------------------------------

StringTensor StringTensor::from_valid_contiguous(ContiguousStrings strings) {
  string_tensor_internal::ViewsAndBuffers vb = build_views(strings);
  StringTensor t;
  t.views_ = reinterpret_cast<const BinaryView*>(vb.views.data());
  t.views_owner_ = vb.views.owner();
  t.size_ = strings.size;
  t.buffers_ = std::make_shared<const std::vector<SharedBytes>>(std::move(vb.buffers));
  t.contiguous_ = std::move(strings);
  return t;
}

StringTensor StringTensor::from_strings(std::span<const std::string_view> strings, Utf8 utf8) {
  const std::size_t n = strings.size();
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (strings[i].size() > BinaryView::kMaxLength) throw_too_long(i, strings[i].size());
    total += strings[i].size();
  }
  const OffsetWidth width = width_for(total);
  ContiguousStrings c =
      allocate_contiguous(n, total, width, [&](std::uint8_t* offsets, std::uint8_t* payload) {
        std::uint64_t pos = 0;
        for (std::size_t i = 0; i < n; ++i) {
          store_offset(offsets, width, i, pos);
          if (!strings[i].empty()) std::memcpy(payload + pos, strings[i].data(), strings[i].size());
          pos += strings[i].size();
        }
        store_offset(offsets, width, n, pos);
      });
  if (utf8 == Utf8::kValidate) validate_contiguous_utf8(c, 0);
  return from_valid_contiguous(std::move(c));
}

StringTensor StringTensor::from_contiguous(ContiguousStrings strings, std::size_t base_index) {
  const std::size_t n = strings.size;
  const std::size_t w = bytes_of(strings.width);
  if (strings.offsets.size() / w < n + 1 || n + 1 == 0) {
    throw InvalidArgument("offsets: expected " + std::to_string(n) + " + 1 entries, got " +
                          std::to_string(strings.offsets.size() / w));
  }
  strings.offsets = strings.offsets.subrange(0, (n + 1) * w);
  const std::uint64_t payload_size = strings.payload.size();
  std::uint64_t previous = strings.offset(0);
  if (previous > payload_size) {
    throw InvalidArgument("offsets[0] = " + std::to_string(previous) +
                          " is past the end of the payload (" + std::to_string(payload_size) +
                          " bytes)");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t next = strings.offset(i + 1);
    if (next < previous) {
      throw InvalidArgument("offsets must not decrease: offsets[" + std::to_string(i + 1) +
                            "] = " + std::to_string(next) + " < offsets[" + std::to_string(i) +
                            "] = " + std::to_string(previous) + " (element " +
                            std::to_string(base_index + i) + ")");
    }
    if (next > payload_size) {
      throw InvalidArgument("offsets[" + std::to_string(i + 1) + "] = " + std::to_string(next) +
                            " is past the end of the payload (" + std::to_string(payload_size) +
                            " bytes; element " + std::to_string(base_index + i) + ")");
    }
    if (next - previous > BinaryView::kMaxLength) throw_too_long(base_index + i, next - previous);
    previous = next;
  }
  validate_contiguous_utf8(strings, base_index);
  return from_valid_contiguous(std::move(strings));
}

StringTensor StringTensor::from_views(SharedBytes views, std::size_t size,
                                      std::vector<SharedBytes> buffers, std::size_t base_index) {
  if (views.size() / sizeof(BinaryView) < size) {
    throw InvalidArgument("views: expected " + std::to_string(size) + " views (" +
                          std::to_string(size) + " x 16 bytes), got " +
                          std::to_string(views.size()) + " bytes");
  }
  const std::uint8_t* raw = views.data();
  bool repair = reinterpret_cast<std::uintptr_t>(raw) % alignof(BinaryView) != 0;
  for (std::size_t i = 0; i < size; ++i) {
    BinaryView v;
    std::memcpy(&v, raw + i * sizeof(BinaryView), sizeof(BinaryView));
    if (v.length > BinaryView::kMaxLength) {
      throw InvalidArgument("element " + std::to_string(base_index + i) + ": negative view length");
    }
    if (v.is_inline()) {
      for (std::size_t j = v.length; j < BinaryView::kInlineCapacity; ++j) {
        if (v.bytes[j] != 0) repair = true;  // padding must be zero for the 16-byte compare
      }
      const std::string_view s(reinterpret_cast<const char*>(v.bytes.data()), v.length);
      if (!is_valid_utf8(s)) throw_invalid_utf8(base_index + i, s);
      continue;
    }
    const std::uint32_t index = v.buffer_index();
    const std::uint32_t offset = v.offset();
    if (index >= buffers.size()) {
      throw InvalidArgument("element " + std::to_string(base_index + i) +
                            ": view refers to data buffer " + std::to_string(index) +
                            ", but there are " + std::to_string(buffers.size()));
    }
    const SharedBytes& buffer = buffers[index];
    if (offset > BinaryView::kMaxLength || offset > buffer.size() ||
        v.length > buffer.size() - offset) {
      throw InvalidArgument("element " + std::to_string(base_index + i) + ": view [" +
                            std::to_string(offset) + ", +" + std::to_string(v.length) +
                            ") lies outside data buffer " + std::to_string(index) + " (" +
                            std::to_string(buffer.size()) + " bytes)");
    }
    const std::uint8_t* data = buffer.data() + offset;
    if (std::memcmp(data, v.bytes.data(), BinaryView::kPrefixSize) != 0) {
      throw InvalidArgument("element " + std::to_string(base_index + i) +
                            ": view prefix differs from the first 4 bytes of its string");
    }
    const std::string_view s(reinterpret_cast<const char*>(data), v.length);
    if (!is_valid_utf8(s)) throw_invalid_utf8(base_index + i, s);
  }
  if (repair) {
    std::uint8_t* out = nullptr;
    SharedBytes fixed = SharedBytes::allocate(size * sizeof(BinaryView), &out);
    auto* fixed_views = reinterpret_cast<BinaryView*>(out);
    for (std::size_t i = 0; i < size; ++i) {
      std::memcpy(&fixed_views[i], raw + i * sizeof(BinaryView), sizeof(BinaryView));
      BinaryView& v = fixed_views[i];
      if (v.is_inline()) {
        std::memset(v.bytes.data() + v.length, 0, BinaryView::kInlineCapacity - v.length);
      }
    }
    views = std::move(fixed);
  }
  StringTensor t;
  t.views_ = reinterpret_cast<const BinaryView*>(views.data());
  t.views_owner_ = views.owner();
  t.size_ = size;
  t.buffers_ = std::make_shared<const std::vector<SharedBytes>>(std::move(buffers));
  return t;
}

StringTensor StringTensor::from_utf32(std::span<const std::uint32_t> code_units,
                                      std::size_t width) {
  if (width == 0 ? !code_units.empty() : code_units.size() % width != 0) {
    throw InvalidArgument("UTF-32 input of " + std::to_string(code_units.size()) +
                          " code units is not a whole number of elements of width " +
                          std::to_string(width));
  }
  const std::size_t n = width == 0 ? 0 : code_units.size() / width;
  // Pass 1: UTF-8 sizes (and the checks); pass 2: encode. Trailing U+0000 are padding.
  std::vector<std::uint64_t> lengths(n);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* units = code_units.data() + i * width;
    std::size_t chars = width;
    while (chars > 0 && units[chars - 1] == 0) --chars;
    std::uint64_t bytes = 0;
    for (std::size_t j = 0; j < chars; ++j) {
      const std::size_t len = utf8_length(units[j]);
      if (len == 0) {
        throw InvalidArgument("element " + std::to_string(i) + ": code point " +
                              std::to_string(units[j]) + " at character " + std::to_string(j) +
                              " is not a Unicode scalar value (lone surrogate or past U+10FFFF) "
                              "and has no UTF-8 encoding");
      }
      bytes += len;
    }
    if (bytes > BinaryView::kMaxLength) throw_too_long(i, bytes);
    lengths[i] = bytes;
    total += bytes;
  }
  const OffsetWidth ow = width_for(total);
  ContiguousStrings c =
      allocate_contiguous(n, total, ow, [&](std::uint8_t* offsets, std::uint8_t* payload) {
        std::uint8_t* out = payload;
        for (std::size_t i = 0; i < n; ++i) {
          store_offset(offsets, ow, i, static_cast<std::uint64_t>(out - payload));
          const std::uint32_t* units = code_units.data() + i * width;
          const std::uint8_t* stop = out + lengths[i];
          for (std::size_t j = 0; out < stop; ++j) out = encode_utf8(out, units[j]);
        }
        store_offset(offsets, ow, n, total);
      });
  return from_valid_contiguous(std::move(c));
}

StringTensor StringTensor::from_fixed_width(std::span<const std::uint8_t> bytes,
                                            std::size_t width) {
  if (width == 0 ? !bytes.empty() : bytes.size() % width != 0) {
    throw InvalidArgument("fixed-width input of " + std::to_string(bytes.size()) +
                          " bytes is not a whole number of elements of width " +
                          std::to_string(width));
  }
  const std::size_t n = width == 0 ? 0 : bytes.size() / width;
  std::vector<std::string_view> strings(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto* item = reinterpret_cast<const char*>(bytes.data() + i * width);
    std::size_t len = width;
    while (len > 0 && item[len - 1] == '\0') --len;
    strings[i] = std::string_view(item, len);
  }
  return from_strings(strings);
}

StringTensor StringTensor::concat(std::span<const StringTensor> parts) {
  std::vector<const StringTensor*> nonempty;
  std::size_t total = 0;
  for (const StringTensor& part : parts) {
    if (part.empty()) continue;
    nonempty.push_back(&part);
    total += part.size();
  }
  if (nonempty.empty()) return from_strings({});
  if (nonempty.size() == 1) return *nonempty.front();
  std::uint8_t* out = nullptr;
  SharedBytes views = SharedBytes::allocate(total * sizeof(BinaryView), &out);
  auto* joined = reinterpret_cast<BinaryView*>(out);
  auto buffers = std::make_shared<std::vector<SharedBytes>>();
  for (const StringTensor* part : nonempty) {
    const auto base = static_cast<std::uint32_t>(buffers->size());
    const auto& part_buffers = part->data_buffers();
    if (part_buffers.size() > BinaryView::kMaxLength - buffers->size()) {
      throw InvalidArgument("concat: more than 2^31 - 1 data buffers");
    }
    buffers->insert(buffers->end(), part_buffers.begin(), part_buffers.end());
    for (const BinaryView& v : part->views()) {
      *joined = v;
      if (!v.is_inline() && base != 0) {
        const std::uint32_t index = v.buffer_index() + base;
        std::memcpy(joined->bytes.data() + 4, &index, 4);
      }
      ++joined;
    }
  }
  StringTensor t;
  t.views_ = reinterpret_cast<const BinaryView*>(views.data());
  t.views_owner_ = views.owner();
  t.size_ = total;
  t.buffers_ = std::move(buffers);
  return t;
}

// -- access and operations ----------------------------------------------------------------------

std::string_view StringTensor::operator[](std::size_t i) const noexcept {
  const BinaryView& v = views_[i];
  if (v.is_inline()) return {reinterpret_cast<const char*>(v.bytes.data()), v.length};
  const SharedBytes& buffer = (*buffers_)[v.buffer_index()];
  return {reinterpret_cast<const char*>(buffer.data() + v.offset()), v.length};
}

std::string_view StringTensor::at(std::size_t i) const {
  if (i >= size_) {
    throw std::out_of_range("index " + std::to_string(i) +
                            " is out of range for a StringTensor of " + std::to_string(size_) +
                            " strings");
  }
  return (*this)[i];
}

const std::vector<SharedBytes>& StringTensor::data_buffers() const noexcept {
  return buffers_ ? *buffers_ : no_buffers();
}

StringTensor StringTensor::slice(std::size_t start, std::size_t length) const {
  if (start > size_ || length > size_ - start) {
    throw std::out_of_range("slice [" + std::to_string(start) + ", +" + std::to_string(length) +
                            ") is out of range for a StringTensor of " + std::to_string(size_) +
                            " strings");
  }
  StringTensor t = *this;
  t.views_ = views_ == nullptr ? nullptr : views_ + start;
  t.size_ = length;
  if (contiguous_) {
    const std::size_t w = bytes_of(contiguous_->width);
    t.contiguous_->offsets = contiguous_->offsets.subrange(start * w, (length + 1) * w);
    t.contiguous_->size = length;
  }
  return t;
}

StringTensor StringTensor::take(std::span<const std::uint64_t> indices) const {
  std::uint8_t* out = nullptr;
  SharedBytes views = SharedBytes::allocate(indices.size() * sizeof(BinaryView), &out);
  auto* taken = reinterpret_cast<BinaryView*>(out);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] >= size_) {
      throw std::out_of_range(
          "take: indices[" + std::to_string(k) + "] = " + std::to_string(indices[k]) +
          " is out of range for a StringTensor of " + std::to_string(size_) + " strings");
    }
    taken[k] = views_[indices[k]];
  }
  StringTensor t;
  t.views_ = taken;
  t.views_owner_ = views.owner();
  t.size_ = indices.size();
  t.buffers_ = buffers_;
  return t;
}

StringTensor StringTensor::filter(std::span<const std::uint8_t> mask) const {
  if (mask.size() != size_) {
    throw InvalidArgument("filter: the mask has " + std::to_string(mask.size()) +
                          " entries for a StringTensor of " + std::to_string(size_) +
                          " strings; they must be equal");
  }
  std::size_t kept = 0;
  for (const std::uint8_t m : mask) kept += m != 0 ? 1 : 0;
  std::uint8_t* out = nullptr;
  SharedBytes views = SharedBytes::allocate(kept * sizeof(BinaryView), &out);
  auto* filtered = reinterpret_cast<BinaryView*>(out);
  for (std::size_t i = 0; i < size_; ++i) {
    if (mask[i] != 0) *filtered++ = views_[i];
  }
  StringTensor t;
  t.views_ = reinterpret_cast<const BinaryView*>(views.data());
  t.views_owner_ = views.owner();
  t.size_ = kept;
  t.buffers_ = buffers_;
  return t;
}

bool StringTensor::equals(const StringTensor& other) const noexcept {
  if (size_ != other.size_) return false;
  for (std::size_t i = 0; i < size_; ++i) {
    const BinaryView& a = views_[i];
    const BinaryView& b = other.views_[i];
    if (a.length_and_prefix() != b.length_and_prefix()) return false;
    if (a.is_inline()) {
      if (a.tail_word() != b.tail_word()) return false;  // zero padding: the whole value
      continue;
    }
    const char* pa = (*this)[i].data();
    const char* pb = other[i].data();
    if (pa != pb && std::memcmp(pa + BinaryView::kPrefixSize, pb + BinaryView::kPrefixSize,
                                a.length - BinaryView::kPrefixSize) != 0) {
      return false;
    }
  }
  return true;
}

std::uint64_t StringTensor::hash_at(std::size_t i) const noexcept { return xxh3_64((*this)[i]); }

std::uint64_t StringTensor::payload_size() const noexcept {
  if (contiguous_) return contiguous_->offset(size_) - contiguous_->offset(0);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < size_; ++i) total += views_[i].length;
  return total;
}

std::size_t StringTensor::nbytes() const noexcept {
  std::size_t total = size_ * sizeof(BinaryView);
  for (const SharedBytes& b : data_buffers()) total += b.size();
  if (contiguous_) total += (size_ + 1) * bytes_of(contiguous_->width);
  return total;
}

OffsetWidth StringTensor::natural_width() const noexcept { return width_for(payload_size()); }

ContiguousStrings StringTensor::contiguous() const { return contiguous(natural_width()); }

ContiguousStrings StringTensor::contiguous(OffsetWidth width) const {
  const std::uint64_t total = payload_size();
  if (width == OffsetWidth::k32 && total > kMaxPayloadForU32Offsets) {
    throw InvalidArgument("the payload of " + std::to_string(total) +
                          " bytes does not fit 32-bit offsets; use 64-bit offsets (large_utf8)");
  }
  const std::size_t n = size_;
  if (contiguous_) {
    const ContiguousStrings& kept = *contiguous_;
    const std::uint64_t first = kept.offset(0);
    ContiguousStrings c;
    c.width = width;
    c.size = n;
    c.payload =
        kept.payload.subrange(static_cast<std::size_t>(first), static_cast<std::size_t>(total));
    if (kept.width == width && first == 0) {
      c.offsets = kept.offsets;
      return c;
    }
    std::uint8_t* offsets = nullptr;
    c.offsets = SharedBytes::allocate((n + 1) * bytes_of(width), &offsets);
    for (std::size_t i = 0; i <= n; ++i) store_offset(offsets, width, i, kept.offset(i) - first);
    return c;
  }
  return allocate_contiguous(n, total, width, [&](std::uint8_t* offsets, std::uint8_t* payload) {
    std::uint64_t pos = 0;
    for (std::size_t i = 0; i < n; ++i) {
      store_offset(offsets, width, i, pos);
      const std::string_view s = (*this)[i];
      if (!s.empty()) std::memcpy(payload + pos, s.data(), s.size());
      pos += s.size();
    }
    store_offset(offsets, width, n, pos);
  });
}

StringTensor StringTensor::compact() const {
  const std::size_t n = size_;
  const std::uint64_t total = payload_size();
  const OffsetWidth width = width_for(total);
  return from_valid_contiguous(
      allocate_contiguous(n, total, width, [&](std::uint8_t* offsets, std::uint8_t* payload) {
        std::uint64_t pos = 0;
        for (std::size_t i = 0; i < n; ++i) {
          store_offset(offsets, width, i, pos);
          const std::string_view s = (*this)[i];
          if (!s.empty()) std::memcpy(payload + pos, s.data(), s.size());
          pos += s.size();
        }
        store_offset(offsets, width, n, pos);
      }));
}

// -- StringTensorBuilder ------------------------------------------------------------------------

void StringTensorBuilder::reserve(std::size_t strings, std::size_t bytes) {
  ends_.reserve(strings);
  payload_.reserve(bytes);
}

void StringTensorBuilder::append(std::string_view bytes) {
  if (bytes.size() > BinaryView::kMaxLength) throw_too_long(ends_.size(), bytes.size());
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  payload_.insert(payload_.end(), data, data + bytes.size());
  ends_.push_back(payload_.size());
}

StringTensor StringTensorBuilder::finish() {
  const std::size_t n = ends_.size();
  const OffsetWidth width = width_for(payload_.size());
  ContiguousStrings c;
  c.width = width;
  c.size = n;
  std::uint8_t* offsets = nullptr;
  c.offsets = SharedBytes::allocate((n + 1) * bytes_of(width), &offsets);
  store_offset(offsets, width, 0, 0);
  for (std::size_t i = 0; i < n; ++i) store_offset(offsets, width, i + 1, ends_[i]);
  // The payload vector becomes the buffer (no copy); its allocator's alignment is enough for
  // bytes.
  auto payload = std::make_shared<const std::vector<std::uint8_t>>(std::move(payload_));
  c.payload = SharedBytes(payload, payload->data(), payload->size());
  payload_ = {};
  ends_ = {};
  validate_contiguous_utf8(c, 0);
  return StringTensor::from_valid_contiguous(std::move(c));
}

}  // namespace luminamoon::data
