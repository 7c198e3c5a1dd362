# dvpp still-image benchmarks (issue 3, P1–P3): Kestrel's JPEG decode and VPC resize beside raw
# TurboJPEG, libyuv and OpenCV (cv::imdecode, cv::resize) in the same process; bench/bench_dvpp.cpp.
if(NOT TARGET kes_dvpp)
  return()
endif()
find_path(KES_OPENCV_INCLUDE_DIR opencv2/imgproc.hpp PATH_SUFFIXES opencv4)
find_library(KES_OPENCV_CORE_LIB opencv_core)
find_library(KES_OPENCV_IMGPROC_LIB opencv_imgproc)
find_library(KES_OPENCV_IMGCODECS_LIB opencv_imgcodecs)
find_path(KES_LIBYUV_INCLUDE_DIR libyuv.h)
find_library(KES_LIBYUV_LIB yuv)
if(NOT (KES_OPENCV_INCLUDE_DIR AND KES_OPENCV_CORE_LIB AND KES_OPENCV_IMGPROC_LIB AND KES_OPENCV_IMGCODECS_LIB
        AND KES_LIBYUV_INCLUDE_DIR AND KES_LIBYUV_LIB))
  message(STATUS "Kestrel bench: dvpp vs TurboJPEG/OpenCV/libyuv skipped (needs libopencv-dev and libyuv-dev)")
  return()
endif()
target_sources(kes-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_dvpp.cpp)
target_include_directories(kes-bench SYSTEM PRIVATE ${KES_OPENCV_INCLUDE_DIR} ${KES_LIBYUV_INCLUDE_DIR})
target_link_libraries(kes-bench PRIVATE ${KES_OPENCV_IMGCODECS_LIB} ${KES_OPENCV_IMGPROC_LIB} ${KES_OPENCV_CORE_LIB}
                                        ${KES_LIBYUV_LIB} PkgConfig::TURBOJPEG)
