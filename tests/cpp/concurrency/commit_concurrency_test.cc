// Concurrency of the commit path (issue 13): filter_batch / is_unique on worker threads while
// another thread commits in a loop. A commit must promote exactly what it wrote: RAM, the slot's
// dedup_count, the WAL and the MinHash companion agree afterwards, and a reopen sees every
// committed document. Also MinHash filter_batch with threads=2 from several threads at once (the
// in-order hand-off and the shape cache), and one QualityFilter's batches from several threads
// at once (its spare per-worker scratch). These tests are also the threaded driver of the
// ThreadSanitizer build (LUMINAMOON_SANITIZE_THREAD, target luminamoon_concurrency_tests,
// scripts/test.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "luminamoon/data/checkpoint/state_tracker.h"
#include "luminamoon/data/common/error.h"
#include "luminamoon/data/common/utf8_encode.h"
#include "luminamoon/data/dedup/stream_deduplicator.h"
#include "luminamoon/data/minhash/minhash_deduplicator.h"
#include "luminamoon/data/quality/quality_filter.h"

namespace luminamoon::data {
namespace {

namespace fs = std::filesystem;

class CommitConcurrency : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* unit = ::testing::UnitTest::GetInstance();
    dir_ = fs::temp_directory_path() / "lm_concurrency_";
    dir_ += std::to_string(unit->random_seed());
    dir_ += "_";
    dir_ += unit->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    meta_ = (dir_ / "run.meta").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string meta_;
};

constexpr int kWorkers = 4;
constexpr int kBatches = 40;
constexpr int kBatchSize = 25;

std::string document(int worker, int batch, int i) {
  // Distinct words per document (w<worker>_<batch>_<i>_<w>), so MinHash keeps every one of them
  // too. Appended piece by piece: GCC 12 at -O3 reports a bogus -Wrestrict on
  // `"w" + std::to_string(...)`, operator+(const char*, std::string&&) (GCC bug 105329).
  std::string out;
  for (int w = 0; w < 12; ++w) {
    out += 'w';
    const char* separator = "";
    for (const int part : {worker, batch, i, w}) {
      out += separator;
      out += std::to_string(part);
      separator = "_";
    }
    out += ' ';
  }
  return out;
}

// Runs `stage(worker, batch_of_views)` on kWorkers threads while `commit()` loops on another.
template <typename Stage, typename Commit>
void hammer(Stage stage, Commit commit) {
  std::atomic<bool> done{false};
  std::thread committer([&] {
    while (!done.load()) commit();
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<std::string> docs;
        for (int i = 0; i < kBatchSize; ++i) docs.push_back(document(w, b, i));
        std::vector<std::string_view> views(docs.begin(), docs.end());
        stage(views);
      }
    });
  }
  for (auto& t : workers) t.join();
  done.store(true);
  committer.join();
}

TEST_F(CommitConcurrency, ExactDedupPromotesExactlyWhatItWrote) {
  const std::size_t total = std::size_t{kWorkers} * kBatches * kBatchSize;
  {
    StateTracker tracker(meta_, {.read_only = false, .durable = false});
    StreamDeduplicator dedup(&tracker, {.threads = 2});
    std::uint64_t batch = 0;
    hammer(
        [&](std::span<const std::string_view> docs) {
          std::vector<std::uint8_t> keep(docs.size());
          dedup.filter_batch(docs, keep);
          for (const std::string_view d : docs) (void)dedup.contains(d);
        },
        [&] {
          tracker.update(++batch, StreamCoordinate{});
          tracker.commit();
        });
    tracker.commit();
    EXPECT_EQ(dedup.staged_count(), 0u);
    EXPECT_EQ(dedup.committed_count(), total);
    EXPECT_EQ(tracker.committed().dedup_count, total);
    EXPECT_EQ(fs::file_size(tracker.wal_path()), total * 8);
  }
  StateTracker tracker(meta_, {.read_only = false, .durable = false});
  StreamDeduplicator dedup(&tracker);
  EXPECT_EQ(dedup.committed_count(), total);
  for (int w = 0; w < kWorkers; ++w) EXPECT_FALSE(dedup.is_unique(document(w, kBatches - 1, 0)));
}

TEST_F(CommitConcurrency, MinHashAndExactDedupCommitTogether) {
  MinHashOptions options;
  options.config.num_perm = 16;
  options.threads = 1;
  std::size_t kept = 0;
  {
    StateTracker tracker(meta_, {.read_only = false, .durable = false});
    StreamDeduplicator dedup(&tracker, {.threads = 1});
    MinHashDeduplicator index(&tracker, options);
    hammer(
        [&](std::span<const std::string_view> docs) {
          std::vector<std::uint8_t> keep(docs.size());
          dedup.filter_batch(docs, keep);
          index.filter_batch(docs, keep);
          (void)tracker.has_pending();
        },
        [&] { tracker.commit(); });
    tracker.commit();
    EXPECT_EQ(index.staged_count(), 0u);
    EXPECT_EQ(dedup.staged_count(), 0u);
    kept = index.committed_count();
    EXPECT_GT(kept, 0u);
  }
  StateTracker tracker(meta_, {.read_only = false, .durable = false});
  MinHashDeduplicator index(&tracker, options);  // threw CorruptCheckpointError before the fix
  EXPECT_EQ(index.committed_count(), kept);
}

TEST_F(CommitConcurrency, RollbackAndCloseRaceWithStaging) {
  StateTracker tracker(meta_, {.read_only = false, .durable = false});
  StreamDeduplicator dedup(&tracker, {.threads = 1});
  int round = 0;
  hammer(
      [&](std::span<const std::string_view> docs) {
        for (const std::string_view d : docs) (void)dedup.is_unique(d);
      },
      [&] {
        if (++round % 3 == 0) {
          tracker.rollback();
        } else {
          tracker.commit();
        }
      });
  tracker.commit();
  EXPECT_EQ(dedup.committed_count(), tracker.committed().dedup_count);
  tracker.close();
  EXPECT_THROW(dedup.commit(), Error);
}

// MinHash filter_batch with threads=2 (signatures on the pool, probed in order by the calling
// thread alone) from several threads at once, each with its own deduplicator and thresholds that
// share optimal_lsh_shape's cache: every keep mask equals the one-thread answer.
TEST(MinHashBatchThreads, HandOffAndShapeCacheMatchOneThread) {
  std::vector<std::string> docs;
  for (int i = 0; i < 400; ++i) docs.push_back(document(0, i / 10, i % 10));
  for (int i = 0; i < 200; ++i) docs.push_back(docs[static_cast<std::size_t>(i * 7 % 400)]);
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const std::vector<double> thresholds = {0.5, 0.8, 0.9, 0.8};
  std::vector<std::vector<std::uint8_t>> expected;
  for (const double t : thresholds) {
    MinHashOptions options;
    options.threshold = t;
    options.threads = 1;
    MinHashDeduplicator one(nullptr, options);
    std::vector<std::uint8_t> keep(views.size());
    one.filter_batch(views, keep);
    expected.push_back(keep);
  }
  std::vector<std::thread> callers;
  std::vector<std::vector<std::uint8_t>> got(thresholds.size() * 2);
  for (std::size_t c = 0; c < got.size(); ++c) {
    callers.emplace_back([&, c] {
      MinHashOptions options;
      options.threshold = thresholds[c % thresholds.size()];
      options.threads = 2;
      MinHashDeduplicator index(nullptr, options);
      got[c].resize(views.size());
      index.filter_batch(views, got[c]);
    });
  }
  for (auto& t : callers) t.join();
  for (std::size_t c = 0; c < got.size(); ++c) {
    EXPECT_EQ(got[c], expected[c % thresholds.size()]) << "caller " << c;
  }
  EXPECT_EQ(std::count(expected[1].begin(), expected[1].end(), 1), 400);
}

// One QualityFilter (threads=2) from several threads at once, several batches each: the spare
// per-worker scratch a call takes and gives back is never shared, and a scratch that served a
// long document before gives the same answers on short ones. Every result equals a fresh
// filter's one-thread answer.
TEST(QualityBatchThreads, SpareScratchMatchesOneThread) {
  std::vector<std::string> docs;
  for (int i = 0; i < 120; ++i) {
    std::string text;
    const int lines = 1 + (i * 37) % 60;
    for (int line = 0; line < lines; ++line) {
      text += document(i % 3, line % (1 + i % 7), i) + (line % 5 == 0 ? "\n\n" : "\n");
    }
    docs.push_back(text);
  }
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const std::vector<std::string_view> presets = {"gopher_repetition", "gopher_quality", "c4",
                                                 "fineweb"};
  QualityFilterOptions one_thread;
  one_thread.threads = 1;
  const QualityBatchResult expected = QualityFilter(presets, {}, one_thread).filter_batch(views);
  QualityFilterOptions two;
  two.threads = 2;
  const QualityFilter shared(presets, {}, two);
  std::vector<std::thread> callers;
  std::vector<int> mismatches(6, 0);
  for (std::size_t c = 0; c < mismatches.size(); ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 4; ++round) {
        // Each caller its own order of batch sizes: long documents, then short ones, and back.
        const std::size_t from = (c * 13 + static_cast<std::size_t>(round) * 29) % views.size();
        const std::span<const std::string_view> part(views.data() + from, views.size() - from);
        const QualityBatchResult got = shared.filter_batch(part);
        for (std::size_t i = 0; i < part.size(); ++i) {
          if (got.keep[i] != expected.keep[from + i] ||
              (got.reasons[i] ? got.reasons[i]->rule : "") !=
                  (expected.reasons[from + i] ? expected.reasons[from + i]->rule : "")) {
            ++mismatches[c];
          }
        }
        if (!shared.check(views[from]).has_value() != (expected.keep[from] != 0)) ++mismatches[c];
      }
    });
  }
  for (auto& t : callers) t.join();
  for (std::size_t c = 0; c < mismatches.size(); ++c) EXPECT_EQ(mismatches[c], 0) << "caller " << c;
  EXPECT_GT(std::count(expected.keep.begin(), expected.keep.end(), 0), 0);  // some rejected
}

// hash_code_units (filter_batch's encoding of strs that are not ASCII) from several threads at
// once, each job spread over two workers: every worker encodes in a buffer of its own, and the
// answers equal one thread's.
TEST(HashCodeUnitsThreads, ConcurrentJobsMatchOneThread) {
  std::vector<std::vector<std::uint16_t>> storage;
  std::vector<CodeUnits> docs;
  for (std::size_t i = 0; i < 400; ++i) {
    std::vector<std::uint16_t> units(6000 + i);
    for (std::size_t k = 0; k < units.size(); ++k) {
      units[k] = static_cast<std::uint16_t>(k % 97 == i % 97 ? 0x20AC + i % 3 : 'a' + k % 26);
    }
    storage.push_back(std::move(units));
    docs.push_back({storage.back().data(), storage.back().size(), 2});
  }
  std::vector<std::uint64_t> expected(docs.size());
  ASSERT_EQ(hash_code_units(docs, expected, 1), Utf8Encoded::npos);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> callers;
  for (std::size_t c = 0; c < mismatches.size(); ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 3; ++round) {
        std::vector<std::uint64_t> got(docs.size());
        if (hash_code_units(docs, got, 2) != Utf8Encoded::npos || got != expected) ++mismatches[c];
      }
    });
  }
  for (auto& t : callers) t.join();
  for (std::size_t c = 0; c < mismatches.size(); ++c) EXPECT_EQ(mismatches[c], 0) << "caller " << c;
}

}  // namespace
}  // namespace luminamoon::data
