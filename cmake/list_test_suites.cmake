# Run by stoker_add_test_suites (cmake/TestSuites.cmake) once PROGRAM is built: writes to OUTPUT
# one add_test per GoogleTest suite of PROGRAM, with LABELS, TIMEOUT and ENVIRONMENT (lists
# joined by ',').
execute_process(COMMAND ${PROGRAM} --gtest_list_tests OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --gtest_list_tests failed (${status}): ${listing}")
endif()
string(REPLACE "," ";" labels "${LABELS}")
string(REPLACE "," ";" environment "${ENVIRONMENT}")
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(line IN LISTS lines)
  # A suite's line starts in the first column and ends with '.' (a typed suite's with a comment).
  if(line MATCHES "^([^ #][^ ]*)\\.")
    set(suite ${CMAKE_MATCH_1})
    string(APPEND script "add_test([==[${suite}]==] [==[${PROGRAM}]==] [==[--gtest_filter=${suite}.*]==])\n"
           "set_tests_properties([==[${suite}]==] PROPERTIES LABELS [==[${labels}]==] TIMEOUT ${TIMEOUT}"
           " ENVIRONMENT [==[${environment}]==])\n")
  endif()
endforeach()
file(WRITE ${OUTPUT} "${script}")
