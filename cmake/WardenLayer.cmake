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
