# GoogleTest for every build, host and cross: compiled from Debian's googletest sources with this
# build's compiler and sanitizer flags (a prebuilt libgtest would be x86-only and uninstrumented).
include(GoogleTest)

set(KES_GTEST_SOURCE_DIR "/usr/src/googletest" CACHE PATH "GoogleTest sources (Debian package googletest)")
if(EXISTS ${KES_GTEST_SOURCE_DIR}/CMakeLists.txt)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory(${KES_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL SYSTEM)
  if(NOT TARGET GTest::gtest_main)
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
else()
  find_package(GTest REQUIRED)
endif()

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
  target_link_libraries(${target} PRIVATE kes_${module} ${T_LIBS} GTest::gtest_main)
  target_compile_definitions(${target} PRIVATE
    KES_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KES_TEST_TMPDIR="${CMAKE_BINARY_DIR}/test-tmp")
  kes_apply_warnings(${target})
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/test-tmp)
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
                       PROPERTIES TIMEOUT ${KES_TEST_TIMEOUT} LABELS ${module})
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
