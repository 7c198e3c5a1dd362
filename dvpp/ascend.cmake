# dvpp ascend unit (issue 13): the DVPP hardware path over DVPP V1 (src/ascend/), loaded at run time
# through the sdk's AscendCL seam (kes/acl_dvpp.hpp), so it needs no CANN to build and costs nothing on
# a machine without it. Its tests run against the simulator and are registered by
# board/ascend-sim/CMakeLists.txt (they need the simulator's targets).
list(APPEND dvpp_sources src/ascend/dvpp_ascend.cpp src/ascend/jpegd_ascend.cpp src/ascend/jpege_ascend.cpp
     src/ascend/vpc_ascend.cpp)
