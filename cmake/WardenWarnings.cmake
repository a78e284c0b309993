# Warnings every target of ours compiles with. Third-party headers come in as SYSTEM
# includes, so these apply to our code only.
add_library(warden_warnings INTERFACE)
target_compile_options(warden_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough -Wmissing-declarations)
if(WARDEN_WERROR)
  target_compile_options(warden_warnings INTERFACE -Werror)
endif()
