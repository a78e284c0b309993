// Warden must never touch a GPU: the executable links no GPU runtime and names no GPU
// device node, so it cannot create a CUDA context or grab VRAM even by accident.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "cli/run_warden.hpp"
#include "core/file.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

// Names of GPU runtimes, lowercase, as they appear in library file names.
constexpr const char* kGpuLibraries[] = {"cuda", "cublas", "cudnn",  "nvrtc",  "nvidia", "libnv",
                                         "rocm", "amdhip", "libhip", "opencl", "vulkan", "libze_"};

TEST(ZeroGpu, TheExecutableLinksNoGpuRuntime) {
  const std::string deps = testing::capture_command("ldd " + testing::warden_binary() + " 2>&1");
  ASSERT_NE(deps.find("libc.so"), std::string::npos) << "ldd did not run: " << deps;
  std::string lower = deps;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* name : kGpuLibraries)
    EXPECT_EQ(lower.find(name), std::string::npos) << name << " in\n" << deps;
}

TEST(ZeroGpu, TheExecutableNamesNoGpuDeviceOrLibrary) {
  // Neither a device node nor a runtime that could be dlopen()ed appears in the binary.
  // Mapped, not read: a sanitizer build of the binary is far larger than read_file's bound.
  const MappedFile binary(testing::warden_binary());
  const std::string_view bytes(reinterpret_cast<const char*>(binary.bytes().data()), binary.size());
  for (const char* needle : {"/dev/nvidia", "/dev/dri", "/dev/kfd", "libcuda", "libcudart", "libOpenCL"}) {
    EXPECT_EQ(bytes.find(needle), std::string::npos) << needle;
  }
}

}  // namespace
}  // namespace warden
