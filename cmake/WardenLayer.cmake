# One static library per layer of src/ (see docs/architecture.md). A layer links only the
# layers below it, so the link graph written here is the architecture's dependency graph.
#
#   warden_layer(NAME <layer> [DEPS <targets>...])
#
# compiles src/<layer>/**/*.cpp into warden_<layer>. A layer that has no sources yet is an
# INTERFACE target so that the graph can be declared before the code arrives.
function(warden_layer)
  cmake_parse_arguments(L "" "NAME" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${L_NAME}/*.cpp)
  warden_isa_sources(sources)
  if(sources)
    add_library(warden_${L_NAME} STATIC ${sources})
    target_include_directories(warden_${L_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(warden_${L_NAME} PUBLIC ${L_DEPS} PRIVATE warden_warnings)
  else()
    add_library(warden_${L_NAME} INTERFACE)
    target_include_directories(warden_${L_NAME} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(warden_${L_NAME} INTERFACE ${L_DEPS})
  endif()
endfunction()

# Kernels for one instruction set live in files named *_avx2.cpp / *_avx512.cpp (x86-64)
# and *_neon.cpp (AArch64). Only the x86 files need flags: they are compiled with the wider
# ISA (everything else runs on any x86-64 CPU), and code dispatches to them at run time
# (src/core/cpu_features.hpp). NEON is part of the AArch64 baseline, so *_neon.cpp needs no
# flag. Each architecture leaves the other's files out of the build. (-Wno-[maybe-]
# uninitialized: GCC 12 warns inside its own AVX-512 intrinsic headers, which use
# _mm512_undefined_ps on purpose.)
function(warden_isa_sources var)
  set(list ${${var}})
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    list(FILTER list EXCLUDE REGEX "_neon\\.cpp$")
    foreach(src ${list})
      if(src MATCHES "_avx512\\.cpp$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
          "-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;-mavx2;-mfma;-mf16c;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>;-Wno-uninitialized")
      elseif(src MATCHES "_avx2\\.cpp$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
      endif()
    endforeach()
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64|ARM64")
    list(FILTER list EXCLUDE REGEX "_(avx2|avx512)\\.cpp$")
  else()
    list(FILTER list EXCLUDE REGEX "_(avx2|avx512|neon)\\.cpp$")
  endif()
  set(${var} ${list} PARENT_SCOPE)
endfunction()
