# cmake -DBUILD_DIR=<build> -DCTEST=<ctest> -DSOURCE_DIR=<source> -DREQUIRED=<ON|OFF> -P test_deps_check.cmake:
# a test whose dependency is missing, run by ctest as this build runs its own (the build's
# kes_test_deps.cmake included, cmake/missing_test_dependency.sh as the test), fails under CI=true, is
# skipped with KES_REQUIRE_TEST_DEPS=0, and elsewhere fails exactly when the build was configured with
# KES_REQUIRE_TEST_DEPS (issue 15 §4). A CI that ran ctest itself, not ./kestrel.sh test, passed with skips.
set(dir ${BUILD_DIR}/test-tmp/test-deps-check)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
file(WRITE ${dir}/CTestTestfile.cmake
     "include(\"${BUILD_DIR}/kes_test_deps.cmake\")\n"
     "add_test(Probe.DependencyMissing sh \"${SOURCE_DIR}/cmake/missing_test_dependency.sh\" Probe \"a probe\")\n"
     "set_tests_properties(Probe.DependencyMissing PROPERTIES SKIP_RETURN_CODE 77)\n")
set(bad "")
function(run_probe what expect_failure)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ARGN} ${CTEST} --test-dir ${dir}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expect_failure AND rc EQUAL 0)
    set(bad "${bad}${what}: the missing dependency passed\n${out}\n" PARENT_SCOPE)
  elseif(NOT expect_failure AND (NOT rc EQUAL 0 OR NOT out MATCHES "Skipped"))
    set(bad "${bad}${what}: expected a skip\n${out}\n" PARENT_SCOPE)
  endif()
endfunction()
run_probe("CI=true" TRUE --unset=KES_REQUIRE_TEST_DEPS CI=true)
run_probe("CI=true KES_REQUIRE_TEST_DEPS=0" FALSE KES_REQUIRE_TEST_DEPS=0 CI=true)
run_probe("KES_REQUIRE_TEST_DEPS=1" TRUE KES_REQUIRE_TEST_DEPS=1 --unset=CI)
if(REQUIRED)
  run_probe("no CI, a build configured with KES_REQUIRE_TEST_DEPS" TRUE --unset=KES_REQUIRE_TEST_DEPS --unset=CI)
else()
  run_probe("no CI" FALSE --unset=KES_REQUIRE_TEST_DEPS --unset=CI)
endif()
if(bad)
  message(FATAL_ERROR "${bad}")
endif()
message("a missing dependency fails under CI and with KES_REQUIRE_TEST_DEPS, and is a counted skip elsewhere")
