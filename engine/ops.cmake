# ops.cmake — the reference operator kernels (src/ops/, one file per family; see src/op.hpp) and
# their tests. Included by engine/CMakeLists.txt; appends to engine_sources / engine_test_sources.
list(APPEND engine_sources
  src/ops/op_util.cpp
  src/ops/elementwise.cpp
  src/ops/nn.cpp
  src/ops/shape.cpp
  src/ops/reduce.cpp
  src/ops/misc.cpp
  src/ops/rnn.cpp
  src/ops/sampling.cpp)

set(engine_ops_test_sources
  tests/test_ops_elementwise.cpp
  tests/test_ops_nn.cpp
  tests/test_ops_shape.cpp
  tests/test_ops_reduce.cpp
  tests/test_ops_misc.cpp
  tests/test_ops_inplace.cpp
  tests/test_ops_rnn.cpp
  tests/test_ops_sampling.cpp)

# The ops get their own test binary (kes_engine_ops_tests, label "engine"): every test runs each
# kernel under the allocation counter, so the binary links alloc_counter.cpp as well.
function(engine_ops_after_module)
  if(KES_BUILD_TESTS)
    kes_add_test(engine TARGET kes_engine_ops_tests
                 SOURCES ${engine_ops_test_sources} ${PROJECT_SOURCE_DIR}/tests/common/alloc_counter.cpp)
    target_include_directories(kes_engine_ops_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                            ${CMAKE_CURRENT_SOURCE_DIR}/tests
                                                            ${PROJECT_SOURCE_DIR}/tests/common)
  endif()
endfunction()
