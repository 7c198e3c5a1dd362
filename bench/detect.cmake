# detect benchmarks (issue 14 §1): kestrel/detect.h's decode + NMS beside face-search's loop, a naive
# YOLOv8 decode loop, our scalar table and (when found) OpenCV's cv::dnn::NMSBoxes; bench/bench_detect.cpp.
if(NOT TARGET kes_engine)
  return()
endif()
target_sources(kes-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_detect.cpp)
# The scalar peer calls the engine's internal detect code with its scalar table (src/detect/detect.hpp).
target_include_directories(kes-bench PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
find_path(KES_OPENCV_DNN_INCLUDE_DIR opencv2/dnn/dnn.hpp PATH_SUFFIXES opencv4)
find_library(KES_OPENCV_DNN_LIB opencv_dnn)
find_library(KES_OPENCV_CORE_LIB opencv_core)
if(KES_OPENCV_DNN_INCLUDE_DIR AND KES_OPENCV_DNN_LIB AND KES_OPENCV_CORE_LIB)
  target_link_libraries(kes-bench PRIVATE ${KES_OPENCV_DNN_LIB} ${KES_OPENCV_CORE_LIB})
  target_include_directories(kes-bench SYSTEM PRIVATE ${KES_OPENCV_DNN_INCLUDE_DIR})
  target_compile_definitions(kes-bench PRIVATE KES_BENCH_DETECT_VS_OPENCV=1)
else()
  message(STATUS "Kestrel bench: detect vs OpenCV NMSBoxes skipped (needs libopencv-dev's opencv_dnn)")
endif()
