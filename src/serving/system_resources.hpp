#pragma once
// What the machine gives this process, honouring containers, and the serving defaults
// derived from it.
//
// A container sees the host's CPUs and memory in sysconf and /proc/meminfo; its real share
// is in its cgroup (v2: cpu.max, memory.max; v1: cpu.cfs_quota_us, memory.limit_in_bytes).
// Sizing a thread pool or a batch from the host's numbers oversubscribes a 2-CPU pod on a
// 64-core node, or gets it OOM-killed. detect() takes the smallest of every limit that
// applies and says which one decided, for the start-up log.
//
// The parsers are pure functions of a file's contents so that each format is tested on its
// own; detect() reads the files under a root folder so that tests can give it a fake tree.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::serving {

// ---- parsers: each throws warden::Error (InvalidInput) on contents it cannot read ----

// A CFS bandwidth limit: quota microseconds of CPU time per period.
struct CpuQuota {
  std::uint64_t quota_us = 0;
  std::uint64_t period_us = 0;
  // Whole CPUs the quota allows: rounded up (a 1.5-CPU quota can keep 2 threads busy 75%
  // of the time, and fewer threads could not use it all), at least 1.
  [[nodiscard]] std::size_t cpus() const noexcept;
};

// cgroup v2 cpu.max: "<quota> <period>", or "max <period>" (no limit: nullopt).
std::optional<CpuQuota> parse_cpu_max(std::string_view contents);
// cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us; a quota of -1 is no limit (nullopt).
std::optional<CpuQuota> parse_cfs_quota(std::string_view quota_us, std::string_view period_us);
// A memory limit in bytes: v2 memory.max ("max" is no limit) or v1 memory.limit_in_bytes
// (no limit reads as a huge number, about 2^63 rounded to a page: anything from 2^62 up).
std::optional<std::uint64_t> parse_memory_limit(std::string_view contents);
// A plain unsigned number (memory.current, memory.usage_in_bytes).
std::uint64_t parse_uint(std::string_view contents);
// /proc/meminfo: the value of key ("MemAvailable") in bytes, nullopt when absent.
std::optional<std::uint64_t> parse_meminfo(std::string_view contents, std::string_view key);

// /proc/self/cgroup: "0::/path" for v2 (unified), "N:ctrl1,ctrl2:/path" for v1.
struct CgroupMembership {
  std::optional<std::string> unified;                            // the v2 path
  std::vector<std::pair<std::string, std::string>> controllers;  // v1: controller -> path
  // The v1 path of one controller ("cpu", "memory"), nullopt when not mounted.
  [[nodiscard]] std::optional<std::string> v1_path(std::string_view controller) const;
};
CgroupMembership parse_proc_self_cgroup(std::string_view contents);

// ---- detection ----

struct SystemResources {
  std::size_t cpus = 1;  // compute threads this process may keep busy, at least 1
  std::string cpus_source;
  // Memory this process may still allocate, nullopt when nothing could be read.
  std::optional<std::uint64_t> available_memory_bytes;
  std::string memory_source;

  // One line for the start-up log: the values and where each came from.
  [[nodiscard]] std::string describe() const;
};

// Reads the affinity mask of this process, then /proc and /sys/fs/cgroup under root: the
// CPUs are the smaller of the affinity count and every cgroup CPU quota on the way from
// this process's cgroup up to the root; the memory is the smaller of MemAvailable and every
// cgroup limit minus that cgroup's usage. Never throws for a missing or unreadable file:
// the value falls back and its source says why.
SystemResources detect(const std::filesystem::path& root = "/");
// The same with the affinity count given, for a fake tree independent of the test machine.
SystemResources detect(const std::filesystem::path& root, std::size_t affinity_cpus);

// ---- sizing ----

// Activation memory per token of a batch for an encoder of this hidden size: about a dozen
// float32 buffers of hidden width (hidden states, Q/K/V, attention output, the FFN's 4x
// intermediate counted as four, residuals and norms) live at once during a layer.
constexpr std::uint64_t activation_bytes_per_token(std::size_t hidden_size,
                                                   std::size_t buffers = 12) noexcept {
  return static_cast<std::uint64_t>(hidden_size) * 4U * buffers;
}

// The defaults a server starts with; every value is meant to be overridable by a flag.
struct ServingSizing {
  std::size_t compute_threads = 1;           // the engine's kernel thread pool
  std::size_t io_threads = 1;                // HTTP (Asio) threads
  std::size_t tokenization_workers = 1;      // threads tokenizing requests ahead of the batcher
  std::size_t max_batch_tokens = 16384;      // tokens in one forward pass
  std::size_t max_batch_requests = 256;      // inputs in one forward pass
  std::size_t max_concurrent_inputs = 1024;  // inputs admitted (tokenizing, queued, computing)
  std::size_t max_queue_requests = 1024;     // requests waiting for admission
  std::string max_batch_tokens_reason;       // "default" or the memory arithmetic

  [[nodiscard]] std::string describe() const;
};

inline constexpr std::size_t kDefaultMaxBatchTokens = 16384;  // TEI's --max-batch-tokens default
inline constexpr std::size_t kMinBatchTokens = 512;           // one full BERT-length input

// Derives the defaults from the resources (see the comments in the .cpp for each choice).
// bytes_per_token is the model's activation estimate (activation_bytes_per_token()); it
// must be > 0 (throws warden::Error, InvalidArgument).
ServingSizing derive_sizing(const SystemResources& resources,
                            std::uint64_t bytes_per_token = activation_bytes_per_token(768));

}  // namespace warden::serving
