# dvpp OSD unit (issue 14 §1): boxes, lines and text drawn into NV12/NV21 images (kestrel/osd.h) with
# a built-in 8×16 bitmap font; segmentation masks blended over a frame (osd_mask.cpp). Included by
# dvpp/CMakeLists.txt.
list(APPEND dvpp_sources src/osd.cpp src/osd_font.cpp src/osd_mask.cpp)
list(APPEND dvpp_test_sources tests/test_osd.cpp tests/test_osd_mask.cpp)
