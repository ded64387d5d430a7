# Fails when a checked-in generated page differs from what its program prints now, and names
# the command that regenerates it: the page's first line says it
# (`<!-- ... regenerate with: COMMAND -->`), taken from the program's own output.
#   cmake -DPAGE=docs/reference/train-options.md -DCOMMAND="stoker;train;--help-markdown" -P check_generated_page.cmake
execute_process(COMMAND ${COMMAND} OUTPUT_VARIABLE generated ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "`${COMMAND}` failed (${status}): ${errors}")
endif()
string(REGEX MATCH "regenerate with: ([^\n]*) -->" found "${generated}")
set(regenerate "${CMAKE_MATCH_1}")
if(NOT EXISTS "${PAGE}")
  message(FATAL_ERROR "${PAGE} is missing; write it with (from the repository root):\n  ${regenerate}")
endif()
file(READ "${PAGE}" checked_in)
if(NOT generated STREQUAL checked_in)
  message(FATAL_ERROR "${PAGE} is not what the program prints now; regenerate it with (from the repository root):\n  ${regenerate}")
endif()
