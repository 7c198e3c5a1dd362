# Script mode (cmake -D... -P KestrelTesting.cmake -- <program> <args...>): the runner of
# kes_add_tool_test below. Runs the program, echoes its output, and fails unless the exit status is
# KES_TOOL_EXIT and the output (stdout and stderr together) matches every KES_TOOL_OUTPUT_<i> and no
# KES_TOOL_NO_OUTPUT_<i>.
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  set(cmd "")
  set(in_cmd FALSE)
  foreach(i RANGE 1 ${CMAKE_ARGC})
    if(i EQUAL CMAKE_ARGC)
      break()
    endif()
    if(in_cmd)
      list(APPEND cmd "${CMAKE_ARGV${i}}")
    elseif(CMAKE_ARGV${i} STREQUAL "--")
      set(in_cmd TRUE)
    endif()
  endforeach()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  set(bad "")
  if(NOT rc STREQUAL KES_TOOL_EXIT)
    string(APPEND bad "exit status ${rc}, expected ${KES_TOOL_EXIT}\n")
  endif()
  foreach(i RANGE 0 9)
    if(DEFINED KES_TOOL_OUTPUT_${i} AND NOT out MATCHES "${KES_TOOL_OUTPUT_${i}}")
      string(APPEND bad "output does not match: ${KES_TOOL_OUTPUT_${i}}\n")
    endif()
    if(DEFINED KES_TOOL_NO_OUTPUT_${i} AND out MATCHES "${KES_TOOL_NO_OUTPUT_${i}}")
      string(APPEND bad "output must not match: ${KES_TOOL_NO_OUTPUT_${i}}\n")
    endif()
  endforeach()
  if(bad)
    message(FATAL_ERROR "FAIL: ${bad}command: ${cmd}")
  endif()
  return()
endif()

# kes_test_code_options(<target>): test code is checked, not measured. In sanitizer builds it compiles at
# -O0 (a third to a fifth of the compile time at -O1/-O2, and the sanitizers see it all the same) while
# the libraries under test keep their optimisation, which is where the tests spend their time.
function(kes_test_code_options target)
  if(KES_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()

# GoogleTest for every build, host and cross: compiled from Debian's googletest sources with this
# build's compiler and sanitizer flags (a prebuilt libgtest would be x86-only and uninstrumented).
include(GoogleTest)

set(KES_GTEST_SOURCE_DIR "/usr/src/googletest" CACHE PATH "GoogleTest sources (Debian package googletest)")
if(EXISTS ${KES_GTEST_SOURCE_DIR}/CMakeLists.txt)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory(${KES_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL SYSTEM)
  kes_test_code_options(gtest)
  kes_test_code_options(gtest_main)
  if(NOT TARGET GTest::gtest_main)
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
else()
  find_package(GTest REQUIRED)
endif()

set(KES_TESTING_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

# The host half of the CPU matrix: a plain (unsanitised) x86-64 host build runs its test programs through
# tools/x86_cpu.sh, which runs them directly unless KES_X86_CPU names another CPU (qemu user mode;
# ./kestrel.sh test sets it). CMake applies the emulator to add_test(COMMAND <target>), gtest discovery
# and kes_add_tool_test, and the check scripts take it as their last arguments, as on a cross build.
# Sanitizer builds run natively (ASan and TSan do not run under qemu user mode).
if(NOT CMAKE_CROSSCOMPILING AND NOT KES_SANITIZE AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(CMAKE_CROSSCOMPILING_EMULATOR ${PROJECT_SOURCE_DIR}/tools/x86_cpu.sh)
endif()

# A test whose dependency is missing (ffmpeg, OpenCV, gst-rtsp-server, the ONNX node tests, the real
# models) is skipped on a developer's machine, but under CI (CI=true, as .ci/run's environment sets,
# or -DKES_REQUIRE_TEST_DEPS=ON) it fails, so the suite cannot pass by not running (issue 15 §4). The
# build adds a <Name>.DependencyMissing test where it leaves tests out; it, and the scripts and tests
# that skip at run time (exit 77, GTEST_SKIP), read KES_REQUIRE_TEST_DEPS from their environment, which
# ctest sets from the option and CI (kes_test_deps.cmake below).
if(DEFINED ENV{CI} AND NOT "$ENV{CI}" STREQUAL "" AND NOT "$ENV{CI}" STREQUAL "false" AND NOT "$ENV{CI}" STREQUAL "0")
  set(kes_require_test_deps_default ON)
else()
  set(kes_require_test_deps_default OFF)
endif()
option(KES_REQUIRE_TEST_DEPS "A missing test dependency fails the suite instead of skipping tests"
       ${kes_require_test_deps_default})

# ctest applies the rule itself, to every test it runs, so that the skips decided at run time (KES_TEST_SKIP,
# the check scripts' exit 77) follow it however ctest is started: a build configured with
# KES_REQUIRE_TEST_DEPS, or a ctest run under CI=true (a CI that calls ctest, not ./kestrel.sh test),
# exports KES_REQUIRE_TEST_DEPS=1 to the tests, unless the environment sets it already (0 keeps the skips).
# The build's top-level CTestTestfile.cmake includes this file.
set(KES_TEST_DEPS_ENV_FILE ${CMAKE_BINARY_DIR}/kes_test_deps.cmake)
if(KES_REQUIRE_TEST_DEPS)
  set(kes_required TRUE)
else()
  set(kes_required FALSE)
endif()
string(CONFIGURE [=[
# Written by KestrelTesting.cmake: the environment of every test ctest runs (KES_REQUIRE_TEST_DEPS, issue
# 15 §4; in a TSan build, TSAN_OPTIONS).
cmake_policy(VERSION 3.25)  # CTestTestfile.cmake sets none: if(TRUE) would name a variable
if(NOT DEFINED ENV{KES_REQUIRE_TEST_DEPS})
  if(@kes_required@ OR (DEFINED ENV{CI} AND NOT "$ENV{CI}" STREQUAL "" AND NOT "$ENV{CI}" STREQUAL "false"
                        AND NOT "$ENV{CI}" STREQUAL "0"))
    set(ENV{KES_REQUIRE_TEST_DEPS} 1)
  endif()
endif()
]=] kes_test_deps_env @ONLY)
# A TSan build's tests, however ctest is started, suppress reports inside FFmpeg's libraries and nowhere else
# (tests/common/tsan_ffmpeg.supp says why), unless the environment sets TSAN_OPTIONS itself.
if(KES_SANITIZE MATCHES "thread")
  string(APPEND kes_test_deps_env "if(NOT DEFINED ENV{TSAN_OPTIONS})
  set(ENV{TSAN_OPTIONS} \"halt_on_error=1:second_deadlock_stack=1:suppressions=${PROJECT_SOURCE_DIR}/tests/common/tsan_ffmpeg.supp\")
endif()
")
endif()
file(WRITE ${KES_TEST_DEPS_ENV_FILE} "${kes_test_deps_env}")
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY TEST_INCLUDE_FILES ${KES_TEST_DEPS_ENV_FILE})

# kes_missing_test_dependency(<name> <what>): tests called <name> were left out because <what> is missing.
# <name>.DependencyMissing stands for them: skipped (and counted) on a developer's machine, failed under CI.
function(kes_missing_test_dependency name what)
  message(STATUS "Kestrel tests: ${name} left out: ${what} is missing")
  if(KES_BUILD_TESTS)
    add_test(NAME ${name}.DependencyMissing
             COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/missing_test_dependency.sh ${name} ${what})
    set_tests_properties(${name}.DependencyMissing PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()

# Slow machines (qemu) need generous discovery and test time-outs; tests themselves stay small.
set(KES_TEST_TIMEOUT 600 CACHE STRING "Per-test timeout in seconds")

# kes_add_test(<module> SOURCES ... [LIBS ...] [TARGET name]): a GoogleTest binary (kes_<module>_tests
# unless TARGET names another, for a module part with its own binary), each TEST registered as its own
# ctest entry named <Suite>.<Name>, labelled <module>.
function(kes_add_test module)
  cmake_parse_arguments(T "" "TARGET" "SOURCES;LIBS" ${ARGN})
  set(target kes_${module}_tests)
  if(T_TARGET)
    set(target ${T_TARGET})
  endif()
  add_executable(${target} ${T_SOURCES})
  kes_test_code_options(${target})
  target_link_libraries(${target} PRIVATE kes_${module} ${T_LIBS} GTest::gtest_main)
  target_compile_definitions(${target} PRIVATE
    KES_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KES_TEST_TMPDIR="${CMAKE_BINARY_DIR}/test-tmp")
  kes_apply_warnings(${target})
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/test-tmp)
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
                       PROPERTIES TIMEOUT ${KES_TEST_TIMEOUT} LABELS ${module})
endfunction()

# kes_add_cpu_disable_test(<module> <name> TARGET <binary> FILTER <gtest filter> X86 <values...>
#                          ARM <values...>): the filtered tests of a test binary again, once per value of
# KES_CPU_DISABLE (kestrel/cpu.h) for this build's architecture, as <name>/KES_CPU_DISABLE=<value>. The
# whole path of a module then runs on each of its fallback tables; the tables themselves are compared
# with the scalar one in one process, through their *_available() list.
function(kes_add_cpu_disable_test module name)
  cmake_parse_arguments(T "" "TARGET;FILTER" "X86;ARM" ${ARGN})
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set(values ${T_X86})
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(values ${T_ARM})
  endif()
  foreach(v IN LISTS values)
    add_test(NAME ${name}/KES_CPU_DISABLE=${v} COMMAND ${T_TARGET} --gtest_filter=${T_FILTER})
    set_tests_properties(${name}/KES_CPU_DISABLE=${v} PROPERTIES ENVIRONMENT KES_CPU_DISABLE=${v} LABELS ${module}
                         TIMEOUT ${KES_TEST_TIMEOUT})
  endforeach()
endfunction()

# kes_add_fuzzer(<module> <name> SOURCE <file> [SEEDS <dir>] [LIBS ...]): a fuzz target defining
# LLVMFuzzerTestOneInput. Always built as kes_fuzz_<name> with a replay driver and registered as the
# test <name>.ReplaySeeds (runs the seed corpus, so CI proves the target builds and survives its seeds,
# natively, under sanitizers and on the emulated board). With -DKES_FUZZ=ON and clang it links
# libFuzzer instead: ./build/<preset>/.../kes_fuzz_<name> <corpus dir>.
option(KES_FUZZ "Link fuzz targets with libFuzzer (clang only)" OFF)
if(KES_FUZZ AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # Coverage instrumentation for the libraries too, or libFuzzer sees only the target's own file.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
function(kes_add_fuzzer module name)
  cmake_parse_arguments(F "" "SOURCE;SEEDS" "LIBS" ${ARGN})
  set(target kes_fuzz_${name})
  if(KES_FUZZ AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    add_executable(${target} ${F_SOURCE})
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(${target} ${F_SOURCE} ${PROJECT_SOURCE_DIR}/tools/fuzz/replay_main.cpp)
  endif()
  target_link_libraries(${target} PRIVATE kes_${module} ${F_LIBS})
  kes_apply_warnings(${target})
  if(F_SEEDS)
    add_test(NAME ${name}.ReplaySeeds COMMAND ${target} ${F_SEEDS})
  else()
    add_test(NAME ${name}.ReplaySeeds COMMAND ${target})
  endif()
  set_tests_properties(${name}.ReplaySeeds PROPERTIES LABELS "${module};fuzz" TIMEOUT ${KES_TEST_TIMEOUT})
endfunction()

# kes_add_tool_test(<name> COMMAND <target or program> [args...] [EXIT_CODE n] [OUTPUT regex...]
#                   [NO_OUTPUT regex...] [LABELS ...] [ENVIRONMENT k=v...] [FIXTURES_REQUIRED ...]
#                   [FIXTURES_SETUP ...] [TIMEOUT s])
# A program run as a test whose exit status (EXIT_CODE, default 0) is checked together with its
# output. ctest's PASS_REGULAR_EXPRESSION alone ignores the exit status: a tool that printed the
# expected line and then crashed at exit, or returned 1, passed. A target runs under the
# cross-compiling emulator like any add_test(COMMAND <target>).
function(kes_add_tool_test name)
  cmake_parse_arguments(T "" "EXIT_CODE;TIMEOUT" "COMMAND;OUTPUT;NO_OUTPUT;LABELS;ENVIRONMENT;FIXTURES_REQUIRED;FIXTURES_SETUP" ${ARGN})
  if(NOT DEFINED T_EXIT_CODE)
    set(T_EXIT_CODE 0)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${KES_TEST_TIMEOUT})
  endif()
  list(POP_FRONT T_COMMAND program)
  if(TARGET ${program})
    set(program $<TARGET_FILE:${program}>)
    if(CMAKE_CROSSCOMPILING_EMULATOR)
      set(program ${CMAKE_CROSSCOMPILING_EMULATOR} ${program})
    endif()
  endif()
  set(defs -DKES_TOOL_EXIT=${T_EXIT_CODE})
  set(i 0)
  foreach(re IN LISTS T_OUTPUT)
    list(APPEND defs "-DKES_TOOL_OUTPUT_${i}=${re}")
    math(EXPR i "${i} + 1")
  endforeach()
  set(i 0)
  foreach(re IN LISTS T_NO_OUTPUT)
    list(APPEND defs "-DKES_TOOL_NO_OUTPUT_${i}=${re}")
    math(EXPR i "${i} + 1")
  endforeach()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${KES_TESTING_SCRIPT} -- ${program} ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  foreach(prop LABELS ENVIRONMENT FIXTURES_REQUIRED FIXTURES_SETUP)
    if(T_${prop})
      set_tests_properties(${name} PROPERTIES ${prop} "${T_${prop}}")
    endif()
  endforeach()
endfunction()
