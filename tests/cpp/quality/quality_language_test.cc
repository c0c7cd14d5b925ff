// QualityFilter's "language" preset: the rules `languages` and `min_language_score` (one score or
// per-language minimums with a "default" key) decided by LanguageFilter's CLD2 detection, the
// language metrics, composition with other presets and bad settings. Parity with the Python
// fallback is tested from Python (tests/test_quality_language.py).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "luminamoon/data/language/language_filter.h"
#include "luminamoon/data/quality/quality_filter.h"

namespace luminamoon::data {
namespace {

using Settings = std::vector<std::pair<std::string_view, QualitySetting>>;

constexpr std::string_view kEnglish =
    "The committee will meet again next week to discuss the budget for the new school year, "
    "and every parent is welcome to attend the meeting in the town hall.";
constexpr std::string_view kGerman =
    "Der Ausschuss trifft sich nächste Woche wieder, um den Haushalt für das neue Schuljahr "
    "zu besprechen, und alle Eltern sind herzlich eingeladen.";
constexpr std::string_view kRussian =
    "Комитет снова соберётся на следующей неделе, чтобы обсудить бюджет на новый учебный год, "
    "и все родители приглашены на встречу.";

QualityFilter make(std::vector<std::string_view> presets, const Settings& settings = {},
                   unsigned threads = 0) {
  return QualityFilter(presets, settings, QualityFilterOptions{threads});
}

TEST(QualityLanguage, DefaultsAreEnglishWithFineWebScore) {
  const QualityFilter f = make({"language"});
  EXPECT_EQ(f.rules(), (std::vector<std::string_view>{"languages", "min_language_score"}));
  EXPECT_FALSE(f.check(kEnglish).has_value());
  const auto r = f.check(kGerman);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, "languages");
  EXPECT_EQ(r->metric, "language");
  EXPECT_EQ(r->comparison, '!');
  EXPECT_EQ(r->threshold, 0.0);
  EXPECT_EQ(r->value, detect_language(kGerman).score);
  // Empty text is "un" (score 0), not English.
  ASSERT_TRUE(f.check("").has_value());
  EXPECT_EQ(f.check("")->rule, "languages");
}

TEST(QualityLanguage, MetricsOnlyWithThePreset) {
  EXPECT_FALSE(make({"default"}).language_metrics(kGerman).has_value());
  const auto d = make({"default", "language"}).language_metrics(kGerman);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, detect_language(kGerman));
  EXPECT_EQ(d->language, "de");
}

TEST(QualityLanguage, PerLanguageMinimumsAndDefaultKey) {
  const std::string bilingual = std::string(kEnglish) + " " + std::string(kRussian);
  const LanguageDetection mixed = detect_language(bilingual);
  ASSERT_EQ(mixed.language, "ru");
  ASSERT_LT(mixed.score, 0.9);
  // ru needs more than it has; German and English pass with the default.
  const QualityFilter f =
      make({"language"}, {{"languages", QualityLanguages{"en", "de", "ru"}},
                          {"min_language_score",
                           QualityLanguageScores{{"ru", mixed.score + 0.01}, {"default", 0.5}}}});
  EXPECT_FALSE(f.check(kEnglish).has_value());
  EXPECT_FALSE(f.check(kGerman).has_value());
  EXPECT_FALSE(f.check(kRussian).has_value());
  const auto r = f.check(bilingual);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, "min_language_score");
  EXPECT_EQ(r->metric, "language_score");
  EXPECT_EQ(r->comparison, '<');
  EXPECT_EQ(r->value, mixed.score);
  EXPECT_EQ(r->threshold, mixed.score + 0.01);
  // Without a languages list only the score rule is on.
  const QualityFilter g =
      make({"language"}, {{"languages", std::monostate{}}, {"min_language_score", 0.95}});
  EXPECT_EQ(g.rules(), (std::vector<std::string_view>{"min_language_score"}));
  EXPECT_TRUE(g.check(bilingual).has_value());
  EXPECT_FALSE(g.check(kRussian).has_value());
}

TEST(QualityLanguage, BatchCountersAndThreadsAgree) {
  std::vector<std::string> owned;
  for (int i = 0; i < 60; ++i) {
    const std::string_view pick[] = {kEnglish, kGerman, kRussian, "", "12 34 !!"};
    owned.emplace_back(std::string(pick[i % 5]) + (i % 7 == 0 ? "\xff" : ""));
  }
  const std::vector<std::string_view> docs(owned.begin(), owned.end());
  const Settings settings = {{"languages", QualityLanguages{"en", "ru"}}};
  const QualityBatchResult one = make({"language", "default"}, settings, 1).filter_batch(docs);
  const QualityBatchResult four = make({"language", "default"}, settings, 4).filter_batch(docs);
  EXPECT_EQ(one.keep, four.keep);
  EXPECT_EQ(one.reasons, four.reasons);
  EXPECT_EQ(one.counters, four.counters);
  ASSERT_GE(one.counters.size(), 5U);
  EXPECT_EQ(one.counters[3].first, "languages");
  EXPECT_EQ(one.counters[3].second, 36U);  // German, empty and letterless: 3 of every 5
  EXPECT_EQ(one.counters[4].first, "min_language_score");
}

TEST(QualityLanguage, BadSettings) {
  EXPECT_THROW(make({"language"}, {{"languages", QualityLanguages{"eng"}}}), ConfigError);
  EXPECT_THROW(make({"language"}, {{"min_language_score", QualityLanguageScores{{"dee", 0.5}}}}),
               ConfigError);
  EXPECT_THROW(make({"default"}, {{"languages", QualityLanguages{"en"}}}), ConfigError);
  EXPECT_THROW(make({"language"}, {{"min_language_score", 1.5}}), InvalidArgument);
  EXPECT_THROW(make({"language"}, {{"min_language_score", true}}), InvalidArgument);
  EXPECT_THROW(make({"language"}, {{"languages", std::string("'en'")}}), InvalidArgument);
  try {
    make({"language"}, {{"languages", QualityLanguages{"eng"}}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'en'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace luminamoon::data
