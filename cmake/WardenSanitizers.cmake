# WARDEN_SANITIZE applies to everything built in this tree, so that the library, the
# tests and the executable agree on instrumentation.
if(WARDEN_SANITIZE)
  add_compile_options(-fsanitize=${WARDEN_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${WARDEN_SANITIZE})
endif()
