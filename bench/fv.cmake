# fv benchmarks (issue 6, P8–P11): Kestrel's feature search beside FAISS 1.7.3 (Debian's libfaiss-dev,
# a static library that needs BLAS, LAPACK and OpenMP) in the same process; bench/bench_fv.cpp.
# FAISS is linked against OpenBLAS (libopenblas-pthread-dev, which carries LAPACK too), as users deploy
# it: with Debian's reference libblas its M:N search (one sgemm) is ~40x slower, a straw man. Only when
# OpenBLAS is missing does it fall back to whatever libblas is, and the bench then says so.
if(NOT TARGET kes_fv)
  return()
endif()
find_path(KES_FAISS_INCLUDE_DIR faiss/IndexFlat.h)
find_library(KES_FAISS_LIB faiss)
find_library(KES_BLAS_LIB NAMES openblas blas)
if(KES_BLAS_LIB MATCHES "openblas")
  set(KES_LAPACK_LIB ${KES_BLAS_LIB})
else()
  find_library(KES_LAPACK_LIB lapack)
  message(STATUS "Kestrel bench: FAISS gets ${KES_BLAS_LIB}, not OpenBLAS (install libopenblas-pthread-dev)")
endif()
find_package(OpenMP QUIET COMPONENTS CXX)
if(NOT (KES_FAISS_INCLUDE_DIR AND KES_FAISS_LIB AND KES_BLAS_LIB AND KES_LAPACK_LIB AND OpenMP_CXX_FOUND))
  message(STATUS "Kestrel bench: fv vs FAISS skipped (needs libfaiss-dev, libblas-dev, liblapack-dev, OpenMP)")
  return()
endif()
target_sources(kes-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_fv.cpp)
target_include_directories(kes-bench SYSTEM PRIVATE ${KES_FAISS_INCLUDE_DIR})
target_link_libraries(kes-bench PRIVATE ${KES_FAISS_LIB} ${KES_LAPACK_LIB} ${KES_BLAS_LIB} OpenMP::OpenMP_CXX)
