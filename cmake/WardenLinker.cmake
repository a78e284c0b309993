# Links with LLD where the compiler can use it (Debian's lld, which scripts/setup installs):
# GNU ld took 5.7 s to link one sanitizer-tree test executable that lld links in 1.9 s
# (warden_http_tests, ASan tree), and each CI run links some forty executables.
# -DWARDEN_LLD=OFF keeps the system linker.
option(WARDEN_LLD "Link with lld when it is installed" ON)
if(WARDEN_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" WARDEN_HAS_LLD)
  if(WARDEN_HAS_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
