# ops.cmake — the kernels: the reference set (src/kernels/ref/, one file per op family: the OpDefs and
# the oracle kernels, see src/op.hpp), the fast kernels (src/kernels/common/: op drivers over the
# per-ISA microkernel tables of src/kernels/{common,x86,arm}/, chosen by src/kernels/select.cpp) and
# their tests. Included by engine/CMakeLists.txt; appends to engine_sources / engine_test_sources.
list(APPEND engine_sources
  src/ops/geometry.cpp
  src/ops/dtype_codes.cpp
  src/ops/quant.cpp
  src/kernels/ref/op_util.cpp
  src/kernels/ref/elementwise.cpp
  src/kernels/ref/nn.cpp
  src/kernels/ref/shape.cpp
  src/kernels/ref/reduce.cpp
  src/kernels/ref/misc.cpp
  src/kernels/ref/resize.cpp
  src/kernels/ref/quant.cpp
  src/kernels/ref/rnn.cpp
  src/kernels/ref/sampling.cpp
  src/kernels/ref/nms.cpp
  src/kernels/ref/mediapipe_ops.cpp
  src/kernels/select.cpp
  src/kernels/common/microkernels.cpp
  src/kernels/common/activations.cpp
  src/kernels/common/concat.cpp
  src/kernels/common/conv_nhwc.cpp
  src/kernels/common/conv_transpose_nhwc.cpp
  src/kernels/common/gemm.cpp
  src/kernels/common/elementwise.cpp
  src/kernels/common/pool_nhwc.cpp
  src/kernels/common/qconv_nchw.cpp
  src/kernels/common/qelementwise.cpp
  src/kernels/common/qgemm.cpp
  src/kernels/common/qpool_nchw.cpp
  src/kernels/common/resize_nhwc.cpp
  src/kernels/common/transpose.cpp
  src/kernels/x86/microkernels_avx2.cpp
  src/kernels/x86/microkernels_avx512.cpp
  src/kernels/arm/microkernels_neon.cpp)
# The scalar table's fma is a·b + c: with contraction on (GCC's default where the baseline ISA has an
# FMA, as aarch64's), one tile instance would fuse it and another not, and tiles of different heights
# or forms (pointer list, strided) would give different bytes for the same rows.
set_source_files_properties(src/kernels/common/microkernels.cpp PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
# The quantized reference kernels round f32 results to integers (QLinearAdd's a_s·a + b_s·b): an FMA
# where the baseline ISA has one (aarch64) would round differently from x86 and from ONNX Runtime.
set_source_files_properties(src/kernels/ref/quant.cpp src/kernels/common/qelementwise.cpp PROPERTIES COMPILE_OPTIONS
                            -ffp-contract=off)
kes_add_simd_source(src/kernels/x86/microkernels_avx2.cpp X86 -mavx2 -mfma)
kes_add_simd_source(src/kernels/x86/microkernels_avx512.cpp X86 -mavx512f -mavx2 -mfma)

set(engine_ops_test_sources
  tests/test_ops_elementwise.cpp
  tests/test_ops_nn.cpp
  tests/test_ops_shape.cpp
  tests/test_ops_reduce.cpp
  tests/test_ops_misc.cpp
  tests/test_ops_inplace.cpp
  tests/test_ops_rnn.cpp
  tests/test_ops_sampling.cpp
  tests/test_ops_nms.cpp
  tests/test_ops_quant.cpp
  tests/test_kernels_fast.cpp
  tests/test_kernels_quant.cpp
  tests/test_fusion_dwpw.cpp)

# The ops get their own test binary (kes_engine_ops_tests, label "engine"): every test runs each
# kernel under the allocation counter, so the binary links alloc_counter.cpp as well.
function(engine_ops_after_module)
  if(KES_BUILD_TESTS)
    kes_add_test(engine TARGET kes_engine_ops_tests
                 SOURCES ${engine_ops_test_sources} ${PROJECT_SOURCE_DIR}/tests/common/alloc_counter.cpp
                 LIBS kes_convert)
    target_include_directories(kes_engine_ops_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
                                                            ${CMAKE_CURRENT_SOURCE_DIR}/tests
                                                            ${PROJECT_SOURCE_DIR}/tests/common)
  endif()
endfunction()
