#pragma once
// The result cache: final results of short, repeated inputs — a pooled vector, a
// per-token matrix, a pair's logits — kept in memory so that the same text on the same model
// with the same options is computed once.
//
// Keys are byte strings built with CacheKey from everything that changes the output (the
// model's identity, the options, the exact input); a hit compares the whole key, never a
// hash alone. Memory is bounded in bytes (keys, values and per-entry bookkeeping all count);
// the least recently used entry goes first. An optional TTL expires entries on read. The
// cache is split into shards, each with its own lock and its own share of the bound, so
// that concurrent workers rarely wait on one another.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"

namespace warden::serving {

class MetricsRegistry;
class Counter;

// Appends typed, length-prefixed fields, so that two different field lists never give one
// key ("ab" + "c" differs from "a" + "bc"; the text "" differs from no ids and from 0). A key
// built from a list's first fields is a prefix of the whole list's key (erase_prefix).
class CacheKey {
 public:
  CacheKey& add(std::string_view field);
  CacheKey& add(std::uint64_t value);
  CacheKey& add(std::span<const std::uint32_t> ids);
  [[nodiscard]] const std::string& str() const noexcept { return key_; }
  [[nodiscard]] std::string take() noexcept { return std::move(key_); }

 private:
  void append(std::uint64_t value);
  std::string key_;
};

// One input's result: its floats (a pooled vector, a tokens x dim matrix, logits) or its
// retrieval outputs, and the tokens it took, which responses report (usage, x-compute-tokens)
// on a hit too.
struct CachedResult {
  std::vector<float> values;
  embed::RetrievalVectors retrieval;
  std::size_t tokens = 0;

  // What the entry holds, in 4-byte units (a sparse entry is an id and a weight).
  [[nodiscard]] std::size_t floats() const noexcept {
    return values.size() + retrieval.dense.size() + 2 * retrieval.sparse.size() +
           retrieval.multi.values().size();
  }
};

struct ResultCacheOptions {
  std::size_t max_bytes = 0;         // 0: the cache is off (find misses, insert drops)
  std::chrono::milliseconds ttl{0};  // 0: entries never expire
  std::size_t shards = 16;           // rounded up to a power of two
};

struct ResultCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;  // entries dropped to make room (not expirations)
  std::uint64_t expirations = 0;
  std::size_t bytes = 0;
  std::size_t entries = 0;
};

class ResultCache {
 public:
  using Value = std::shared_ptr<const CachedResult>;
  using Clock = std::chrono::steady_clock;

  // metrics may be null; with one, warden_cache_{hits,misses,evictions}_total and
  // warden_cache_{bytes,entries} are registered (it must outlive the cache). They are plain
  // series, not callbacks into the cache: the registry may keep being scraped after the
  // cache is gone (its entries leave the gauges), and several caches on one registry add up.
  explicit ResultCache(ResultCacheOptions options, MetricsRegistry* metrics = nullptr);
  ~ResultCache();
  ResultCache(const ResultCache&) = delete;
  ResultCache& operator=(const ResultCache&) = delete;

  [[nodiscard]] bool enabled() const noexcept { return options_.max_bytes > 0; }
  [[nodiscard]] const ResultCacheOptions& options() const noexcept { return options_; }

  // The value stored under exactly `key`, or null (absent, expired, or the cache is off).
  // Counts a hit or a miss. Thread-safe.
  [[nodiscard]] Value find(std::string_view key);
  // Stores `value` under `key`, replacing an entry with that key, evicting the least
  // recently used entries of its shard until it fits. An entry larger than a shard's share
  // of the bound is not stored. Thread-safe.
  void insert(std::string key, Value value);
  // Drops every entry whose key starts with `prefix` (a model's identity, when it is
  // unloaded or replaced). Thread-safe; walks every entry.
  void erase_prefix(std::string_view prefix);
  void clear();

  [[nodiscard]] ResultCacheStats stats() const;

  // What one entry costs against the bound: key, values and bookkeeping.
  [[nodiscard]] static std::size_t entry_bytes(std::size_t key_bytes, std::size_t floats) noexcept;

 private:
  struct Shard;
  Shard& shard_for(std::string_view key) const noexcept;

  ResultCacheOptions options_;
  std::size_t shard_bytes_ = 0;
  std::vector<std::unique_ptr<Shard>> shards_;
  Counter* hits_ = nullptr;
  Counter* misses_ = nullptr;
  Counter* evictions_ = nullptr;
};

}  // namespace warden::serving
