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
