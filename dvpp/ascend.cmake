# dvpp ascend unit (issue 13): the DVPP hardware path over DVPP V1 (src/ascend/), loaded at run time
# through the sdk's AscendCL seam (kes/acl_dvpp.hpp), so it needs no CANN to build and costs nothing on
# a machine without it. Its tests run against the simulator: board/ascend-sim/CMakeLists.txt builds the
# sources listed here into kes_dvpp_ascend_tests (they need the simulator's targets).
list(APPEND dvpp_sources src/ascend/dvpp_ascend.cpp src/ascend/jpegd_ascend.cpp src/ascend/jpege_ascend.cpp
     src/ascend/vpc_ascend.cpp)
list(APPEND dvpp_sources src/ascend/vdec_ascend.cpp)
if(NOT DEFINED KES_WITH_FFMPEG OR KES_WITH_FFMPEG)  # the VDEC tests need the video calls
  set_property(GLOBAL APPEND PROPERTY KES_DVPP_ASCEND_TEST_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_vdec_ascend.cpp)
endif()
set_property(GLOBAL APPEND PROPERTY KES_DVPP_ASCEND_TEST_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_dvpp_ascend.cpp)
