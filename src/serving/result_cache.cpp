#include "serving/result_cache.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>

#include "serving/metrics.hpp"

namespace warden::serving {

// Each field starts with a tag byte for its type, so that fields of different types with
// the same bytes (the text "" and the integer 0, eight characters and their length followed
// by an integer) never give one key.
void CacheKey::append(std::uint64_t value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  key_.append(bytes, sizeof bytes);
}

CacheKey& CacheKey::add(std::string_view field) {
  key_.push_back('s');
  append(static_cast<std::uint64_t>(field.size()));
  key_.append(field);
  return *this;
}

CacheKey& CacheKey::add(std::uint64_t value) {
  key_.push_back('u');
  append(value);
  return *this;
}

CacheKey& CacheKey::add(std::span<const std::uint32_t> ids) {
  key_.push_back('i');
  append(static_cast<std::uint64_t>(ids.size()));
  key_.append(reinterpret_cast<const char*>(ids.data()), ids.size_bytes());
  return *this;
}

namespace {

struct Entry {
  std::string key;
  ResultCache::Value value;
  ResultCache::Clock::time_point stored;
  std::size_t bytes = 0;
};

// Heterogeneous lookup: find() takes a string_view without building a std::string.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace

struct ResultCache::Shard {
  std::mutex mutex;
  std::list<Entry> lru;  // most recently used first; list nodes never move, so views stay valid
  std::unordered_map<std::string_view, std::list<Entry>::iterator, KeyHash, std::equal_to<>> index;
  std::size_t bytes = 0;
  std::uint64_t hits = 0, misses = 0, evictions = 0, expirations = 0;
  Gauge* bytes_gauge = nullptr;  // the registry's, shared by every shard (and cache); may be null
  Gauge* entries_gauge = nullptr;

  void erase(std::list<Entry>::iterator it) {
    bytes -= it->bytes;
    moved(-static_cast<double>(it->bytes), -1);
    index.erase(std::string_view(it->key));
    lru.erase(it);
  }
  void erase_all() {
    moved(-static_cast<double>(bytes), -static_cast<double>(lru.size()));
    index.clear();
    lru.clear();
    bytes = 0;
  }
  // Keeps the gauges in step with bytes and lru.size().
  void moved(double delta_bytes, double delta_entries) const noexcept {
    if (bytes_gauge != nullptr) bytes_gauge->add(delta_bytes);
    if (entries_gauge != nullptr) entries_gauge->add(delta_entries);
  }
};

std::size_t ResultCache::entry_bytes(std::size_t key_bytes, std::size_t floats) noexcept {
  // A list node, a hash node and the shared vector's control block, approximately.
  constexpr std::size_t kBookkeeping = 160;
  return key_bytes + floats * sizeof(float) + kBookkeeping;
}

ResultCache::ResultCache(ResultCacheOptions options, MetricsRegistry* metrics) : options_(options) {
  const std::size_t shards = std::bit_ceil(std::max<std::size_t>(options_.shards, 1));
  options_.shards = shards;
  shard_bytes_ = options_.max_bytes / shards;
  for (std::size_t i = 0; i < shards; ++i) shards_.push_back(std::make_unique<Shard>());
  if (metrics != nullptr) {
    hits_ = &metrics->counter("warden_cache_hits_total", "Result cache lookups answered from the cache");
    misses_ = &metrics->counter("warden_cache_misses_total", "Result cache lookups that had to compute");
    evictions_ = &metrics->counter("warden_cache_evictions_total",
                                   "Result cache entries dropped to stay within the bound");
    // Gauges moved by each change rather than callbacks into the cache: a callback must stay
    // callable for the registry's lifetime, which is longer than the cache's, and a second
    // cache on the registry could not register its own.
    Gauge& bytes =
        metrics->gauge("warden_cache_bytes", "Memory held by the result cache (keys, values, bookkeeping)");
    Gauge& entries = metrics->gauge("warden_cache_entries", "Entries in the result cache");
    for (const auto& s : shards_) {
      s->bytes_gauge = &bytes;
      s->entries_gauge = &entries;
    }
  }
}

ResultCache::~ResultCache() {
  clear();
}

ResultCache::Shard& ResultCache::shard_for(std::string_view key) const noexcept {
  // The top bits: the low ones also pick the bucket inside the shard's own table.
  const std::size_t h = KeyHash{}(key);
  const std::size_t index = (h >> 7 ^ h >> 29) & (shards_.size() - 1);
  return *shards_[index];
}

ResultCache::Value ResultCache::find(std::string_view key) {
  if (!enabled()) return nullptr;
  Shard& s = shard_for(key);
  Value found;
  {
    const std::lock_guard lock(s.mutex);
    const auto it = s.index.find(key);
    if (it != s.index.end()) {
      const auto entry = it->second;
      if (options_.ttl.count() > 0 && Clock::now() - entry->stored > options_.ttl) {
        s.erase(entry);
        ++s.expirations;
      } else {
        s.lru.splice(s.lru.begin(), s.lru, entry);
        found = entry->value;
      }
    }
    ++(found ? s.hits : s.misses);
  }
  if (Counter* c = found ? hits_ : misses_; c != nullptr) c->inc();
  return found;
}

void ResultCache::insert(std::string key, Value value) {
  if (!enabled() || !value) return;
  const std::size_t bytes = entry_bytes(key.size(), value->floats());
  if (bytes > shard_bytes_) return;
  Shard& s = shard_for(key);
  std::uint64_t evicted = 0;
  {
    const std::lock_guard lock(s.mutex);
    if (const auto it = s.index.find(std::string_view(key)); it != s.index.end()) s.erase(it->second);
    while (s.bytes + bytes > shard_bytes_ && !s.lru.empty()) {
      s.erase(std::prev(s.lru.end()));
      ++evicted;
    }
    s.lru.push_front(Entry{std::move(key), std::move(value), Clock::now(), bytes});
    s.index.emplace(std::string_view(s.lru.front().key), s.lru.begin());
    s.bytes += bytes;
    s.moved(static_cast<double>(bytes), 1);
    s.evictions += evicted;
  }
  if (evicted > 0 && evictions_ != nullptr) evictions_->inc(static_cast<double>(evicted));
}

void ResultCache::erase_prefix(std::string_view prefix) {
  for (const auto& s : shards_) {
    const std::lock_guard lock(s->mutex);
    for (auto it = s->lru.begin(); it != s->lru.end();) {
      const auto next = std::next(it);
      if (std::string_view(it->key).starts_with(prefix)) s->erase(it);
      it = next;
    }
  }
}

void ResultCache::clear() {
  for (const auto& s : shards_) {
    const std::lock_guard lock(s->mutex);
    s->erase_all();
  }
}

ResultCacheStats ResultCache::stats() const {
  ResultCacheStats out;
  for (const auto& s : shards_) {
    const std::lock_guard lock(s->mutex);
    out.hits += s->hits;
    out.misses += s->misses;
    out.evictions += s->evictions;
    out.expirations += s->expirations;
    out.bytes += s->bytes;
    out.entries += s->lru.size();
  }
  return out;
}

}  // namespace warden::serving
