# dvpp VPC unit (issue 3 §3): resize bit-exact with OpenCV 4.6, crop-and-paste, letterbox, batch crop,
# colour conversion; JPEG encode from packed 4:2:2; the affine warp (kestrel/warp.h: on the CPU, the VPC has
# none). Included by dvpp/CMakeLists.txt.
list(APPEND dvpp_sources src/vpc_resize_avx2.cpp src/vpc_resize_neon.cpp src/vpc_paste.cpp src/vpc_color.cpp
     src/vpc_warp.cpp)
# The AVX2 kernel table is offered only when kes_cpu_has(KES_CPU_AVX2) and is empty on aarch64; the NEON
# table needs no flags on armv8-a and is empty on x86 (vpc_internal.hpp, docs/ARCHITECTURE.md).
kes_add_simd_source(src/vpc_resize_avx2.cpp X86 -mavx2 -mfma)
list(APPEND dvpp_test_sources tests/test_vpc_reference.cpp tests/test_vpc_paste.cpp tests/test_vpc_color.cpp
     tests/test_vpc_simd.cpp tests/test_warp.cpp)

# The comparison with real cv::resize / cv::cvtColor: host builds with OpenCV only (Debian's
# libopencv-dev ships headers and libraries without a CMake package for the imgproc part alone).
function(dvpp_vpc_after_module)
  # Not under ThreadSanitizer: Debian's OpenCV runs cv::resize on its own (uninstrumented) thread pool,
  # which TSan crashes in; the bit-exactness these tests prove is covered by the other builds.
  if(NOT KES_BUILD_TESTS OR CMAKE_CROSSCOMPILING OR KES_SANITIZE MATCHES "thread")
    return()
  endif()
  find_path(KES_OPENCV_INCLUDE_DIR opencv2/imgproc.hpp PATH_SUFFIXES opencv4)
  find_library(KES_OPENCV_CORE_LIB opencv_core)
  find_library(KES_OPENCV_IMGPROC_LIB opencv_imgproc)
  if(NOT (KES_OPENCV_INCLUDE_DIR AND KES_OPENCV_CORE_LIB AND KES_OPENCV_IMGPROC_LIB))
    kes_missing_test_dependency(VpcOpenCv "OpenCV (libopencv-dev)")
    return()
  endif()
  kes_add_test(dvpp SOURCES tests/test_vpc_opencv.cpp TARGET kes_dvpp_opencv_tests
               LIBS ${KES_OPENCV_IMGPROC_LIB} ${KES_OPENCV_CORE_LIB})
  target_include_directories(kes_dvpp_opencv_tests SYSTEM PRIVATE ${KES_OPENCV_INCLUDE_DIR})
  target_include_directories(kes_dvpp_opencv_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  # The same comparison on the scalar kernel table (every SIMD feature switched off, cpu.h): exact too.
  add_test(NAME VpcOpenCv.ScalarPathBitExact
           COMMAND kes_dvpp_opencv_tests --gtest_filter=VpcOpenCv.Resize*:VpcOpenCv.Nv12*)
  set_tests_properties(VpcOpenCv.ScalarPathBitExact PROPERTIES ENVIRONMENT KES_CPU_DISABLE=all LABELS dvpp
                       TIMEOUT ${KES_TEST_TIMEOUT})
endfunction()
