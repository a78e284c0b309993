#include "serving/system_resources.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/file.hpp"

namespace warden::serving {

namespace {

namespace fs = std::filesystem;

std::string_view trim(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

[[noreturn]] void malformed(std::string_view what, std::string_view contents) {
  throw Error(ErrorKind::InvalidInput,
              fmt::format("{}: cannot parse '{}'", what, trim(contents).substr(0, 80)));
}

std::optional<std::uint64_t> to_uint(std::string_view text) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// Splits "a b" (one run of blanks between) into its two fields, or nullopt.
std::optional<std::pair<std::string_view, std::string_view>> two_fields(std::string_view text) {
  text = trim(text);
  const std::size_t gap = text.find_first_of(" \t");
  if (gap == std::string_view::npos) return std::nullopt;
  const std::string_view second = trim(text.substr(gap));
  if (second.find_first_of(" \t\n") != std::string_view::npos) return std::nullopt;
  return std::pair{text.substr(0, gap), second};
}

std::string gib(std::uint64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

// The cgroup folders that limit a process in cgroup `path` under the mount `base`, from the
// leaf up: every ancestor's limit applies too (Kubernetes puts one on the pod and one on the
// container). When the process's path does not exist under the mount, as in a container
// that sees its own cgroup mounted as the root without a cgroup namespace, the walk simply
// reaches the mount root, which is then that container's cgroup.
std::vector<fs::path> cgroup_levels(const fs::path& base, std::string_view path) {
  std::vector<fs::path> levels;
  fs::path relative = fs::path(std::string(path)).relative_path();
  // A process outside its cgroup namespace's root sees "/../..": nothing above the mount is
  // visible, so the mount root is the nearest level there is.
  for (const auto& part : relative) {
    if (part == "..") return {base};
  }
  while (true) {
    levels.push_back(relative.empty() ? base : base / relative);
    if (relative.empty()) break;
    relative = relative.parent_path();
  }
  return levels;
}

// Runs a parser on the contents of a file, recording a failure in notes instead of
// throwing: detect() falls back rather than stopping the server on an odd cgroup file.
template <typename Parse>
auto parse_noted(std::vector<std::string>& notes, const fs::path& path, Parse parse)
    -> std::optional<decltype(parse(std::string_view()))> {
  const auto contents = try_read_file(path);
  if (!contents) return std::nullopt;
  try {
    return parse(*contents);
  } catch (const Error& e) {
    notes.push_back(fmt::format("ignored {}: {}", path.string(), e.what()));
    return std::nullopt;
  }
}

std::size_t affinity_cpu_count() {
  // The mask may be larger than the default cpu_set_t (more than 1024 CPUs): grow on EINVAL.
  for (std::size_t n = 1024; n <= (std::size_t{1} << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) break;
    const std::size_t size = CPU_ALLOC_SIZE(n);
    const int rc = sched_getaffinity(0, size, set);
    const int err = errno;
    const int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return static_cast<std::size_t>(count);
    if (err != EINVAL) break;
  }
  return std::max(1U, std::thread::hardware_concurrency());
}

std::string join_notes(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& note : notes) {
    out += out.empty() ? " (" : "; ";
    out += note;
  }
  if (!out.empty()) out += ')';
  return out;
}

}  // namespace

// ---- parsers ----

std::size_t CpuQuota::cpus() const noexcept {
  if (period_us == 0) return 1;
  const std::uint64_t whole = quota_us / period_us + (quota_us % period_us != 0 ? 1 : 0);  // no overflow
  return static_cast<std::size_t>(std::max<std::uint64_t>(1, whole));
}

std::optional<CpuQuota> parse_cpu_max(std::string_view contents) {
  const auto fields = two_fields(contents);
  if (!fields) malformed("cpu.max", contents);
  const auto period = to_uint(fields->second);
  if (!period || *period == 0) malformed("cpu.max", contents);
  if (fields->first == "max") return std::nullopt;
  const auto quota = to_uint(fields->first);
  if (!quota) malformed("cpu.max", contents);
  return CpuQuota{*quota, *period};
}

std::optional<CpuQuota> parse_cfs_quota(std::string_view quota_us, std::string_view period_us) {
  const std::string_view quota_text = trim(quota_us);
  if (quota_text == "-1") return std::nullopt;
  const auto quota = to_uint(quota_text);
  if (!quota) malformed("cpu.cfs_quota_us", quota_us);
  const auto period = to_uint(trim(period_us));
  if (!period || *period == 0) malformed("cpu.cfs_period_us", period_us);
  return CpuQuota{*quota, *period};
}

std::optional<std::uint64_t> parse_memory_limit(std::string_view contents) {
  const std::string_view text = trim(contents);
  if (text == "max") return std::nullopt;
  const auto bytes = to_uint(text);
  if (!bytes) malformed("memory limit", contents);
  // v1 writes "no limit" as LONG_MAX rounded down to a page (9223372036854771712); no
  // machine has 4 EiB, so anything from 2^62 up is that.
  if (*bytes >= (std::uint64_t{1} << 62)) return std::nullopt;
  return bytes;
}

std::uint64_t parse_uint(std::string_view contents) {
  const auto value = to_uint(trim(contents));
  if (!value) malformed("number", contents);
  return *value;
}

std::optional<std::uint64_t> parse_meminfo(std::string_view contents, std::string_view key) {
  std::size_t pos = 0;
  while (pos < contents.size()) {
    std::size_t end = contents.find('\n', pos);
    if (end == std::string_view::npos) end = contents.size();
    const std::string_view line = contents.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || line.substr(0, colon) != key) continue;
    std::string_view rest = trim(line.substr(colon + 1));
    std::uint64_t scale = 1;
    if (rest.ends_with(" kB")) {  // the kernel's "kB" is KiB
      scale = 1024;
      rest = trim(rest.substr(0, rest.size() - 3));
    }
    const auto value = to_uint(rest);
    if (!value) malformed("/proc/meminfo", line);
    return *value * scale;
  }
  return std::nullopt;
}

std::optional<std::string> CgroupMembership::v1_path(std::string_view controller) const {
  for (const auto& [name, path] : controllers) {
    if (name == controller) return path;
  }
  return std::nullopt;
}

CgroupMembership parse_proc_self_cgroup(std::string_view contents) {
  CgroupMembership membership;
  std::size_t pos = 0;
  while (pos < contents.size()) {
    std::size_t end = contents.find('\n', pos);
    if (end == std::string_view::npos) end = contents.size();
    const std::string_view line = trim(contents.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    // "id:controllers:path"; the path itself may hold ':'.
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) malformed("/proc/self/cgroup", line);
    const std::string_view id = line.substr(0, first);
    const std::string_view names = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));
    if (id == "0" && names.empty()) {
      membership.unified = path;
      continue;
    }
    std::size_t start = 0;
    while (start <= names.size()) {
      const std::size_t comma = std::min(names.find(',', start), names.size());
      if (comma > start)
        membership.controllers.emplace_back(std::string(names.substr(start, comma - start)), path);
      start = comma + 1;
    }
  }
  return membership;
}

// ---- detection ----

SystemResources detect(const fs::path& root) {
  return detect(root, affinity_cpu_count());
}

SystemResources detect(const fs::path& root, std::size_t affinity_cpus) {
  SystemResources result;
  const fs::path cgroup_fs = root / "sys/fs/cgroup";

  std::vector<std::string> cpu_notes;
  std::vector<std::string> memory_notes;
  CgroupMembership membership;
  if (const auto contents = try_read_file(root / "proc/self/cgroup")) {
    try {
      membership = parse_proc_self_cgroup(*contents);
    } catch (const Error& e) {
      cpu_notes.push_back(e.what());
      memory_notes.push_back(e.what());
    }
  } else {
    const std::string note = "no /proc/self/cgroup: looked at the cgroup root only";
    cpu_notes.push_back(note);
    memory_notes.push_back(note);
  }
  // Where a controller's files may be. Looking in both layouts whatever /proc/self/cgroup
  // says is harmless (the other layout's files are absent) and covers a missing or odd
  // /proc/self/cgroup and hybrid hosts, whose v2 hierarchy usually holds no controllers.
  const std::string v2_path = membership.unified.value_or("/");

  // CPUs: the affinity mask, lowered by any quota.
  result.cpus = std::max<std::size_t>(1, affinity_cpus);
  result.cpus_source = fmt::format("affinity mask ({} CPUs)", affinity_cpus);
  const auto lower_cpus = [&](const std::optional<CpuQuota>& quota, const std::string& what) {
    if (!quota || quota->cpus() >= result.cpus) return;
    result.cpus = quota->cpus();
    result.cpus_source =
        fmt::format("{} ({} / {} us = {:.2f} CPUs, rounded up)", what, quota->quota_us, quota->period_us,
                    static_cast<double>(quota->quota_us) / static_cast<double>(quota->period_us));
  };
  for (const fs::path& level : cgroup_levels(cgroup_fs, v2_path)) {
    const fs::path file = level / "cpu.max";
    const auto quota = parse_noted(cpu_notes, file, [](std::string_view c) { return parse_cpu_max(c); });
    if (quota) lower_cpus(*quota, "cgroup cpu.max " + file.string());
  }
  for (const std::string_view dir : {"cpu", "cpu,cpuacct"}) {
    if (!fs::is_directory(cgroup_fs / dir)) continue;
    for (const fs::path& level : cgroup_levels(cgroup_fs / dir, membership.v1_path("cpu").value_or("/"))) {
      const auto period = try_read_file(level / "cpu.cfs_period_us");
      if (!period) continue;
      const auto quota = parse_noted(cpu_notes, level / "cpu.cfs_quota_us",
                                     [&](std::string_view c) { return parse_cfs_quota(c, *period); });
      if (quota) lower_cpus(*quota, "cgroup v1 cpu.cfs_quota_us " + (level / "cpu.cfs_quota_us").string());
    }
    break;  // "cpu" is normally a link to "cpu,cpuacct": one hierarchy, read once
  }
  result.cpus_source += join_notes(cpu_notes);

  // Memory: MemAvailable, lowered by any cgroup's headroom (limit - usage).
  const fs::path meminfo = root / "proc/meminfo";
  if (const auto contents = try_read_file(meminfo)) {
    try {
      if (const auto available = parse_meminfo(*contents, "MemAvailable")) {
        result.available_memory_bytes = available;
        result.memory_source = "/proc/meminfo MemAvailable";
      } else if (const auto free = parse_meminfo(*contents, "MemFree")) {
        // Kernels before 3.14 have no MemAvailable; MemFree understates (no page cache).
        result.available_memory_bytes = free;
        result.memory_source = "/proc/meminfo MemFree (no MemAvailable)";
      } else {
        memory_notes.push_back("/proc/meminfo has neither MemAvailable nor MemFree");
      }
    } catch (const Error& e) {
      memory_notes.push_back(e.what());
    }
  } else {
    memory_notes.push_back("cannot read " + meminfo.string());
  }
  const auto lower_memory = [&](const fs::path& limit_file, const std::string& usage_name,
                                const std::string& what) {
    const auto limit =
        parse_noted(memory_notes, limit_file, [](std::string_view c) { return parse_memory_limit(c); });
    if (!limit || !*limit) return;
    const fs::path usage_file = limit_file.parent_path() / usage_name;
    const auto usage =
        parse_noted(memory_notes, usage_file, [](std::string_view c) { return parse_uint(c); });
    if (!usage)
      memory_notes.push_back(fmt::format("no {}: took the whole limit as free", usage_file.string()));
    const std::uint64_t used = usage.value_or(0);
    const std::uint64_t headroom = **limit > used ? **limit - used : 0;
    if (result.available_memory_bytes && headroom >= *result.available_memory_bytes) return;
    result.available_memory_bytes = headroom;
    result.memory_source =
        fmt::format("{} {} ({} limit - {} used)", what, limit_file.string(), gib(**limit), gib(used));
  };
  for (const fs::path& level : cgroup_levels(cgroup_fs, v2_path)) {
    lower_memory(level / "memory.max", "memory.current", "cgroup memory.max");
  }
  if (fs::is_directory(cgroup_fs / "memory")) {
    for (const fs::path& level :
         cgroup_levels(cgroup_fs / "memory", membership.v1_path("memory").value_or("/"))) {
      lower_memory(level / "memory.limit_in_bytes", "memory.usage_in_bytes",
                   "cgroup v1 memory.limit_in_bytes");
    }
  }
  if (!result.available_memory_bytes) result.memory_source = "unknown";
  result.memory_source += join_notes(memory_notes);
  return result;
}

std::string SystemResources::describe() const {
  return fmt::format("CPUs: {} from {}; memory available: {} from {}", cpus, cpus_source,
                     available_memory_bytes ? gib(*available_memory_bytes) : std::string("unknown"),
                     memory_source);
}

// ---- sizing ----

ServingSizing derive_sizing(const SystemResources& resources, std::uint64_t bytes_per_token) {
  if (bytes_per_token == 0)
    throw Error(ErrorKind::InvalidArgument, "derive_sizing: bytes_per_token must be > 0");
  const std::size_t cpus = std::max<std::size_t>(1, resources.cpus);
  ServingSizing sizing;

  // Inference is the work: the kernel pool gets every CPU (its calling thread works too).
  sizing.compute_threads = cpus;

  // An I/O thread parses a request and writes its response in tens of microseconds, next
  // to milliseconds of inference per input, so one keeps up with the engine on a small
  // machine; on a large one a few more keep slow clients and big JSON responses from
  // queueing behind each other. They mostly sleep, so they cost the compute pool little.
  sizing.io_threads = cpus <= 4 ? 1 : std::min<std::size_t>(4, cpus / 4);

  // Tokenizing costs about a microsecond per token, an encoder's forward pass hundreds of
  // microseconds to milliseconds of CPU per token: one worker outruns the whole engine.
  // More only shorten the wait of a request queued behind a large one, and every busy
  // worker takes a CPU from the compute pool, whose spinning threads suffer most from
  // oversubscription. So: 1, and one more per 8 CPUs beyond that, at most 4.
  sizing.tokenization_workers = std::clamp<std::size_t>(cpus / 8, 1, 4);

  // Tokens per forward pass: TEI's default unless memory is short. A quarter of the
  // available memory goes to activations; the rest is headroom for the mapped weights'
  // page cache (MemAvailable counts it as reclaimable), request bodies, responses, the next
  // batch being formed and allocator slack.
  sizing.max_batch_tokens = kDefaultMaxBatchTokens;
  if (!resources.available_memory_bytes) {
    sizing.max_batch_tokens_reason = "default (memory unknown)";
  } else {
    const std::uint64_t budget = *resources.available_memory_bytes / 4;
    const std::uint64_t fits = budget / bytes_per_token;
    if (fits >= kDefaultMaxBatchTokens) {
      sizing.max_batch_tokens_reason = "default";
    } else {
      // Below 512 not even one full-length BERT input fits: take 512 and let the operator
      // know from the reason; rounded down to 512s so the log reads plainly.
      sizing.max_batch_tokens = std::max<std::size_t>(kMinBatchTokens, fits / 512 * 512);
      sizing.max_batch_tokens_reason = fmt::format("memory: 1/4 of {} available / {} bytes per token{}",
                                                   gib(*resources.available_memory_bytes), bytes_per_token,
                                                   fits < kMinBatchTokens ? ", raised to the minimum" : "");
    }
  }

  // Inputs per forward pass. The token budget is what guards memory; this bounds the
  // per-batch fan-out (pooling, one response row per input) when a flood of tiny inputs
  // comes: 256 typical 32-token sentences already make half of a default batch.
  sizing.max_batch_requests = 256;

  // Admission: one batch computing, one being formed and two waiting keep the engine fed
  // across the gaps between batches; a client beyond that would wait more than about four
  // batch times and is better told 429 at once. Requests past that wait in a FIFO of as
  // many requests (each at least one input), beyond which they get 429 at once.
  sizing.max_concurrent_inputs = 4 * sizing.max_batch_requests;
  sizing.max_queue_requests = sizing.max_concurrent_inputs;
  return sizing;
}

std::string ServingSizing::describe() const {
  return fmt::format(
      "compute threads {}, I/O threads {}, tokenization workers {}, max batch tokens {} ({}), max batch "
      "requests {}, max concurrent inputs {}, max queue {} requests",
      compute_threads, io_threads, tokenization_workers, max_batch_tokens, max_batch_tokens_reason,
      max_batch_requests, max_concurrent_inputs, max_queue_requests);
}

}  // namespace warden::serving
