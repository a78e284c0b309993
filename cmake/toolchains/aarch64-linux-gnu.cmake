# Cross-compiling Warden for AArch64 Linux from an x86-64 Debian machine, for
# scripts/check-neon --full: Debian's aarch64-linux-gnu-g++, the arm64 builds of our
# dependencies unpacked into WARDEN_ARM64_SYSROOT (not installed: the host's packages are
# left alone), and tests run through qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT WARDEN_ARM64_SYSROOT)
  set(WARDEN_ARM64_SYSROOT "$ENV{WARDEN_ARM64_SYSROOT}")
endif()
if(NOT WARDEN_ARM64_SYSROOT)
  message(FATAL_ERROR "Set WARDEN_ARM64_SYSROOT to the folder the arm64 -dev packages were unpacked into")
endif()
# try_compile projects need it too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES WARDEN_ARM64_SYSROOT)

set(CMAKE_FIND_ROOT_PATH ${WARDEN_ARM64_SYSROOT} /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR}
    "${WARDEN_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${WARDEN_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${WARDEN_ARM64_SYSROOT})

# ctest (and gtest_discover_tests) run the test executables under qemu.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu
    -E LD_LIBRARY_PATH=${WARDEN_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu)
