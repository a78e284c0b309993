# WARDEN_SANITIZE applies to everything built in this tree, so that the library, the
# tests and the executable agree on instrumentation.
if(WARDEN_SANITIZE)
  add_compile_options(-fsanitize=${WARDEN_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${WARDEN_SANITIZE})
  if(WARDEN_SANITIZE MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns that TSan does not model std::atomic_thread_fence, which Asio's handler
    # allocator uses; TSan still checks everything else.
    add_compile_options(-Wno-tsan)
  endif()
endif()

# WARDEN_FUZZ (clang): coverage instrumentation for the libraries the fuzz targets drive.
if(WARDEN_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
