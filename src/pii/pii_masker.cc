// PiiMasker: spans with code-point offsets, masked output (repairing invalid UTF-8 the way CPython
// does), the batch path on worker threads, and the statistics.
#include "luminamoon/data/pii/pii_masker.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/internal/utf8.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/worker_pool.h"
#include "pii/internal/scanner.h"

namespace luminamoon::data {
namespace {

constexpr std::array<std::string_view, kPiiCategoryCount> kNames = {"EMAIL", "IP_ADDRESS",
                                                                    "API_KEY", "CREDIT_CARD"};
constexpr std::array<std::string_view, kPiiCategoryCount> kTags = {"<EMAIL>", "<IP_ADDRESS>",
                                                                   "<API_KEY>", "<CREDIT_CARD>"};

// Below this many bytes per worker a thread costs more than it saves (a thread start is ~20 us,
// scanning 256 KiB ~100 us).
constexpr std::size_t kMinBytesPerWorker = 256 * 1024;

}  // namespace

std::string_view pii_category_name(PiiCategory category) noexcept {
  return kNames[static_cast<std::size_t>(category)];
}

std::optional<PiiCategory> pii_category_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
    if (kNames[i] == name) return static_cast<PiiCategory>(i);
  }
  return std::nullopt;
}

std::string_view pii_default_tag(PiiCategory category) noexcept {
  return kTags[static_cast<std::size_t>(category)];
}

// The three public UTF-8 helpers forward to the common module (common/internal/utf8.h).
std::size_t utf8_code_points(std::string_view bytes) noexcept {
  return utf8_internal::count_code_points(bytes);
}

std::size_t utf8_code_points_of_valid(std::string_view bytes) noexcept {
  // A continuation byte (10xxxxxx) is below -64 as a signed char.
  const char* p = bytes.data();
  const std::size_t n = bytes.size();
  std::size_t continuation = 0, i = 0;
#if defined(__SSE2__)
  // SSE2 is in every x86-64 baseline: 16 bytes per step, counted in byte lanes (a compare gives
  // -1 per continuation byte), summed into 64-bit lanes by psadbw every 255 steps at most.
  const __m128i below = _mm_set1_epi8(-64), zero = _mm_setzero_si128();
  __m128i total = zero;
  while (i + 16 <= n) {
    const std::size_t steps = std::min<std::size_t>((n - i) / 16, 255);
    __m128i lanes = zero;
    for (std::size_t k = 0; k < steps; ++k, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      lanes = _mm_sub_epi8(lanes, _mm_cmplt_epi8(v, below));
    }
    total = _mm_add_epi64(total, _mm_sad_epu8(lanes, zero));
  }
  continuation = static_cast<std::size_t>(_mm_cvtsi128_si64(total)) +
                 static_cast<std::size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total)));
#endif
  for (; i < n; ++i) continuation += static_cast<signed char>(p[i]) < -64 ? 1 : 0;
  return n - continuation;
}

bool utf8_is_valid(std::string_view bytes) noexcept {
  try {
    return utf8_internal::is_valid(bytes);  // the live ISA's validator
  } catch (...) {
    // Only a bad LUMINAMOON_SIMD gets here (the live ISA cannot be resolved); this function is
    // noexcept, so it answers with the scalar reference, which gives the same result.
    const auto* d = reinterpret_cast<const std::uint8_t*>(bytes.data());
    return utf8_internal::utf8_valid_prefix_scalar(d, bytes.size()) == bytes.size();
  }
}

void append_utf8_repaired(std::string_view bytes, std::string& out) {
  utf8_internal::append_repaired(bytes, out);
}

PiiMasker::PiiMasker(PiiMaskerOptions options) : options_(std::move(options)) {
  for (std::size_t i = 0; i < kPiiCategoryCount; ++i) {
    if (!utf8_is_valid(options_.tags[i])) {
      throw InvalidArgument("PIIMasker: the tag for " + std::string(kNames[i]) +
                            " is not valid UTF-8");
    }
  }
}

namespace {

pii_internal::ScanConfig scan_config(const PiiMaskerOptions& o) {
  return pii_internal::ScanConfig{o.enabled, o.mask_private_ips};
}

// How many workers a batch call of `what` runs on (never more than its documents), after checking
// that the validity flags, if given, are one per document.
unsigned batch_workers(const char* what, std::span<const std::string_view> texts,
                       std::span<const std::uint8_t> known_valid_utf8, unsigned threads) {
  const std::size_t n = texts.size();
  if (!known_valid_utf8.empty() && known_valid_utf8.size() != n) {
    throw InvalidArgument(std::string(what) + ": " + std::to_string(known_valid_utf8.size()) +
                          " validity flags for " + std::to_string(n) + " documents");
  }
  std::size_t total_bytes = 0;
  for (std::string_view t : texts) total_bytes += t.size();
  return std::min<unsigned>(
      WorkerPool::shared().workers_for(total_bytes, threads, kMinBytesPerWorker),
      static_cast<unsigned>(std::max<std::size_t>(n, 1)));
}

}  // namespace

std::vector<PiiSpan> PiiMasker::find(std::string_view text) const {
  std::vector<pii_internal::Candidate> found;
  pii_internal::find_spans(text, scan_config(options_), pii_internal::active_anchor_kernel(),
                           found);
  std::vector<PiiSpan> spans;
  spans.reserve(found.size());
  std::size_t byte = 0, cp = 0;
  for (const auto& c : found) {
    // Matches are ASCII and start at an ASCII byte, which always ends any pending (possibly
    // ill-formed) sequence, so the prefix can be counted piecewise.
    cp += utf8_code_points(text.substr(byte, c.start - byte));
    const std::size_t len = c.end - c.start;
    spans.push_back(PiiSpan{c.category, c.start, c.end, cp, cp + len});
    cp += len;
    byte = c.end;
  }
  return spans;
}

// The TextCleaner's SIMD validator (same library; one UTF-8 validator for the whole engine).
bool valid_utf8_fast(std::string_view text) {
  const auto* d = reinterpret_cast<const std::uint8_t*>(text.data());
  return utf8_internal::valid_prefix(d, text.size()) == text.size();
}

namespace {

// The masked text of `text`: every item of `items` (sorted, non-overlapping, with start/end/
// category read by `get`) replaced by its tag; the text between them copied, or repaired.
template <typename Items, typename Get>
void splice_items(std::string_view text, const Items& items, Get get, bool valid,
                  const std::array<std::string, kPiiCategoryCount>& tags, std::string& out) {
  out.clear();
  std::size_t reserve = text.size();
  for (const auto& item : items)
    reserve += tags[static_cast<std::size_t>(get(item).category)].size();
  out.reserve(reserve);
  auto copy = [&](std::string_view piece) {
    if (valid) {
      out.append(piece);
    } else {
      append_utf8_repaired(piece, out);
    }
  };
  std::size_t byte = 0;
  for (const auto& item : items) {
    const PiiMatch m = get(item);
    copy(text.substr(byte, m.byte_start - byte));
    out.append(tags[static_cast<std::size_t>(m.category)]);
    byte = m.byte_end;
  }
  copy(text.substr(byte));
}

PiiMatch match_of(const pii_internal::Candidate& c) { return PiiMatch{c.start, c.end, c.category}; }

}  // namespace

void PiiMasker::splice(std::string_view text, std::span<const PiiMatch> matches, bool valid_utf8,
                       std::string& out) const {
  splice_items(
      text, matches, [](const PiiMatch& m) { return m; }, valid_utf8, options_.tags, out);
}

std::size_t PiiMasker::spliced_size(std::string_view text,
                                    std::span<const PiiMatch> matches) const {
  std::size_t size = text.size();
  for (const PiiMatch& m : matches) {
    size +=
        options_.tags[static_cast<std::size_t>(m.category)].size() - (m.byte_end - m.byte_start);
  }
  return size;
}

void PiiMasker::splice_valid_into(std::string_view text, std::span<const PiiMatch> matches,
                                  char* out) const {
  std::size_t byte = 0;
  for (const PiiMatch& m : matches) {
    const std::string& tag = options_.tags[static_cast<std::size_t>(m.category)];
    std::memcpy(out, text.data() + byte, m.byte_start - byte);
    out += m.byte_start - byte;
    std::memcpy(out, tag.data(), tag.size());
    out += tag.size();
    byte = m.byte_end;
  }
  std::memcpy(out, text.data() + byte, text.size() - byte);
}

bool PiiMasker::mask_into(std::string_view text, std::string& out, PiiCounts& counts,
                          bool known_valid_utf8) const {
  counts = {};
  thread_local std::vector<pii_internal::Candidate> found;
  pii_internal::find_spans(text, scan_config(options_), pii_internal::active_anchor_kernel(),
                           found);
  const bool valid = known_valid_utf8 || valid_utf8_fast(text);
  if (found.empty() && valid) return false;
  for (const auto& c : found) ++counts[static_cast<std::size_t>(c.category)];
  splice_items(text, found, match_of, valid, options_.tags, out);
  return true;
}

bool PiiMasker::mask(std::string_view text, std::string& out, bool known_valid_utf8) {
  PiiCounts counts{};
  const bool changed = mask_into(text, out, counts, known_valid_utf8);
  record(1, text.size(), counts);
  return changed;
}

std::string PiiMasker::mask(std::string_view text) {
  std::string out;
  if (!mask(text, out)) out.assign(text);
  return out;
}

PiiCounts PiiMasker::mask_batch(std::span<const std::string_view> texts,
                                std::vector<std::string>& out, std::vector<std::uint8_t>& changed,
                                std::span<const std::uint8_t> known_valid_utf8) {
  const PiiCounts totals = mask_batch_into(texts, out, changed, known_valid_utf8);
  std::size_t total_bytes = 0;
  for (std::string_view t : texts) total_bytes += t.size();
  record(texts.size(), total_bytes, totals);
  return totals;
}

PiiCounts PiiMasker::mask_batch_into(std::span<const std::string_view> texts,
                                     std::vector<std::string>& out,
                                     std::vector<std::uint8_t>& changed,
                                     std::span<const std::uint8_t> known_valid_utf8) const {
  const std::size_t n = texts.size();
  const unsigned workers =
      batch_workers("PIIMasker::mask_batch", texts, known_valid_utf8, options_.threads);
  out.assign(n, std::string());
  changed.assign(n, 0);
  WorkerPool& pool = WorkerPool::shared();
  // Each document is written by exactly one worker; counts are summed per worker.
  std::vector<PiiCounts> partial(workers, PiiCounts{});
  pool.run(n, workers, 0, [&](std::size_t begin, std::size_t end, unsigned worker) {
    for (std::size_t i = begin; i < end; ++i) {
      const bool valid = !known_valid_utf8.empty() && known_valid_utf8[i] != 0;
      PiiCounts doc{};
      changed[i] = mask_into(texts[i], out[i], doc, valid) ? 1 : 0;
      for (std::size_t k = 0; k < kPiiCategoryCount; ++k) partial[worker][k] += doc[k];
    }
  });
  PiiCounts totals{};
  for (const PiiCounts& c : partial) {
    for (std::size_t k = 0; k < kPiiCategoryCount; ++k) totals[k] += c[k];
  }
  return totals;
}

PiiCounts PiiMasker::find_batch(std::span<const std::string_view> texts, PiiBatchMatches& out,
                                std::span<const std::uint8_t> known_valid_utf8) {
  const PiiCounts totals = find_batch_into(texts, out, known_valid_utf8);
  std::size_t total_bytes = 0;
  for (std::string_view t : texts) total_bytes += t.size();
  record(texts.size(), total_bytes, totals);
  return totals;
}

PiiCounts PiiMasker::find_batch_into(std::span<const std::string_view> texts, PiiBatchMatches& out,
                                     std::span<const std::uint8_t> known_valid_utf8) const {
  const std::size_t n = texts.size();
  const unsigned workers =
      batch_workers("PIIMasker::find_batch", texts, known_valid_utf8, options_.threads);
  out.matches.clear();
  out.first.assign(n + 1, 0);
  out.valid_utf8.assign(n, 0);
  WorkerPool& pool = WorkerPool::shared();
  const pii_internal::ScanConfig config = scan_config(options_);
  const pii_internal::AnchorKernel& kernel = pii_internal::active_anchor_kernel();
  // Each worker appends to its own list; first[i + 1] holds document i's match count until the
  // lists are joined in document order below.
  std::vector<std::vector<PiiMatch>> parts(workers);
  std::vector<std::uint32_t> owner(workers > 1 ? n : 0);
  std::vector<PiiCounts> partial(workers, PiiCounts{});
  pool.run(n, workers, 0, [&](std::size_t begin, std::size_t end, unsigned worker) {
    thread_local std::vector<pii_internal::Candidate> found;
    std::vector<PiiMatch>& part = workers > 1 ? parts[worker] : out.matches;
    PiiCounts& counts = partial[worker];
    for (std::size_t i = begin; i < end; ++i) {
      pii_internal::find_spans(texts[i], config, kernel, found);
      out.valid_utf8[i] =
          (!known_valid_utf8.empty() && known_valid_utf8[i] != 0) || valid_utf8_fast(texts[i]) ? 1
                                                                                               : 0;
      for (const auto& c : found) {
        part.push_back(match_of(c));
        ++counts[static_cast<std::size_t>(c.category)];
      }
      out.first[i + 1] = found.size();
      if (workers > 1) owner[i] = worker;
    }
  });
  if (workers > 1) {
    // Join the workers' lists: each worker's documents appear in its list in increasing order.
    std::size_t total = 0;
    for (const auto& part : parts) total += part.size();
    out.matches.reserve(total);
    std::vector<std::size_t> taken(workers, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& part = parts[owner[i]];
      std::size_t& at = taken[owner[i]];
      const std::size_t count = out.first[i + 1];
      out.matches.insert(out.matches.end(), part.begin() + static_cast<std::ptrdiff_t>(at),
                         part.begin() + static_cast<std::ptrdiff_t>(at + count));
      at += count;
    }
  }
  for (std::size_t i = 0; i < n; ++i) out.first[i + 1] += out.first[i];
  PiiCounts totals{};
  for (const PiiCounts& c : partial) {
    for (std::size_t k = 0; k < kPiiCategoryCount; ++k) totals[k] += c[k];
  }
  return totals;
}

void PiiMasker::record(std::uint64_t documents, std::uint64_t bytes, const PiiCounts& counts) {
  std::lock_guard lock(mutex_);
  last_counts_ = counts;
  stats_.documents += documents;
  stats_.bytes += bytes;
  for (std::size_t k = 0; k < kPiiCategoryCount; ++k) stats_.counts[k] += counts[k];
}

PiiCounts PiiMasker::counts() const {
  std::lock_guard lock(mutex_);
  return last_counts_;
}

PiiStats PiiMasker::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void PiiMasker::reset_stats() {
  std::lock_guard lock(mutex_);
  stats_ = {};
  last_counts_ = {};
}

}  // namespace luminamoon::data
