// DocumentBatch: the one batch type every stage reads and writes. A reader fills the texts (views
// into its own buffers), extra fields and coordinates; each pipeline stage then works on the
// documents still kept, replacing texts it rewrites and recording the first rejection of each
// document it drops. Writers and exports take the kept documents from here.
//
// Contract notes:
//  * texts[i] (and string/bytes DataValues) point into `storage`: a batch, or a copy of it,
//    keeps its bytes alive for as long as it lives; copying a batch copies views, not bytes;
//  * `valid_utf8` is the one "known valid UTF-8" flag of the whole pipeline: empty means "not
//    known for any document", else one flag per document; a stage that guarantees valid output
//    (the cleaner) sets every flag, so later stages never validate again;
//  * `rejections` is empty while every document is kept, else it holds one entry per document;
//    a document is dropped once (the first stage that rejects it wins) and never comes back.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "luminamoon/data/checkpoint/stream_coordinate.h"

namespace luminamoon::data {

// A value of an extra field (SPEC 4 "Serialization"): null, bool, int64 (and uint64 for JSON
// integers above 2^63 - 1), float64, string, bytes, list and struct. Readers produce scalars;
// lists and structs come from callers and own their items.
struct DataValue {
  enum class Kind : std::uint8_t {
    kNull,
    kBool,
    kInt64,
    kUint64,
    kDouble,
    kString,
    kBytes,
    kList,
    kStruct
  };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::int64_t int64 = 0;
  std::uint64_t uint64 = 0;
  double number = 0;
  std::string_view string;                                                        // kString, kBytes
  std::shared_ptr<const std::vector<DataValue>> items;                            // kList
  std::shared_ptr<const std::vector<std::pair<std::string, DataValue>>> members;  // kStruct
};

// The readers' name for it (scalars only).
using FieldValue = DataValue;

// The stages of the FusedPipeline, in the order they run (kKept: not dropped).
enum class PipelineStage : std::uint8_t {
  kKept = 0,
  kCleaner = 1,
  kLanguage = 2,
  kQuality = 3,
  kExactDedup = 4,
  kNearDedup = 5,
  kPii = 6,
};
inline constexpr std::size_t kPipelineStageCount = 6;

// "cleaner", "language", "quality", "exact_dedup", "near_dedup", "pii" ("" for kKept).
std::string_view pipeline_stage_name(PipelineStage stage) noexcept;

// Why a document was dropped: the stage, its rule (a static string), and the measured value and
// threshold when the rule has them (NaN when it does not).
struct DocumentRejection {
  PipelineStage stage = PipelineStage::kKept;
  std::string_view rule;
  double value = std::nan("");
  double threshold = std::nan("");
};

// Counters of one stage for one batch (or cumulative), in a fixed order; names are static.
using StageCounters = std::vector<std::pair<std::string_view, std::uint64_t>>;

struct DocumentBatch {
  std::vector<std::string_view> texts;
  std::vector<std::uint8_t> valid_utf8;        // see the contract notes
  std::vector<std::vector<DataValue>> fields;  // fields[f][document]
  std::vector<StreamCoordinate> coordinates;   // after each document (reader input)
  StreamCoordinate end;                        // after the last record scanned for this batch
  std::vector<std::shared_ptr<const void>> storage;
  std::vector<DocumentRejection> rejections;  // see the contract notes

  std::size_t size() const noexcept { return texts.size(); }
  void clear();

  bool kept(std::size_t i) const noexcept {
    return rejections.empty() || rejections[i].stage == PipelineStage::kKept;
  }
  // Indices of the documents still kept, in order.
  std::vector<std::size_t> kept_indices() const;
  std::size_t kept_count() const noexcept;
  // texts[indices[k]] for every k.
  std::vector<std::string_view> texts_at(const std::vector<std::size_t>& indices) const;
  // Records the first rejection of document i (a document already dropped stays as it was).
  void reject(std::size_t i, PipelineStage stage, std::string_view rule,
              double value = std::nan(""), double threshold = std::nan(""));
  // Rejects indices[k] for every k with keep[k] == 0 (a filter's answer over texts_at(indices));
  // returns how many it rejected.
  std::uint64_t reject_unkept(const std::vector<std::size_t>& indices,
                              const std::vector<std::uint8_t>& keep, PipelineStage stage,
                              std::string_view rule, double threshold = std::nan(""));
  bool known_valid_utf8(std::size_t i) const noexcept {
    return !valid_utf8.empty() && valid_utf8[i] != 0;
  }
  // Replaces the texts of `indices` by `replacement` (moved into the batch's storage);
  // replacement[k] becomes texts[indices[k]]. The new texts are valid UTF-8 when
  // `valid` is true.
  void replace_texts(const std::vector<std::size_t>& indices,
                     std::vector<std::string>&& replacement, bool valid);
  // Every flag of valid_utf8 set (all texts are known to be valid UTF-8).
  void mark_all_valid_utf8();
};

}  // namespace luminamoon::data
