// The result cache's contract: keys that never collide, full-key lookups that
// return the very value stored, a byte bound that holds under a stream of unique inputs
// with least-recently-used eviction, TTL expiry on read, invalidation by prefix, metrics,
// and thread safety under concurrent finds, inserts, invalidations and scrapes (run under
// ThreadSanitizer by scripts/test).

#include "serving/result_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "serving/metrics.hpp"
#include "support/metrics_text.hpp"

namespace warden::serving {
namespace {

using namespace std::chrono_literals;

ResultCache::Value make_value(std::size_t floats, float first = 0.0F, std::size_t tokens = 1) {
  auto r = std::make_shared<CachedResult>();
  r->values.assign(floats, 0.5F);
  if (floats > 0) r->values[0] = first;
  r->tokens = tokens;
  return r;
}

ResultCacheOptions options(std::size_t max_bytes, std::size_t shards = 1,
                           std::chrono::milliseconds ttl = 0ms) {
  ResultCacheOptions o;
  o.max_bytes = max_bytes;
  o.shards = shards;
  o.ttl = ttl;
  return o;
}

// prefix followed by n. (Not `"k" + std::to_string(n)`: GCC 12 at -O3 warns, wrongly, that
// that operator+ overlaps its copies (-Wrestrict).)
std::string numbered(std::string_view prefix, std::uint64_t n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

using warden::testing::sample_value;

// ---- CacheKey

TEST(CacheKey, FieldSplitsNeverCollide) {
  EXPECT_NE(CacheKey().add("ab").add("c").str(), CacheKey().add("a").add("bc").str());
  EXPECT_NE(CacheKey().add("abc").str(), CacheKey().add("abc").add("").str());
  EXPECT_NE(CacheKey().add("").str(), CacheKey().add("").add("").str());
  EXPECT_NE(CacheKey().add("").str(), CacheKey().str());
  // Equal field lists give equal keys.
  EXPECT_EQ(CacheKey().add("ab").add("c").str(), CacheKey().add("ab").add("c").str());
  // A separator inside a field cannot fake a field boundary.
  EXPECT_NE(CacheKey().add(std::string_view("a\0b", 3)).str(),
            CacheKey().add("a").add(std::string_view("b", 1)).str());
}

TEST(CacheKey, IdsTextAndIntegersNeverCollide) {
  const std::vector<std::uint32_t> ids{0x64636261U};  // the bytes "abcd", little-endian
  const std::vector<std::uint32_t> none;
  EXPECT_NE(CacheKey().add(ids).str(), CacheKey().add("abcd").str());
  const std::vector<std::uint32_t> ab{1, 2};
  const std::vector<std::uint32_t> a{1};
  const std::vector<std::uint32_t> b{2};
  EXPECT_NE(CacheKey().add(ab).str(), CacheKey().add(a).add(b).str());
  EXPECT_NE(CacheKey().add(ab).str(), CacheKey().add(std::vector<std::uint32_t>{2, 1}).str());
  EXPECT_EQ(CacheKey().add(ab).str(), CacheKey().add(std::vector<std::uint32_t>{1, 2}).str());
  // Integers are fixed-width: 1 then 23 differs from 12 then 3.
  EXPECT_NE(CacheKey().add(std::uint64_t{1}).add(std::uint64_t{23}).str(),
            CacheKey().add(std::uint64_t{12}).add(std::uint64_t{3}).str());
  EXPECT_NE(CacheKey().add(std::uint64_t{1}).str(), CacheKey().add(std::uint64_t{256}).str());
  // Fields of different types with the same bytes: an empty text, no ids and the integer 0;
  // eight characters and a length of 8 followed by an integer made of those characters.
  const std::string empty_text = CacheKey().add("").str();
  EXPECT_NE(empty_text, CacheKey().add(none).str());
  EXPECT_NE(empty_text, CacheKey().add(std::uint64_t{0}).str());
  EXPECT_NE(CacheKey().add(none).str(), CacheKey().add(std::uint64_t{0}).str());
  std::uint64_t abcdefgh = 0;
  std::memcpy(&abcdefgh, "abcdefgh", 8);
  EXPECT_NE(CacheKey().add("abcdefgh").str(), CacheKey().add(std::uint64_t{8}).add(abcdefgh).str());
  EXPECT_NE(CacheKey().add(ab).str(),
            CacheKey().add(std::uint64_t{2}).add(std::uint64_t{1} | std::uint64_t{2} << 32).str());
}

TEST(CacheKey, TakeMovesTheKeyOut) {
  CacheKey k;
  k.add(std::uint64_t{7}).add("text");
  const std::string copy = k.str();
  EXPECT_EQ(k.take(), copy);
}

// ---- find and insert

TEST(ResultCache, FindInsertReplace) {
  ResultCache cache(options(1 << 20, 4));
  EXPECT_TRUE(cache.enabled());
  EXPECT_EQ(cache.options().shards, 4U);
  const std::string key = CacheKey().add(std::uint64_t{1}).add("hello").str();
  EXPECT_EQ(cache.find(key), nullptr);

  const auto v1 = make_value(384, 1.0F, 5);
  cache.insert(key, v1);
  auto hit = cache.find(key);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit.get(), v1.get());  // the very value stored, not a copy
  EXPECT_EQ(hit->tokens, 5U);
  EXPECT_EQ(cache.find(key).get(), v1.get());

  const auto v2 = make_value(16, 2.0F, 3);
  cache.insert(key, v2);
  EXPECT_EQ(cache.find(key).get(), v2.get());
  hit.reset();
  EXPECT_EQ(v1.use_count(), 1);  // the replaced value is no longer held

  const auto s = cache.stats();
  EXPECT_EQ(s.hits, 3U);
  EXPECT_EQ(s.misses, 1U);
  EXPECT_EQ(s.entries, 1U);
  EXPECT_EQ(s.bytes, ResultCache::entry_bytes(key.size(), 16));
  EXPECT_EQ(s.evictions, 0U);
  EXPECT_EQ(s.expirations, 0U);

  cache.insert("other", nullptr);  // a null value is not stored
  EXPECT_EQ(cache.stats().entries, 1U);
}

TEST(ResultCache, ShardsRoundUpToAPowerOfTwo) {
  EXPECT_EQ(ResultCache(options(1 << 20, 3)).options().shards, 4U);
  EXPECT_EQ(ResultCache(options(1 << 20, 0)).options().shards, 1U);
  EXPECT_EQ(ResultCache(options(1 << 20, 16)).options().shards, 16U);
}

TEST(ResultCache, ComparesWholeKeys) {
  ResultCache cache(options(1 << 22, 8));
  const std::string base(200, 'x');
  std::vector<std::string> keys;
  keys.push_back(base);
  keys.push_back(base + "y");
  keys.push_back(base + "z");
  keys.push_back(base.substr(0, 199));
  std::string one_byte = base;
  one_byte[100] = 'w';
  keys.push_back(one_byte);
  // Embedded NUL bytes: a C-string comparison would stop at the first one.
  keys.push_back(std::string("a\0b", 3));
  keys.push_back(std::string("a\0c", 3));
  keys.push_back(std::string("a\0", 2));
  keys.push_back(std::string("a"));
  keys.push_back(std::string(1, '\0'));
  keys.push_back(std::string(2, '\0'));
  keys.push_back(std::string());
  // Keys built by CacheKey that share the model and differ in the input's last byte.
  keys.push_back(CacheKey().add(std::uint64_t{42}).add(std::string(64, 'q') + "1").str());
  keys.push_back(CacheKey().add(std::uint64_t{42}).add(std::string(64, 'q') + "2").str());

  std::vector<ResultCache::Value> values;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    values.push_back(make_value(8, static_cast<float>(i)));
    cache.insert(keys[i], values[i]);
  }
  ASSERT_EQ(cache.stats().entries, keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto found = cache.find(keys[i]);
    ASSERT_NE(found, nullptr) << i;
    EXPECT_EQ(found.get(), values[i].get()) << i;
  }
  // Near misses of stored keys are misses.
  EXPECT_EQ(cache.find(base + "yy"), nullptr);
  EXPECT_EQ(cache.find(std::string("a\0d", 3)), nullptr);
  EXPECT_EQ(cache.find(std::string(3, '\0')), nullptr);
  EXPECT_EQ(cache.find(base.substr(0, 198)), nullptr);
}

TEST(ResultCache, DisabledCacheStoresNothing) {
  ResultCache cache(options(0, 4));
  EXPECT_FALSE(cache.enabled());
  cache.insert("key", make_value(4));
  EXPECT_EQ(cache.find("key"), nullptr);
  EXPECT_EQ(cache.find("key"), nullptr);
  const auto s = cache.stats();
  EXPECT_EQ(s.entries, 0U);
  EXPECT_EQ(s.bytes, 0U);
  EXPECT_EQ(s.hits, 0U);
  EXPECT_EQ(s.misses, 0U);  // off is not a miss: nothing is counted
  EXPECT_EQ(s.evictions, 0U);
  cache.erase_prefix("k");
  cache.clear();
  EXPECT_EQ(cache.stats().entries, 0U);
}

// ---- the byte bound

TEST(ResultCache, StreamOfUniqueInputsStaysWithinTheBound) {
  constexpr std::size_t kMaxBytes = 64 * 1024;
  constexpr std::size_t kInputs = 100'000;
  ResultCache cache(options(kMaxBytes, 4));
  const auto value = make_value(32);
  std::size_t max_seen = 0;
  for (std::size_t i = 0; i < kInputs; ++i) {
    cache.insert(CacheKey().add(std::uint64_t{1}).add(numbered("input ", i)).take(), value);
    const auto s = cache.stats();
    max_seen = std::max(max_seen, s.bytes);
    ASSERT_LE(s.bytes, kMaxBytes) << "after " << i + 1 << " inputs";
  }
  const auto s = cache.stats();
  EXPECT_GT(max_seen, kMaxBytes / 2);  // the bound is used, not merely respected
  EXPECT_GT(s.entries, 0U);
  EXPECT_EQ(s.evictions, kInputs - s.entries);  // every input not held was evicted, and counted
  // Each entry costs its key, values and bookkeeping, so far fewer than the inputs stay.
  EXPECT_LE(s.entries * ResultCache::entry_bytes(20, 32), kMaxBytes);
  // The latest input is still there.
  EXPECT_NE(cache.find(CacheKey().add(std::uint64_t{1}).add("input 99999").str()), nullptr);
}

TEST(ResultCache, EvictsTheLeastRecentlyUsed) {
  const std::size_t one = ResultCache::entry_bytes(2, 10);
  ResultCache cache(options(4 * one, 1));  // room for four entries of this size
  for (const char* k : {"k0", "k1", "k2", "k3"}) cache.insert(k, make_value(10));
  EXPECT_EQ(cache.stats().entries, 4U);
  EXPECT_EQ(cache.stats().evictions, 0U);

  ASSERT_NE(cache.find("k0"), nullptr);  // k0 is now the most recently used
  cache.insert("k4", make_value(10));    // evicts k1, the oldest not read since
  EXPECT_EQ(cache.stats().evictions, 1U);
  EXPECT_NE(cache.find("k0"), nullptr);
  EXPECT_EQ(cache.find("k1"), nullptr);
  EXPECT_NE(cache.find("k2"), nullptr);

  // Oldest first: k3 k4 k0 k2.
  cache.insert("k5", make_value(10));  // evicts k3
  EXPECT_EQ(cache.find("k3"), nullptr);
  EXPECT_NE(cache.find("k4"), nullptr);

  // Oldest first: k0 k2 k5 k4. A larger entry evicts as many as it needs: k0 and k2.
  cache.insert("k6", make_value(10 + one / sizeof(float)));
  EXPECT_EQ(cache.find("k0"), nullptr);
  EXPECT_EQ(cache.find("k2"), nullptr);
  EXPECT_NE(cache.find("k4"), nullptr);
  EXPECT_NE(cache.find("k5"), nullptr);
  EXPECT_NE(cache.find("k6"), nullptr);
  EXPECT_EQ(cache.stats().evictions, 4U);
  EXPECT_LE(cache.stats().bytes, 4 * one);
}

TEST(ResultCache, AnEntryLargerThanAShardsShareIsNotStored) {
  constexpr std::size_t kShards = 4;
  constexpr std::size_t kShare = 4096;
  ResultCache cache(options(kShards * kShare, kShards));
  cache.insert("small", make_value(8));
  const std::size_t too_many_floats = kShare / sizeof(float);  // over the share with the key
  ASSERT_GT(ResultCache::entry_bytes(3, too_many_floats), kShare);
  cache.insert("big", make_value(too_many_floats));
  EXPECT_EQ(cache.find("big"), nullptr);
  EXPECT_NE(cache.find("small"), nullptr);  // nothing was evicted for it
  EXPECT_EQ(cache.stats().entries, 1U);
  EXPECT_EQ(cache.stats().evictions, 0U);
  EXPECT_EQ(cache.stats().bytes, ResultCache::entry_bytes(5, 8));

  // One that fits the share exactly is stored.
  const std::size_t key_bytes = 5;
  const std::size_t floats = (kShare - ResultCache::entry_bytes(key_bytes, 0)) / sizeof(float);
  ASSERT_LE(ResultCache::entry_bytes(key_bytes, floats), kShare);
  cache.insert("exact", make_value(floats));
  EXPECT_NE(cache.find("exact"), nullptr);
}

TEST(ResultCache, ReplacingInPlaceDoesNotLeakBytes) {
  ResultCache cache(options(1 << 20, 2));
  std::mt19937 rng(7);
  std::size_t floats = 0;
  for (int i = 0; i < 1000; ++i) {
    floats = rng() % 500;
    cache.insert("same key", make_value(floats, static_cast<float>(i)));
    ASSERT_EQ(cache.stats().entries, 1U);
    ASSERT_EQ(cache.stats().bytes, ResultCache::entry_bytes(8, floats));
  }
  EXPECT_EQ(cache.find("same key")->values[0], 999.0F);
  EXPECT_EQ(cache.stats().evictions, 0U);  // a replacement is not an eviction
}

// ---- TTL

TEST(ResultCache, EntriesExpireOnReadAfterTheTtl) {
  constexpr auto kTtl = 30ms;
  ResultCache cache(options(1 << 20, 2, kTtl));
  const auto before = ResultCache::Clock::now();
  cache.insert("key", make_value(4));
  const auto early = cache.find("key");
  // On a loaded machine the first find may itself come after the TTL; only check it when not.
  if (ResultCache::Clock::now() - before < kTtl) {
    EXPECT_NE(early, nullptr);
  }
  const auto hits = cache.stats().hits;
  std::this_thread::sleep_for(kTtl + 20ms);
  EXPECT_EQ(cache.find("key"), nullptr);
  auto s = cache.stats();
  EXPECT_EQ(s.expirations, 1U);
  EXPECT_EQ(s.hits, hits);
  // The expired read is a miss (as is an early read that came late, which expired it).
  EXPECT_EQ(s.misses, 2U - hits);
  EXPECT_EQ(s.entries, 0U);
  EXPECT_EQ(s.bytes, 0U);
  EXPECT_EQ(s.evictions, 0U);  // an expiration is not an eviction

  // A second read of the expired key is a plain miss.
  EXPECT_EQ(cache.find("key"), nullptr);
  s = cache.stats();
  EXPECT_EQ(s.expirations, 1U);
  EXPECT_EQ(s.misses, 3U - hits);

  // Inserting again starts a fresh lifetime.
  cache.insert("key", make_value(4));
  const auto after = ResultCache::Clock::now();
  const auto again = cache.find("key");
  if (ResultCache::Clock::now() - after < kTtl) {
    EXPECT_NE(again, nullptr);
  }
}

TEST(ResultCache, WithoutTtlEntriesNeverExpire) {
  ResultCache cache(options(1 << 20, 2));
  cache.insert("key", make_value(4));
  std::this_thread::sleep_for(40ms);
  EXPECT_NE(cache.find("key"), nullptr);
  EXPECT_EQ(cache.stats().expirations, 0U);
}

// ---- invalidation

TEST(ResultCache, ErasePrefixDropsOneModelsEntries) {
  ResultCache cache(options(1 << 20, 8));
  const std::string model1 = CacheKey().add(std::uint64_t{1}).str();
  for (int i = 0; i < 50; ++i) {
    cache.insert(CacheKey().add(std::uint64_t{1}).add(numbered("text ", i)).take(), make_value(8));
    cache.insert(CacheKey().add(std::uint64_t{2}).add(numbered("text ", i)).take(), make_value(16));
  }
  ASSERT_EQ(cache.stats().entries, 100U);
  cache.erase_prefix(model1);
  auto s = cache.stats();
  EXPECT_EQ(s.entries, 50U);
  EXPECT_EQ(s.evictions, 0U);  // invalidation is not eviction
  std::size_t expected_bytes = 0;
  for (int i = 0; i < 50; ++i) {
    const std::string k1 = CacheKey().add(std::uint64_t{1}).add(numbered("text ", i)).take();
    const std::string k2 = CacheKey().add(std::uint64_t{2}).add(numbered("text ", i)).take();
    EXPECT_EQ(cache.find(k1), nullptr) << i;
    EXPECT_NE(cache.find(k2), nullptr) << i;
    expected_bytes += ResultCache::entry_bytes(k2.size(), 16);
  }
  EXPECT_EQ(s.bytes, expected_bytes);

  cache.erase_prefix(model1);  // nothing left to erase
  EXPECT_EQ(cache.stats().entries, 50U);
  cache.erase_prefix("");  // every key starts with the empty prefix
  s = cache.stats();
  EXPECT_EQ(s.entries, 0U);
  EXPECT_EQ(s.bytes, 0U);
}

TEST(ResultCache, ClearEmptiesTheCacheWhichStaysUsable) {
  ResultCache cache(options(1 << 20, 4));
  for (int i = 0; i < 20; ++i) cache.insert(numbered("k", i), make_value(8));
  ASSERT_NE(cache.find("k3"), nullptr);
  cache.clear();
  auto s = cache.stats();
  EXPECT_EQ(s.entries, 0U);
  EXPECT_EQ(s.bytes, 0U);
  EXPECT_EQ(s.hits, 1U);  // the counters are totals; clearing does not reset them
  EXPECT_EQ(cache.find("k3"), nullptr);
  const auto v = make_value(8);
  cache.insert("k3", v);
  EXPECT_EQ(cache.find("k3").get(), v.get());
  EXPECT_EQ(cache.stats().bytes, ResultCache::entry_bytes(2, 8));
}

// ---- metrics

TEST(ResultCache, Metrics) {
  MetricsRegistry registry;
  const std::size_t one = ResultCache::entry_bytes(2, 10);
  ResultCache cache(options(2 * one, 1), &registry);
  cache.insert("k0", make_value(10));
  cache.insert("k1", make_value(10));
  cache.insert("k2", make_value(10));  // evicts k0
  EXPECT_EQ(cache.find("k0"), nullptr);
  EXPECT_NE(cache.find("k1"), nullptr);
  EXPECT_NE(cache.find("k2"), nullptr);
  EXPECT_NE(cache.find("k2"), nullptr);
  EXPECT_EQ(cache.find("nope"), nullptr);

  std::string text = registry.render();
  EXPECT_NE(text.find("# TYPE warden_cache_hits_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE warden_cache_bytes gauge"), std::string::npos) << text;
  EXPECT_EQ(sample_value(text, "warden_cache_hits_total"), 3);
  EXPECT_EQ(sample_value(text, "warden_cache_misses_total"), 2);
  EXPECT_EQ(sample_value(text, "warden_cache_evictions_total"), 1);
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), 2);
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), static_cast<double>(2 * one));

  cache.erase_prefix("k1");
  text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), 1);
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), static_cast<double>(one));
  cache.clear();
  text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), 0);
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), 0);
  EXPECT_EQ(sample_value(text, "warden_cache_hits_total"), 3);
}

TEST(ResultCache, ExpiredEntriesLeaveTheGauges) {
  MetricsRegistry registry;
  ResultCache cache(options(1 << 20, 1, 5ms), &registry);
  cache.insert("k", make_value(10));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cache.find("k"), nullptr);
  const std::string text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), 0);
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), 0);
  EXPECT_EQ(sample_value(text, "warden_cache_misses_total"), 1);
}

// The registry is usually the server's and outlives any one cache (a cache rebuilt on a
// configuration change, a test's cache): scraping it afterwards must not reach into the
// destroyed cache, and a second cache on the same registry must be accepted.
TEST(ResultCache, RegistryOutlivesTheCache) {
  MetricsRegistry registry;
  {
    ResultCache cache(options(1 << 20, 2), &registry);
    cache.insert("k", make_value(10));
    EXPECT_NE(cache.find("k"), nullptr);
  }
  std::string text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), 0);
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), 0);
  EXPECT_EQ(sample_value(text, "warden_cache_hits_total"), 1);

  ResultCache second(options(1 << 20, 2), &registry);
  second.insert("k", make_value(10));
  EXPECT_EQ(second.find("k2"), nullptr);
  text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), 1);
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), static_cast<double>(ResultCache::entry_bytes(1, 10)));
  EXPECT_EQ(sample_value(text, "warden_cache_misses_total"), 1);
}

// ---- concurrency (scripts/test runs this under ThreadSanitizer)

// The value for key (model, id): its floats say whose it is, so that a reader can tell a
// value stored under another key.
ResultCache::Value value_for(std::uint64_t model, std::uint64_t id) {
  auto r = std::make_shared<CachedResult>();
  r->values.assign(4 + id % 24, static_cast<float>(id));
  r->values[0] = static_cast<float>(model);
  r->values[1] = static_cast<float>(id);
  r->tokens = id;
  return r;
}

void concurrent_mix(std::chrono::milliseconds ttl) {
  constexpr int kThreads = 8;
  constexpr int kOps = 20000;
  constexpr std::uint64_t kModels = 3;
  constexpr std::uint64_t kIds = 96;
  constexpr std::size_t kMaxBytes = 16 * 1024;  // a few dozen entries: eviction all the time
  MetricsRegistry registry;
  ResultCache cache(options(kMaxBytes, 4, ttl), &registry);
  std::vector<std::vector<std::string>> keys(kModels);
  std::vector<std::string> prefixes;
  for (std::uint64_t m = 0; m < kModels; ++m) {
    prefixes.push_back(CacheKey().add(m).str());
    for (std::uint64_t id = 0; id < kIds; ++id) {
      keys[m].push_back(CacheKey().add(m).add(numbered("query number ", id)).take());
    }
  }

  std::atomic<int> wrong{0}, over_bound{0}, found{0}, finds{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 1);
      int my_found = 0, my_finds = 0;
      for (int i = 0; i < kOps; ++i) {
        const std::uint64_t m = rng() % kModels;
        const std::uint64_t id = rng() % kIds;
        const unsigned op = rng() % 100;
        if (op < 55) {
          ++my_finds;
          if (const auto v = cache.find(keys[m][id])) {
            ++my_found;
            if (v->values.size() != 4 + id % 24 || v->values[0] != static_cast<float>(m) ||
                v->values[1] != static_cast<float>(id) || v->tokens != id) {
              ++wrong;
            }
          }
        } else if (op < 92) {
          cache.insert(keys[m][id], value_for(m, id));
        } else if (op < 94) {
          cache.erase_prefix(prefixes[m]);
        } else if (op < 98) {
          if (cache.stats().bytes > kMaxBytes) ++over_bound;
        } else if (op < 99) {
          (void)registry.render();
        } else {
          cache.clear();
        }
      }
      found += my_found;
      finds += my_finds;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(over_bound.load(), 0);
  EXPECT_GT(found.load(), 0);  // the mix did hit, or it proved nothing
  const auto s = cache.stats();
  EXPECT_EQ(s.hits, static_cast<std::uint64_t>(found.load()));
  EXPECT_EQ(s.hits + s.misses, static_cast<std::uint64_t>(finds.load()));
  EXPECT_GT(s.evictions, 0U);
  EXPECT_LE(s.bytes, kMaxBytes);
  // Bytes and entries agree with what is left: every entry left is found and accounted.
  std::size_t bytes = 0, entries = 0;
  for (std::uint64_t m = 0; m < kModels; ++m) {
    for (std::uint64_t id = 0; id < kIds; ++id) {
      if (cache.find(keys[m][id]) != nullptr) {
        ++entries;
        bytes += ResultCache::entry_bytes(keys[m][id].size(), 4 + id % 24);
      }
    }
  }
  if (ttl.count() == 0) {
    EXPECT_EQ(entries, s.entries);
    EXPECT_EQ(bytes, s.bytes);
  }
  const std::string text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_cache_hits_total"), static_cast<double>(cache.stats().hits));
  EXPECT_EQ(sample_value(text, "warden_cache_misses_total"), static_cast<double>(cache.stats().misses));
  EXPECT_EQ(sample_value(text, "warden_cache_evictions_total"), static_cast<double>(cache.stats().evictions));
  EXPECT_EQ(sample_value(text, "warden_cache_bytes"), static_cast<double>(cache.stats().bytes));
  EXPECT_EQ(sample_value(text, "warden_cache_entries"), static_cast<double>(cache.stats().entries));
}

TEST(ResultCache, ConcurrentFindsInsertsAndInvalidations) {
  concurrent_mix(0ms);
}

TEST(ResultCache, ConcurrentAccessWithExpiry) {
  concurrent_mix(1ms);
}

}  // namespace
}  // namespace warden::serving
