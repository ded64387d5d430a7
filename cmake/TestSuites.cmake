# stoker_add_test_suites(target LABELS l... TIMEOUT s ENVIRONMENT VAR=value...): one CTest test per
# GoogleTest suite of `target` (filter Suite.*), listed from the built program as
# gtest_discover_tests lists its tests. For the test programs that load libtorch: each process
# pays about 0.9 s to load it (Debian's libtorch brings ~280 libraries), so one process per suite
# instead of one per test saves about a minute of a CI run. The tests of a suite run in order in
# one process, and --output-on-failure shows which of them failed.
function(stoker_add_test_suites target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "LABELS;ENVIRONMENT")
  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  # Lists travel to the script joined by ',' (a ';' would split the command's arguments).
  string(REPLACE ";" "," labels "${arg_LABELS}")
  string(REPLACE ";" "," environment "${arg_ENVIRONMENT}")
  add_custom_command(
    TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D PROGRAM=$<TARGET_FILE:${target}> -D OUTPUT=${list_file} -D LABELS=${labels}
            -D TIMEOUT=${arg_TIMEOUT} -D ENVIRONMENT=${environment} -P ${PROJECT_SOURCE_DIR}/cmake/list_test_suites.cmake
    VERBATIM)
  # A build of some targets only (a sanitizer stage) has no list for the others: ctest then
  # runs what was built instead of stopping at the missing file.
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  file(WRITE ${include_file} "if(EXISTS \"${list_file}\")\n  include(\"${list_file}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
