#include "luminamoon/data/pipeline/fused_pipeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace luminamoon::data {
namespace {

std::string prose(int seed) {
  std::string out;
  for (int s = 0; s < 6; ++s) {
    out += "The river " + std::to_string(seed) + " flows past the house number " +
           std::to_string(seed * 7 + s) + " and the people walk to the edge of it with a dog. ";
  }
  return out;
}

DocumentBatch make_batch(const std::vector<std::string>& texts) {
  DocumentBatch batch;
  auto owned = std::make_shared<std::vector<std::string>>(texts);
  for (const std::string& t : *owned) batch.texts.emplace_back(t);
  batch.storage.push_back(owned);
  return batch;
}

const StageCounters& section(const PipelineCounters& c, std::string_view name) {
  for (const auto& [n, values] : c) {
    if (n == name) return values;
  }
  static const StageCounters none;
  ADD_FAILURE() << "no section " << name;
  return none;
}

std::uint64_t counter(const StageCounters& c, std::string_view name) {
  for (const auto& [n, v] : c) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

TEST(DocumentBatch, RejectKeepsTheFirstReason) {
  DocumentBatch b = make_batch({"a", "b", "c"});
  EXPECT_EQ(b.kept_count(), 3U);
  b.reject(1, PipelineStage::kQuality, "min_words", 1.0, 10.0);
  b.reject(1, PipelineStage::kExactDedup, "duplicate");
  EXPECT_EQ(b.kept_indices(), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(b.rejections[1].stage, PipelineStage::kQuality);
  EXPECT_EQ(b.rejections[1].rule, "min_words");
  EXPECT_TRUE(std::isnan(b.rejections[0].value));
  b.replace_texts({2}, {"zz"}, true);
  EXPECT_EQ(b.texts[2], "zz");
  EXPECT_TRUE(b.known_valid_utf8(2));
  EXPECT_FALSE(b.known_valid_utf8(0));
  EXPECT_EQ(pipeline_stage_name(PipelineStage::kNearDedup), "near_dedup");
}

TEST(FusedPipeline, StagesRunInOrderWithReasonsAndCounters) {
  TextCleaner cleaner;
  const std::vector<std::string_view> presets = {"gopher_quality"};
  QualityFilter quality(presets);
  StreamDeduplicator exact;
  MinHashDeduplicator near;
  PiiMasker pii;
  FusedPipeline pipeline({&cleaner, &quality, &exact, &near, &pii});

  const std::string a = prose(1);
  const std::string near_a = prose(1) + " extra";
  const std::string with_email = prose(2) + " Mail jane.roe@example.com today.";
  DocumentBatch batch = make_batch({a, "   \r\n ", "too short", a, near_a, with_email});
  const PipelineCounters counters = pipeline.process(batch);

  ASSERT_EQ(batch.rejections.size(), 6U);
  EXPECT_TRUE(batch.kept(0));
  EXPECT_EQ(batch.rejections[1].stage, PipelineStage::kCleaner);
  EXPECT_EQ(batch.rejections[1].rule, "empty");
  EXPECT_EQ(batch.rejections[2].stage, PipelineStage::kQuality);
  EXPECT_EQ(batch.rejections[3].stage, PipelineStage::kExactDedup);
  EXPECT_EQ(batch.rejections[4].stage, PipelineStage::kNearDedup);
  EXPECT_DOUBLE_EQ(batch.rejections[4].threshold, 0.8);
  EXPECT_TRUE(batch.kept(5));
  EXPECT_NE(batch.texts[5].find("<EMAIL>"), std::string_view::npos);

  ASSERT_EQ(counters.size(), 7U);
  EXPECT_EQ(counters.front().first, "input");
  EXPECT_EQ(counters.back().first, "output");
  EXPECT_EQ(counter(section(counters, "input"), "documents"), 6U);
  EXPECT_EQ(counter(section(counters, "cleaner"), "dropped_empty"), 1U);
  EXPECT_EQ(counter(section(counters, "exact_dedup"), "duplicates"), 1U);
  EXPECT_EQ(counter(section(counters, "near_dedup"), "duplicates"), 1U);
  EXPECT_EQ(counter(section(counters, "pii"), "EMAIL"), 1U);
  EXPECT_EQ(counter(section(counters, "output"), "documents"), 2U);
  // Duplicates are found across batches too, and stats() sums the batches.
  DocumentBatch again = make_batch({a});
  pipeline.process(again);
  EXPECT_FALSE(again.kept(0));
  EXPECT_EQ(counter(section(pipeline.stats(), "input"), "documents"), 7U);
}

TEST(FusedPipeline, ResultsDoNotDependOnThreads) {
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) texts.push_back(prose(i % 1700) + (i % 3 ? "" : " x@y.org"));
  std::vector<std::vector<std::string>> outputs;
  for (const unsigned threads : {1U, 2U, 4U}) {
    TextCleaner cleaner({.threads = threads});
    const std::vector<std::string_view> presets = {"fineweb"};
    QualityFilter quality(presets, {}, {.threads = threads});
    StreamDeduplicator exact(nullptr, {.threads = threads});
    MinHashOptions mo;
    mo.threads = threads;
    MinHashDeduplicator near(nullptr, mo);
    PiiMaskerOptions po;
    po.threads = threads;
    PiiMasker pii(po);
    FusedPipeline pipeline({&cleaner, &quality, &exact, &near, &pii});
    DocumentBatch batch = make_batch(texts);
    pipeline.process(batch);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      out.push_back(batch.kept(i) ? std::string(batch.texts[i])
                                  : "dropped by " + std::string(batch.rejections[i].rule));
    }
    outputs.push_back(std::move(out));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], outputs[2]);
}

TEST(FusedPipeline, WithoutCleanerInvalidUtf8IsRepairedFirst) {
  PiiMasker pii;
  FusedPipeline pipeline({nullptr, nullptr, nullptr, nullptr, &pii});
  DocumentBatch batch = make_batch({std::string("caf\xff"), "ok"});
  pipeline.process(batch);
  EXPECT_EQ(batch.texts[0], "caf\xEF\xBF\xBD");
  EXPECT_EQ(batch.texts[1], "ok");
  EXPECT_TRUE(batch.kept(0));
}

}  // namespace
}  // namespace luminamoon::data
