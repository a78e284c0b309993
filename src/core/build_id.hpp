#pragma once
// The executable's GNU build ID (the linker's hash of the program): changes whenever the
// code does, so files derived by one build's code (packed weight images) can be told
// apart from another's.

#include <string_view>

namespace warden {

// Hex digits of the running executable's NT_GNU_BUILD_ID note; empty when the binary was
// linked without one.
std::string_view executable_build_id() noexcept;

}  // namespace warden
