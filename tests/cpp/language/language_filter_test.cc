// LanguageFilter: CLD2 answers on clear text, invalid UTF-8, the rules, the counters, options
// errors and the pipeline stage.
#include "luminamoon/data/language/language_filter.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/pipeline/fused_pipeline.h"

namespace luminamoon::data {
namespace {

constexpr std::string_view kEnglish =
    "The committee will meet again next week to discuss the budget for the new school year, "
    "and every parent is welcome to attend the meeting in the town hall.";
constexpr std::string_view kGerman =
    "Der Ausschuss trifft sich n\xC3\xA4"
    "chste Woche wieder, um den Haushalt f\xC3\xBCr das neue "
    "Schuljahr zu besprechen, und alle Eltern sind herzlich eingeladen.";
constexpr std::string_view kJapanese =
    "\xE5\xA7\x94\xE5\x93\xA1\xE4\xBC\x9A\xE3\x81\xAF\xE6\x9D\xA5\xE9\x80\xB1\xE3\x80\x81"
    "\xE6\x96\xB0\xE3\x81\x97\xE3\x81\x84\xE5\xAD\xA6\xE5\xB9\xB4\xE3\x81\xAE\xE4\xBA\x88"
    "\xE7\xAE\x97\xE3\x81\xAB\xE3\x81\xA4\xE3\x81\x84\xE3\x81\xA6\xE8\xA9\xB1\xE3\x81\x97"
    "\xE5\x90\x88\xE3\x81\x86\xE3\x81\x9F\xE3\x82\x81\xE3\x81\xAB\xE5\x86\x8D\xE3\x81\xB3"
    "\xE9\x9B\x86\xE3\x81\xBE\xE3\x82\x8A\xE3\x81\xBE\xE3\x81\x99\xE3\x80\x82";

TEST(LanguageDetect, ClearTextIsDetectedReliably) {
  const LanguageDetection en = detect_language(kEnglish);
  EXPECT_EQ(en.language, "en");
  EXPECT_GE(en.score, 0.9);
  EXPECT_TRUE(en.reliable);
  EXPECT_EQ(detect_language(kGerman).language, "de");
  EXPECT_EQ(detect_language(kJapanese).language, "ja");
}

TEST(LanguageDetect, EmptyAndLetterlessTextIsUnknownWithScoreZero) {
  const LanguageDetection empty = detect_language("");
  EXPECT_EQ(empty.language, "un");
  EXPECT_EQ(empty.score, 0.0);
  EXPECT_EQ(detect_language("1234 5678 !!!").score, 0.0);
}

TEST(LanguageDetect, InvalidUtf8IsRepairedBeforeCld2) {
  std::string doc(kGerman);
  doc.insert(10, "\xFF\xED\xA0\x80\xC0");
  const LanguageDetection d = detect_language(doc);
  std::string repaired(kGerman);
  repaired.insert(10, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(d, detect_language_utf8(repaired));
  EXPECT_EQ(d.language, "de");
}

// Texts placed so that their last byte is the last readable byte of the process: the page after
// them is mapped PROT_NONE. CLD2's script scanner looks one byte past a character that ends at the
// end of its input (see docs/language.md); detection must hand it a padded copy, so a document at
// the end of a mapping (an mmap'ed shard, an Arrow buffer) can neither fault nor let the byte after
// it change the answer.
class GuardPage {
 public:
  GuardPage() {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* map =
        mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return;
    base_ = static_cast<char*>(map);
    if (mprotect(base_ + page_, page_, PROT_NONE) != 0) {
      munmap(base_, 2 * page_);
      base_ = nullptr;
    }
  }
  GuardPage(const GuardPage&) = delete;
  GuardPage& operator=(const GuardPage&) = delete;
  ~GuardPage() {
    if (base_ != nullptr) munmap(base_, 2 * page_);
  }
  bool ok() const { return base_ != nullptr; }
  // `text` copied so that it ends at the guard page.
  std::string_view at_end(std::string_view text) {
    char* start = base_ + page_ - text.size();
    std::copy(text.begin(), text.end(), start);
    return {start, text.size()};
  }
  // `text` copied so that it ends one byte before the guard page, followed by `after`.
  std::string_view before(std::string_view text, char after) {
    char* start = base_ + page_ - text.size() - 1;
    std::copy(text.begin(), text.end(), start);
    start[text.size()] = after;
    return {start, text.size()};
  }

 private:
  std::size_t page_ = 0;
  char* base_ = nullptr;
};

TEST(LanguageDetect, TextEndingAtAnUnreadablePageIsDetected) {
  GuardPage guard;
  ASSERT_TRUE(guard.ok());
  const std::vector<std::string> texts = {
      "abcd\xCE\xB1",  // ends in a two-byte character
      std::string(kGerman) + "\xC3\xA4",
      std::string(kJapanese),
      std::string(kEnglish) + " \xE2\x82\xAC",
      "\xF0\x9F\x98\x80",
      "a",
      std::string(kGerman),
  };
  for (const std::string& text : texts) {
    const LanguageDetection expected = detect_language_utf8(text);
    EXPECT_EQ(detect_language_utf8(guard.at_end(text)), expected) << text;
    EXPECT_EQ(detect_language(guard.at_end(text)), expected) << text;
  }
}

TEST(LanguageDetect, TheByteAfterTheTextDoesNotChangeTheAnswer) {
  GuardPage guard;
  ASSERT_TRUE(guard.ok());
  for (const std::string& text :
       {std::string("abcd\xCE\xB1"), std::string(kGerman) + "\xC3\xA4", std::string(kJapanese)}) {
    const LanguageDetection expected = detect_language_utf8(text);
    for (const char after : {'\0', 'x', '\xCE', '\xB1', '\xE3', ' '}) {
      EXPECT_EQ(detect_language_utf8(guard.before(text, after)), expected) << text;
    }
  }
}

TEST(LanguageDetect, KnownCodesAreUniqueAndIncludeTheCommonOnes) {
  const auto codes = known_language_codes();
  for (const std::string_view c : {"en", "de", "fr", "ja", "zh", "zh-Hant", "ru", "un"}) {
    EXPECT_NE(std::find(codes.begin(), codes.end(), c), codes.end()) << c;
  }
  std::vector<std::string_view> sorted(codes.begin(), codes.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_FALSE(language_model_version().empty());
}

TEST(LanguageFilterRules, LanguageListAndScores) {
  LanguageFilterOptions o;
  o.languages = {"en", "ja"};
  o.min_score = 0.5;
  const LanguageFilter f(o);
  EXPECT_FALSE(f.check(kEnglish).has_value());
  EXPECT_FALSE(f.check(kJapanese).has_value());
  const auto de = f.check(kGerman);
  ASSERT_TRUE(de.has_value());
  EXPECT_EQ(de->rule, "language");
  EXPECT_EQ(de->language, "de");
  EXPECT_TRUE(std::isnan(de->threshold));

  LanguageFilterOptions strict;
  strict.min_score = 0.5;
  strict.min_scores = {{"en", 1.0}};
  const LanguageFilter s(strict);
  std::string half(kEnglish);
  half += " ";
  half += kGerman;
  const LanguageDetection d = s.detect(half);
  const auto r = s.check(half);
  ASSERT_LT(d.score, 1.0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, "min_language_score");
  EXPECT_EQ(r->threshold, d.language == "en" ? 1.0 : 0.5);
  EXPECT_EQ(s.min_score_for("en"), 1.0);
  EXPECT_EQ(s.min_score_for("fr"), 0.5);
}

TEST(LanguageFilterRules, BatchCountersAndThreadsAgree) {
  LanguageFilterOptions o;
  o.languages = {"en"};
  o.min_score = 0.9;
  o.threads = 1;
  const LanguageFilter one(o);
  o.threads = 4;
  const LanguageFilter four(o);
  std::vector<std::string_view> docs;
  for (int i = 0; i < 300; ++i) docs.push_back(i % 3 == 0 ? kEnglish : i % 3 == 1 ? kGerman : "");
  const LanguageBatchResult a = one.filter_batch(docs);
  const LanguageBatchResult b = four.filter_batch(docs);
  EXPECT_EQ(a.keep, b.keep);
  EXPECT_EQ(a.detections, b.detections);
  EXPECT_EQ(a.counters, b.counters);
  const std::vector<std::pair<std::string_view, std::uint64_t>> expected = {
      {"total", 300},
      {"kept", 100},
      {"rejected", 200},
      {"language", 200},
      {"min_language_score", 0}};
  EXPECT_EQ(a.counters, expected);  // "" is "un", not in the list
}

TEST(LanguageFilterOptionsCheck, UnknownCodeSuggestsAndScoresAreChecked) {
  LanguageFilterOptions o;
  o.languages = {"eng"};
  try {
    LanguageFilter f(o);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown language code 'eng'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos);
  }
  LanguageFilterOptions bad;
  bad.min_score = 1.5;
  EXPECT_THROW(LanguageFilter{bad}, InvalidArgument);
  bad.min_score = std::nan("");
  EXPECT_THROW(LanguageFilter{bad}, InvalidArgument);
  LanguageFilterOptions twice;
  twice.min_scores = {{"en", 0.1}, {"en", 0.2}};
  EXPECT_THROW(LanguageFilter{twice}, InvalidArgument);
}

TEST(LanguageFilterStage, DropsWithRuleAndRunsAfterTheCleaner) {
  LanguageFilterOptions o;
  o.languages = {"en"};
  LanguageFilter language(o);
  PipelineStages stages;
  stages.language = &language;
  FusedPipeline pipeline(stages);
  DocumentBatch batch;
  batch.texts = {kEnglish, kGerman, kJapanese};
  const PipelineCounters counters = pipeline.process(batch);
  ASSERT_EQ(batch.rejections.size(), 3U);
  EXPECT_TRUE(batch.kept(0));
  EXPECT_EQ(batch.rejections[1].stage, PipelineStage::kLanguage);
  EXPECT_EQ(batch.rejections[1].rule, "language");
  EXPECT_EQ(pipeline_stage_name(PipelineStage::kLanguage), "language");
  ASSERT_EQ(counters.size(), 3U);
  EXPECT_EQ(counters[1].first, "language");
}

}  // namespace
}  // namespace luminamoon::data
