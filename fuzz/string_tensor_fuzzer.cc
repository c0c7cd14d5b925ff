// Fuzz target: the StringTensor importers of untrusted buffers (from_contiguous = Python's
// from_buffers/from_torch, from_views and the Arrow C Data Interface import). Any input must
// either build a tensor whose every string reads back inside its buffers and survives the
// export/import round trips, or raise InvalidArgument / InvalidType; nothing else.
//
// Input: byte 0 picks the mode (low 2 bits) and n = byte 1 (strings); the rest is split into
// exactly-sized heap copies (so ASan sees any read past an end):
//   mode 0/1: (n + 1) u32/u64 offsets, then the payload       -> from_contiguous
//   mode 2:   n 16-byte views, one split byte, two data buffers -> Arrow "vu" import
//   mode 3:   (n + 1) int32 offsets, then the data             -> Arrow "u" import (signed)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/string_tensor/arrow_bridge.h"
#include "luminamoon/data/string_tensor/string_tensor.h"

namespace {

using namespace luminamoon::data;

// An exactly-sized heap copy (a SharedBytes owning it).
SharedBytes piece(const std::uint8_t*& data, std::size_t& size, std::size_t want) {
  const std::size_t n = want < size ? want : size;
  auto block = std::shared_ptr<std::uint8_t[]>(new std::uint8_t[n == 0 ? 1 : n]);
  if (n != 0) std::memcpy(block.get(), data, n);
  data += n;
  size -= n;
  return SharedBytes(block, block.get(), n);
}

void check(const StringTensor& t) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < t.size(); ++i) total += t[i].size();  // reads every byte range
  if (total != t.payload_size()) std::abort();
  const ContiguousStrings c = t.contiguous();
  if (c.offset(0) != 0 || c.offset(c.size) != total) std::abort();
  for (auto type : {ArrowStringType::kUtf8View, ArrowStringType::kLargeUtf8}) {
    ArrowArray exported;
    export_arrow_array(t, type, &exported);
    ArrowSchema schema;
    export_arrow_schema(type, &schema);
    const StringTensor back = import_arrow_array(schema, &exported);
    schema.release(&schema);
    if (!back.equals(t)) std::abort();
  }
  if (!StringTensor::from_contiguous(c).equals(t)) std::abort();
  if (t.size() > 1) {
    const std::vector<std::uint64_t> reversed = {t.size() - 1, 0};
    if (t.take(reversed)[1] != t[0]) std::abort();
  }
}

struct Owned {
  std::vector<const void*> buffers;
  std::vector<SharedBytes> pieces;
  std::int64_t sizes[2] = {0, 0};
};

void release_owned(ArrowArray* a) {
  delete static_cast<Owned*>(a->private_data);
  a->release = nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int mode = data[0] & 3;
  const std::size_t n = data[1];
  data += 2;
  size -= 2;
  try {
    if (mode == 0 || mode == 1) {
      ContiguousStrings c;
      c.width = mode == 0 ? OffsetWidth::k32 : OffsetWidth::k64;
      c.size = n;
      c.offsets = piece(data, size, (n + 1) * (mode == 0 ? 4 : 8));
      c.payload = piece(data, size, size);
      check(StringTensor::from_contiguous(c));
    } else {
      auto owned = std::make_unique<Owned>();
      ArrowArray a{};
      a.length = static_cast<std::int64_t>(n);
      ArrowSchema schema{};
      if (mode == 2) {
        schema.format = "vu";
        owned->pieces.push_back(piece(data, size, 16 * n));
        const std::size_t split = size > 0 ? data[0] : 0;
        if (size > 0) {
          ++data;
          --size;
        }
        owned->pieces.push_back(piece(data, size, split));
        owned->pieces.push_back(piece(data, size, size));
        owned->sizes[0] = static_cast<std::int64_t>(owned->pieces[1].size());
        owned->sizes[1] = static_cast<std::int64_t>(owned->pieces[2].size());
        owned->buffers = {nullptr, owned->pieces[0].data(), owned->pieces[1].data(),
                          owned->pieces[2].data(), owned->sizes};
        if (owned->pieces[0].size() < 16 * n) a.length = 0;  // short input: an empty array
      } else {
        schema.format = "u";
        owned->pieces.push_back(piece(data, size, 4 * (n + 1)));
        owned->pieces.push_back(piece(data, size, size));
        owned->buffers = {nullptr, owned->pieces[0].data(), owned->pieces[1].data()};
        if (owned->pieces[0].size() < 4 * (n + 1)) a.length = 0;
        // The C Data Interface gives no data size: keep the offsets inside the data here, as a
        // real producer does; the importer must still reject decreasing or negative ones.
        if (a.length > 0) {
          std::int32_t last;
          std::memcpy(&last, owned->pieces[0].data() + 4 * n, 4);
          if (last < 0 || static_cast<std::size_t>(last) > owned->pieces[1].size()) return 0;
        }
      }
      a.n_buffers = static_cast<std::int64_t>(owned->buffers.size());
      a.buffers = owned->buffers.data();
      a.release = release_owned;
      a.private_data = owned.release();
      try {
        check(import_arrow_array(schema, &a));
      } catch (...) {
        if (a.release != nullptr) std::abort();  // the importer always takes the array over
        throw;
      }
    }
  } catch (const InvalidArgument&) {
  } catch (const InvalidType&) {
  }
  return 0;
}
