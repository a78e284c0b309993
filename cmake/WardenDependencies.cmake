# Every dependency comes from a Debian bookworm -dev package; scripts/setup installs them.
# docs/dependencies.md says why each one is here.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(simdjson REQUIRED)
find_package(CLI11 REQUIRED)
# libcurl: the hub layer downloads models by HuggingFace id.
find_package(CURL REQUIRED)
# libcrypto: the sha256 that checks every downloaded blob (OpenSSL comes with libcurl's TLS).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# Beast and Asio are header-only (Boost.System is too since 1.69), so the headers suffice.
find_package(Boost 1.74 REQUIRED)
pkg_check_modules(LIBB2 REQUIRED IMPORTED_TARGET libb2)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
# CLD2 (Compact Language Detector 2): the guard's language identification. No pkg-config file.
find_path(CLD2_INCLUDE_DIR cld2/public/compact_lang_det.h REQUIRED)
find_library(CLD2_LIBRARY cld2 REQUIRED)
add_library(Cld2::cld2 UNKNOWN IMPORTED)
set_target_properties(Cld2::cld2 PROPERTIES IMPORTED_LOCATION ${CLD2_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${CLD2_INCLUDE_DIR})
if(WARDEN_TESTS)
  find_package(GTest REQUIRED)
endif()
# gRPC and protobuf: the second transport (src/grpc/, TEI's tei.v1 protocol). protoc and
# grpc_cpp_plugin generate the messages and services from src/grpc/tei.proto at build time.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(WARDEN_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
