#include "serving/system_resources.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <string>

#include "core/error.hpp"
#include "model/temp_dir.hpp"

namespace warden::serving {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// ---- parsers ----

TEST(SystemResources, ParseCpuMax) {
  EXPECT_FALSE(parse_cpu_max("max 100000\n").has_value());
  const auto two = parse_cpu_max("200000 100000\n");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->quota_us, 200000U);
  EXPECT_EQ(two->period_us, 100000U);
  EXPECT_EQ(two->cpus(), 2U);
  EXPECT_EQ(parse_cpu_max("150000 100000")->cpus(), 2U);  // fractional: rounded up
  EXPECT_EQ(parse_cpu_max("50000 100000")->cpus(), 1U);   // half a CPU: still one thread
  EXPECT_EQ(parse_cpu_max("1000 100000")->cpus(), 1U);
  EXPECT_EQ(parse_cpu_max("400001 100000")->cpus(), 5U);
  EXPECT_EQ(parse_cpu_max("18446744073709551615 100000")->cpus(), 184467440737096U);  // no overflow
  EXPECT_THROW(parse_cpu_max(""), Error);
  EXPECT_THROW(parse_cpu_max("max"), Error);
  EXPECT_THROW(parse_cpu_max("100000 0"), Error);
  EXPECT_THROW(parse_cpu_max("lots 100000"), Error);
  EXPECT_THROW(parse_cpu_max("1 2 3"), Error);
}

TEST(SystemResources, ParseCfsQuota) {
  EXPECT_FALSE(parse_cfs_quota("-1\n", "100000\n").has_value());
  EXPECT_EQ(parse_cfs_quota("300000\n", "100000\n")->cpus(), 3U);
  EXPECT_EQ(parse_cfs_quota("250000", "100000")->cpus(), 3U);
  EXPECT_THROW(parse_cfs_quota("-2", "100000"), Error);
  EXPECT_THROW(parse_cfs_quota("100000", "0"), Error);
  try {
    parse_cfs_quota("x", "100000");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
  }
}

TEST(SystemResources, ParseMemoryLimit) {
  EXPECT_FALSE(parse_memory_limit("max\n").has_value());
  EXPECT_FALSE(parse_memory_limit("9223372036854771712\n").has_value());  // v1 "unlimited"
  EXPECT_EQ(parse_memory_limit("2147483648\n"), 2 * kGiB);
  EXPECT_THROW(parse_memory_limit("-1"), Error);
  EXPECT_THROW(parse_memory_limit(""), Error);
  EXPECT_EQ(parse_uint(" 12345\n"), 12345U);
  EXPECT_THROW(parse_uint("12k"), Error);
}

TEST(SystemResources, ParseMeminfo) {
  const std::string meminfo =
      "MemTotal:       24684100 kB\n"
      "MemFree:         1000000 kB\n"
      "MemAvailable:   21757824 kB\n"
      "HugePages_Total:       0\n";
  EXPECT_EQ(parse_meminfo(meminfo, "MemAvailable"), std::uint64_t{21757824} * 1024);
  EXPECT_EQ(parse_meminfo(meminfo, "MemTotal"), std::uint64_t{24684100} * 1024);
  EXPECT_EQ(parse_meminfo(meminfo, "HugePages_Total"), 0U);  // no unit: a plain number
  EXPECT_FALSE(parse_meminfo(meminfo, "Mem").has_value());   // whole keys only
  EXPECT_FALSE(parse_meminfo("", "MemAvailable").has_value());
  EXPECT_THROW(parse_meminfo("MemAvailable: lots kB\n", "MemAvailable"), Error);
}

TEST(SystemResources, ParseProcSelfCgroup) {
  const auto v2 = parse_proc_self_cgroup("0::/kubepods/pod1/container2\n");
  EXPECT_EQ(v2.unified, "/kubepods/pod1/container2");
  EXPECT_TRUE(v2.controllers.empty());

  const auto v1 = parse_proc_self_cgroup(
      "12:memory:/docker/abc\n"
      "4:cpu,cpuacct:/docker/abc\n"
      "1:name=systemd:/docker/abc\n"
      "0::/\n");
  EXPECT_EQ(v1.unified, "/");
  EXPECT_EQ(v1.v1_path("memory"), "/docker/abc");
  EXPECT_EQ(v1.v1_path("cpu"), "/docker/abc");
  EXPECT_EQ(v1.v1_path("cpuacct"), "/docker/abc");
  EXPECT_FALSE(v1.v1_path("pids").has_value());

  const auto colon = parse_proc_self_cgroup("0::/odd:path\n");
  EXPECT_EQ(colon.unified, "/odd:path");
  const auto none = parse_proc_self_cgroup("");
  EXPECT_FALSE(none.unified.has_value());
  EXPECT_THROW(parse_proc_self_cgroup("garbage\n"), Error);
}

// ---- detect() on fake trees ----

void write(const std::filesystem::path& path, const std::string& contents) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << contents;
}

const std::string kMeminfo8G = "MemTotal: 16777216 kB\nMemAvailable: 8388608 kB\n";  // 8 GiB available

TEST(SystemResources, DetectWithoutCgroupLimits) {
  testing::TempDir root;
  write(root / "proc/meminfo", kMeminfo8G);
  write(root / "proc/self/cgroup", "0::/\n");
  write(root / "sys/fs/cgroup/cgroup.controllers", "cpu memory\n");  // the root: no limit files
  const SystemResources r = detect(root.path(), 8);
  EXPECT_EQ(r.cpus, 8U);
  EXPECT_EQ(r.cpus_source, "affinity mask (8 CPUs)");
  EXPECT_EQ(r.available_memory_bytes, 8 * kGiB);
  EXPECT_EQ(r.memory_source, "/proc/meminfo MemAvailable");
}

TEST(SystemResources, DetectCgroupV2) {
  testing::TempDir root;
  write(root / "proc/meminfo", kMeminfo8G);
  write(root / "proc/self/cgroup", "0::/kubepods/pod/ctr\n");
  const auto cg = root / "sys/fs/cgroup";
  write(cg / "kubepods/pod/ctr/cpu.max", "max 100000\n");
  write(cg / "kubepods/pod/cpu.max", "250000 100000\n");  // the pod's limit binds the container
  write(cg / "kubepods/pod/ctr/memory.max", "2147483648\n");
  write(cg / "kubepods/pod/ctr/memory.current", "536870912\n");
  write(cg / "kubepods/pod/memory.max", "max\n");
  const SystemResources r = detect(root.path(), 16);
  EXPECT_EQ(r.cpus, 3U);
  EXPECT_NE(r.cpus_source.find("cgroup cpu.max"), std::string::npos) << r.cpus_source;
  EXPECT_NE(r.cpus_source.find("kubepods/pod/cpu.max"), std::string::npos) << r.cpus_source;
  EXPECT_EQ(r.available_memory_bytes, 2 * kGiB - 512 * kMiB);
  EXPECT_NE(r.memory_source.find("memory.max"), std::string::npos) << r.memory_source;
  EXPECT_NE(r.describe().find("CPUs: 3 from cgroup cpu.max"), std::string::npos) << r.describe();

  // The affinity mask wins when it is the smaller.
  EXPECT_EQ(detect(root.path(), 2).cpus, 2U);
  EXPECT_EQ(detect(root.path(), 2).cpus_source, "affinity mask (2 CPUs)");
}

TEST(SystemResources, DetectCgroupV2ContainerWithoutNamespace) {
  // /proc/self/cgroup names a host path, but the container sees its own cgroup as the root.
  testing::TempDir root;
  write(root / "proc/meminfo", kMeminfo8G);
  write(root / "proc/self/cgroup", "0::/system.slice/docker-abc.scope\n");
  write(root / "sys/fs/cgroup/cpu.max", "50000 100000\n");
  write(root / "sys/fs/cgroup/memory.max", "max\n");
  const SystemResources r = detect(root.path(), 4);
  EXPECT_EQ(r.cpus, 1U);
  EXPECT_EQ(r.available_memory_bytes, 8 * kGiB);
}

TEST(SystemResources, DetectOutsideTheCgroupNamespaceRoot) {
  // A process moved out of its namespace's root cgroup sees a path above the mount.
  testing::TempDir root;
  write(root / "proc/meminfo", kMeminfo8G);
  write(root / "proc/self/cgroup", "0::/../../system.slice/other.service\n");
  write(root / "sys/fs/cgroup/cpu.max", "200000 100000\n");
  write(root / "sys/cpu.max", "100000 100000\n");  // above the mount: must not be read
  const SystemResources r = detect(root.path(), 4);
  EXPECT_EQ(r.cpus, 2U);
  EXPECT_NE(r.cpus_source.find("sys/fs/cgroup/cpu.max"), std::string::npos) << r.cpus_source;
}

TEST(SystemResources, DetectCgroupV1) {
  testing::TempDir root;
  write(root / "proc/meminfo", kMeminfo8G);
  write(root / "proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n9:memory:/docker/abc\n0::/\n");
  const auto cg = root / "sys/fs/cgroup";
  write(cg / "cpu/docker/abc/cpu.cfs_quota_us", "150000\n");
  write(cg / "cpu/docker/abc/cpu.cfs_period_us", "100000\n");
  write(cg / "cpu/cpu.cfs_quota_us", "-1\n");
  write(cg / "cpu/cpu.cfs_period_us", "100000\n");
  write(cg / "memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
  write(cg / "memory/docker/abc/memory.usage_in_bytes", "268435456\n");
  write(cg / "memory/memory.limit_in_bytes", "9223372036854771712\n");
  write(cg / "memory/memory.usage_in_bytes", "4000000000\n");
  const SystemResources r = detect(root.path(), 8);
  EXPECT_EQ(r.cpus, 2U);
  EXPECT_NE(r.cpus_source.find("cpu.cfs_quota_us"), std::string::npos) << r.cpus_source;
  EXPECT_NE(r.cpus_source.find("1.50 CPUs"), std::string::npos) << r.cpus_source;
  EXPECT_EQ(r.available_memory_bytes, 768 * kMiB);
  EXPECT_NE(r.memory_source.find("memory.limit_in_bytes"), std::string::npos) << r.memory_source;
}

TEST(SystemResources, DetectCgroupV1Unlimited) {
  testing::TempDir root;
  write(root / "proc/meminfo", kMeminfo8G);
  write(root / "proc/self/cgroup", "4:cpu:/\n9:memory:/\n");
  const auto cg = root / "sys/fs/cgroup";
  write(cg / "cpu/cpu.cfs_quota_us", "-1\n");
  write(cg / "cpu/cpu.cfs_period_us", "100000\n");
  write(cg / "memory/memory.limit_in_bytes", "9223372036854771712\n");
  write(cg / "memory/memory.usage_in_bytes", "4000000000\n");
  const SystemResources r = detect(root.path(), 6);
  EXPECT_EQ(r.cpus, 6U);
  EXPECT_EQ(r.available_memory_bytes, 8 * kGiB);
  EXPECT_EQ(r.memory_source, "/proc/meminfo MemAvailable");
}

TEST(SystemResources, DetectOnAnEmptyTreeFallsBackAndSaysSo) {
  testing::TempDir root;
  const SystemResources r = detect(root.path(), 3);
  EXPECT_EQ(r.cpus, 3U);
  EXPECT_NE(r.cpus_source.find("no /proc/self/cgroup"), std::string::npos) << r.cpus_source;
  EXPECT_FALSE(r.available_memory_bytes.has_value());
  EXPECT_NE(r.memory_source.find("unknown"), std::string::npos) << r.memory_source;
  EXPECT_NE(r.memory_source.find("meminfo"), std::string::npos) << r.memory_source;
  EXPECT_EQ(detect(root.path(), 0).cpus, 1U);  // at least one
}

TEST(SystemResources, DetectNotesMalformedFilesWithoutThrowing) {
  testing::TempDir root;
  write(root / "proc/meminfo", "MemTotal: 1000 kB\nMemFree: 1024 kB\n");  // an old kernel
  write(root / "proc/self/cgroup", "0::/\n");
  write(root / "sys/fs/cgroup/cpu.max", "garbage\n");
  write(root / "sys/fs/cgroup/memory.max", "1048576\n");  // no memory.current beside it
  SystemResources r;
  ASSERT_NO_THROW(r = detect(root.path(), 4));
  EXPECT_EQ(r.cpus, 4U);
  EXPECT_NE(r.cpus_source.find("ignored"), std::string::npos) << r.cpus_source;
  EXPECT_NE(r.cpus_source.find("cpu.max"), std::string::npos) << r.cpus_source;
  EXPECT_EQ(r.available_memory_bytes, 1024U * 1024U);  // MemFree and the limit agree
  EXPECT_NE(r.memory_source.find("MemFree"), std::string::npos) << r.memory_source;
  write(root / "sys/fs/cgroup/memory.max", "524288\n");
  r = detect(root.path(), 4);
  EXPECT_EQ(r.available_memory_bytes, 512U * 1024U);
  EXPECT_NE(r.memory_source.find("memory.current"), std::string::npos) << r.memory_source;
}

TEST(SystemResources, DetectOnThisMachine) {
  const SystemResources r = detect();
  EXPECT_GE(r.cpus, 1U);
  EXPECT_FALSE(r.cpus_source.empty());
  ASSERT_TRUE(r.available_memory_bytes.has_value()) << r.memory_source;
  EXPECT_GT(*r.available_memory_bytes, 0U);
  std::cout << r.describe() << "\n";
}

// ---- sizing ----

SystemResources machine(std::size_t cpus, std::optional<std::uint64_t> memory = 64 * kGiB) {
  SystemResources r;
  r.cpus = cpus;
  r.available_memory_bytes = memory;
  return r;
}

TEST(ServingSizing, OneCpu) {
  const ServingSizing s = derive_sizing(machine(1));
  EXPECT_EQ(s.compute_threads, 1U);
  EXPECT_EQ(s.io_threads, 1U);
  EXPECT_EQ(s.tokenization_workers, 1U);
  EXPECT_EQ(s.max_batch_tokens, 16384U);
  EXPECT_EQ(s.max_batch_tokens_reason, "default");
  EXPECT_EQ(s.max_batch_requests, 256U);
  EXPECT_EQ(s.max_concurrent_inputs, 1024U);
  EXPECT_EQ(s.max_queue_requests, 1024U);
}

TEST(ServingSizing, TwoCpus) {
  const ServingSizing s = derive_sizing(machine(2));
  EXPECT_EQ(s.compute_threads, 2U);
  EXPECT_EQ(s.io_threads, 1U);
  EXPECT_EQ(s.tokenization_workers, 1U);
  EXPECT_EQ(s.max_batch_tokens, 16384U);
}

TEST(ServingSizing, SixteenAndMoreCpus) {
  const ServingSizing s = derive_sizing(machine(16));
  EXPECT_EQ(s.compute_threads, 16U);
  EXPECT_EQ(s.io_threads, 4U);
  EXPECT_EQ(s.tokenization_workers, 2U);
  EXPECT_EQ(derive_sizing(machine(8)).io_threads, 2U);
  EXPECT_EQ(derive_sizing(machine(5)).io_threads, 1U);
  EXPECT_EQ(derive_sizing(machine(128)).io_threads, 4U);
  EXPECT_EQ(derive_sizing(machine(128)).tokenization_workers, 4U);
  EXPECT_NE(s.describe().find("compute threads 16"), std::string::npos) << s.describe();
}

TEST(ServingSizing, LowMemoryShrinksTheBatch) {
  constexpr std::uint64_t per_token = activation_bytes_per_token(768);  // 36 KiB
  EXPECT_EQ(per_token, 768U * 4U * 12U);
  // 16384 tokens of 36 KiB are 576 MiB: needs 2.25 GiB available at a quarter.
  EXPECT_EQ(derive_sizing(machine(4, 3 * kGiB), per_token).max_batch_tokens, 16384U);
  // 1 GiB: 256 MiB / 36 KiB = 7281 tokens, rounded down to 512s.
  const ServingSizing low = derive_sizing(machine(4, kGiB), per_token);
  EXPECT_EQ(low.max_batch_tokens, 7168U);
  EXPECT_EQ(low.max_queue_requests, 1024U);
  EXPECT_NE(low.max_batch_tokens_reason.find("memory"), std::string::npos) << low.max_batch_tokens_reason;
  // 32 MiB: below the minimum, which holds.
  const ServingSizing tiny = derive_sizing(machine(4, 32 * kMiB), per_token);
  EXPECT_EQ(tiny.max_batch_tokens, 512U);
  EXPECT_NE(tiny.max_batch_tokens_reason.find("minimum"), std::string::npos) << tiny.max_batch_tokens_reason;
  // A bigger model needs more per token.
  EXPECT_LT(derive_sizing(machine(4, kGiB), activation_bytes_per_token(1024)).max_batch_tokens, 7168U);
  // Unknown memory keeps the default.
  const ServingSizing unknown = derive_sizing(machine(4, std::nullopt), per_token);
  EXPECT_EQ(unknown.max_batch_tokens, 16384U);
  EXPECT_EQ(unknown.max_batch_tokens_reason, "default (memory unknown)");
  EXPECT_THROW(derive_sizing(machine(4), 0), Error);
}

}  // namespace
}  // namespace warden::serving
