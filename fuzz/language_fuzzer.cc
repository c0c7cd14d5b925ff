// Fuzz target: language identification over arbitrary bytes (invalid UTF-8 included). CLD2 itself
// is only defined on valid UTF-8; detect_language must repair first and never crash.
// Checks: the answer is a known CLD2 code with a score in [0, 1] (0 for "un"); it equals CLD2 on
// the repaired text; filter_batch on one and two threads agrees with check() document by
// document, the input split in two documents at the fuzzer's first byte.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/internal/utf8.h"
#include "luminamoon/data/language/language_filter.h"

namespace {

using namespace luminamoon::data;

void require(bool ok) {
  if (!ok) std::abort();
}

// Equal rejections ("language" has a NaN threshold, which == never matches).
bool same(const std::optional<LanguageRejection>& a, const std::optional<LanguageRejection>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->rule == b->rule && a->language == b->language && a->score == b->score &&
         (a->threshold == b->threshold ||
          (a->threshold != a->threshold && b->threshold != b->threshold));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view doc(reinterpret_cast<const char*>(data), size);
  const LanguageDetection d = detect_language(doc);
  const auto codes = known_language_codes();
  require(std::find(codes.begin(), codes.end(), d.language) != codes.end());
  require(d.score >= 0.0 && d.score <= 1.0);
  if (d.language == "un") require(d.score == 0.0);
  const std::string repaired = utf8_internal::repaired(doc);
  require(utf8_internal::is_valid(repaired));
  require(detect_language_utf8(repaired) == d);

  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  const std::vector<std::string_view> docs = {doc.substr(0, cut), doc.substr(cut)};
  LanguageFilterOptions o1;
  o1.languages = {"en", "de", "ja"};
  o1.min_score = 0.5;
  o1.min_scores = {{"ja", 0.2}};
  o1.threads = 1;
  LanguageFilterOptions o2 = o1;
  o2.threads = 2;
  const LanguageFilter one(o1);
  const LanguageFilter two(o2);
  const LanguageBatchResult a = one.filter_batch(docs);
  const LanguageBatchResult b = two.filter_batch(docs);
  require(a.keep == b.keep && a.detections == b.detections && a.counters == b.counters);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    require(same(a.reasons[i], one.check(docs[i])) && same(a.reasons[i], b.reasons[i]));
    require(a.detections[i] == detect_language(docs[i]));
    require((a.keep[i] != 0) == !a.reasons[i].has_value());
  }
  return 0;
}
