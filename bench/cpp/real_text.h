// Real text for the micro-benchmarks: the documents of JSONL shards named by an environment
// variable (a glob), read with the engine's own ShardReader, e.g. the output of
// bench/real_corpus.py or bench/bench_pii.py --write-real DIR. A benchmark whose variable is
// unset or matches nothing reports that and is skipped (SkipWithError), never run on nothing.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "luminamoon/data/readers/shard_reader.h"

namespace luminamoon::data::bench {

// Every document of the shards `std::getenv(variable)` names; empty when unset or unreadable.
inline std::vector<std::string> load_real_text(const char* variable) {
  std::vector<std::string> docs;
  const char* pattern = std::getenv(variable);
  if (pattern == nullptr || *pattern == '\0') return docs;
  try {
    ShardReaderOptions options;
    options.threads = 1;
    ShardReader reader({pattern}, options);
    DocumentBatch batch;
    while (reader.next_batch(batch)) {
      for (const std::string_view text : batch.texts) docs.emplace_back(text);
    }
  } catch (...) {
    docs.clear();
  }
  return docs;
}

inline std::int64_t total_bytes(const std::vector<std::string>& docs) {
  std::int64_t n = 0;
  for (const std::string& d : docs) n += static_cast<std::int64_t>(d.size());
  return n;
}

}  // namespace luminamoon::data::bench
