# cmake -DBUILD_DIR=<build> -P tool_tests_check.cmake: fails when a test of the build is judged by
# ctest's PASS_REGULAR_EXPRESSION or WILL_FAIL (issue 15 §3). The first ignores the exit status (a tool
# that printed the expected line and then crashed at exit, or returned 1, passed); the second passes on
# any non-zero status, a crash included. Tool and sample tests use kes_add_tool_test (KestrelTesting.cmake),
# which checks the exit status together with the output.
file(GLOB_RECURSE files "${BUILD_DIR}/*CTestTestfile.cmake")
set(bad "")
foreach(f IN LISTS files)
  file(STRINGS "${f}" lines REGEX "^set_tests_properties\\(.*(PASS_REGULAR_EXPRESSION|WILL_FAIL)")
  foreach(line IN LISTS lines)
    # A line holding ';' (an ENVIRONMENT list) comes back in pieces; the first names the test.
    if(line MATCHES "^set_tests_properties\\(\\[=\\[([^]]*)\\]=\\]")
      string(APPEND bad "  ${CMAKE_MATCH_1} (${f})\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "these tests ignore the exit status (PASS_REGULAR_EXPRESSION or WILL_FAIL): "
                      "register them with kes_add_tool_test and its EXIT_CODE and OUTPUT\n${bad}")
endif()
message("every test checks its exit status (${BUILD_DIR})")
