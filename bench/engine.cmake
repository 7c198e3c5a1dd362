# Engine benchmarks beside the kes-bench suite: kes-bench-gemm (our indirect-GEMM convolution against
# OpenBLAS cblas_sgemm, the measurement behind bench/README.md's GEMM choice). The model-level P6
# comparison with ONNX Runtime and OpenCV DNN is bench/engine/run.sh (different processes).
if(NOT TARGET kes_engine)
  return()
endif()
find_path(KES_OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread openblas)
find_library(KES_OPENBLAS_LIB openblas)
if(NOT (KES_OPENBLAS_INCLUDE_DIR AND KES_OPENBLAS_LIB))
  message(STATUS "Kestrel bench: kes-bench-gemm skipped (needs libopenblas-dev)")
  return()
endif()
add_executable(kes-bench-gemm ${CMAKE_CURRENT_LIST_DIR}/engine/gemm_choice.cpp)
target_link_libraries(kes-bench-gemm PRIVATE kes_engine ${KES_OPENBLAS_LIB})
target_include_directories(kes-bench-gemm PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
target_include_directories(kes-bench-gemm SYSTEM PRIVATE ${KES_OPENBLAS_INCLUDE_DIR})
kes_apply_warnings(kes-bench-gemm)
if(KES_BUILD_TESTS)
  # REPEATS is a whole number >= 1: atoi made "abc" 0 repeats, a table of nonsense and exit 0.
  kes_add_tool_test(KesBenchGemm.NonNumericRepeatsIsAUsageError COMMAND kes-bench-gemm abc EXIT_CODE 2 LABELS bench
                    OUTPUT "REPEATS takes a whole number" NO_OUTPUT "microkernel table")
  kes_add_tool_test(KesBenchGemm.ZeroRepeatsIsAUsageError COMMAND kes-bench-gemm 0 EXIT_CODE 2 LABELS bench
                    OUTPUT "REPEATS takes a whole number")
  kes_add_tool_test(KesBenchGemm.HelpIsItsUsage COMMAND kes-bench-gemm --help LABELS bench
                    OUTPUT "usage: kes-bench-gemm .REPEATS." NO_OUTPUT "microkernel table")
endif()
