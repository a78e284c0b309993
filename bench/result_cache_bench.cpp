// The result cache's own throughput: lookups/s of a hit-heavy workload (80 % of
// the lookups repeat a hot key, the rest are new inputs, computed and inserted as a server
// would) and inserts/s of a stream of unique inputs (the cache full, every insert evicting),
// with 1 and 2 threads, 16 shards against 1. Keys are ~40 bytes (CacheKey: model instance,
// options, a short text), values 384 floats (a pooled bge-small vector). The median of
// several runs.
//
//   result_cache_bench [--runs N] [--ops N (per thread)] [--mb N (the bound)] [--metrics]
//
// --metrics gives the caches a MetricsRegistry (warden_cache_* counters and gauges), as the
// server does.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "serving/metrics.hpp"
#include "serving/result_cache.hpp"

namespace {

using warden::serving::CachedResult;
using warden::serving::CacheKey;
using warden::serving::MetricsRegistry;
using warden::serving::ResultCache;
using warden::serving::ResultCacheOptions;

constexpr std::size_t kFloats = 384;
constexpr std::size_t kHotKeys = 4096;

std::string make_key(std::uint64_t space, std::uint64_t n) {
  // 1+8 + 1+8 + 1+8+~15: about 42 bytes.
  return CacheKey()
      .add(std::uint64_t{7})
      .add(std::uint64_t{1})
      .add("query " + std::to_string(space) + "-" + std::to_string(n))
      .take();
}

// Runs body(thread) on `threads` threads started together; returns the wall seconds.
template <typename Body>
double timed(int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(t);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Figures {
  double lookups_per_s = 0;
  double hit_rate = 0;
  double inserts_per_s = 0;
};

Figures run_once(std::size_t shards, int threads, std::size_t ops, std::size_t max_bytes, int run,
                 const std::vector<ResultCache::Value>& values, MetricsRegistry* metrics) {
  ResultCacheOptions options;
  options.max_bytes = max_bytes;
  options.shards = shards;
  Figures f;

  // Hit-heavy: the hot keys are in the cache; 80 % of the lookups repeat one of them, 20 % are
  // new inputs, which miss and are inserted.
  {
    ResultCache cache(options, metrics);
    std::vector<std::string> hot;
    for (std::size_t i = 0; i < kHotKeys; ++i) {
      hot.push_back(make_key(0, i));
      cache.insert(hot.back(), values[i % values.size()]);
    }
    std::vector<std::vector<std::string>> seq(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(run) * 100 + static_cast<std::uint64_t>(t));
      seq[t].reserve(ops);
      for (std::size_t i = 0; i < ops; ++i) {
        if (rng() % 100 < 80) {
          seq[t].push_back(hot[rng() % kHotKeys]);
        } else {
          seq[t].push_back(make_key(1 + static_cast<std::uint64_t>(run * 16 + t), i));
        }
      }
    }
    const double seconds = timed(threads, [&](int t) {
      std::size_t i = 0;
      for (const std::string& key : seq[t]) {
        if (cache.find(key) == nullptr) cache.insert(key, values[i % values.size()]);
        ++i;
      }
    });
    const auto s = cache.stats();
    f.lookups_per_s = static_cast<double>(ops) * threads / seconds;
    f.hit_rate = static_cast<double>(s.hits) / static_cast<double>(s.hits + s.misses);
  }

  // Inserts: unique inputs, the cache full after the first few tens of thousands.
  {
    ResultCache cache(options, metrics);
    std::vector<std::vector<std::string>> keys(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      keys[t].reserve(ops);
      for (std::size_t i = 0; i < ops; ++i)
        keys[t].push_back(make_key(100 + static_cast<std::uint64_t>(t), i));
    }
    const double seconds = timed(threads, [&](int t) {
      std::size_t i = 0;
      for (std::string& key : keys[t]) cache.insert(std::move(key), values[i++ % values.size()]);
    });
    f.inserts_per_s = static_cast<double>(ops) * threads / seconds;
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::size_t ops = 400'000;
  std::size_t mb = 64;
  bool with_metrics = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
      ops = static_cast<std::size_t>(std::max(1000, std::atoi(argv[++i])));
    } else if (std::strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
      mb = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    } else if (std::strcmp(argv[i], "--metrics") == 0) {
      with_metrics = true;
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--ops N per thread] [--mb N] [--metrics]\n", argv[0]);
      return 2;
    }
  }
  std::vector<ResultCache::Value> values;
  for (std::size_t i = 0; i < 1024; ++i) {
    auto v = std::make_shared<CachedResult>();
    v->values.assign(kFloats, static_cast<float>(i));
    v->tokens = 12;
    values.push_back(std::move(v));
  }
  const std::size_t key_bytes = make_key(1, 123456).size();
  std::printf(
      "keys ~%zu bytes, values %zu floats, entry %zu bytes, bound %zu MiB (~%zu entries), "
      "%zu ops per thread, median of %d runs%s\n",
      key_bytes, kFloats, ResultCache::entry_bytes(key_bytes, kFloats), mb,
      (mb << 20) / ResultCache::entry_bytes(key_bytes, kFloats), ops, runs,
      with_metrics ? ", with metrics" : "");
  MetricsRegistry registry;
  std::printf("%-7s %-8s %18s %9s %15s\n", "shards", "threads", "hit-heavy lookups/s", "hit rate",
              "inserts/s");
  for (const std::size_t shards : {std::size_t{16}, std::size_t{1}}) {
    for (const int threads : {1, 2}) {
      std::vector<double> lookups, hits, inserts;
      for (int r = 0; r < runs; ++r) {
        const Figures f =
            run_once(shards, threads, ops, mb << 20, r, values, with_metrics ? &registry : nullptr);
        lookups.push_back(f.lookups_per_s);
        hits.push_back(f.hit_rate);
        inserts.push_back(f.inserts_per_s);
      }
      std::printf("%-7zu %-8d %18.3g %8.1f%% %15.3g\n", shards, threads, median(lookups), 100 * median(hits),
                  median(inserts));
    }
  }
  return 0;
}
