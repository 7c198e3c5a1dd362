# detect.cmake — detector post-processing (kestrel/detect.h, issue 14 §1): anchor grids, box decoding,
# NMS, the letterbox map back to source pixels, face alignment (issue 23), and the rotated regions and
# landmark decoding of two-stage pipelines (pose, hands), in src/detect/. The score
# threshold pass and the IoU loop have per-ISA tables (detect_kernels{,_avx2,_neon}.cpp, chosen at run
# time); the scalar table is the reference the tests hold the others to, bit for bit — so every detect
# source is compiled with -ffp-contract=off (GCC would otherwise fuse a·b + c in one table and not in
# another, as in fv_pq.cpp).
# Included by engine/CMakeLists.txt; appends to engine_sources / engine_test_sources.
set(engine_detect_sources
  src/detect/anchors.cpp
  src/detect/decode.cpp
  src/detect/nms.cpp
  src/detect/detect_api.cpp
  src/detect/align.cpp
  src/detect/landmarks.cpp
  src/detect/detect_kernels.cpp
  src/detect/detect_kernels_neon.cpp)
list(APPEND engine_sources ${engine_detect_sources} src/detect/detect_kernels_avx2.cpp)
set_source_files_properties(${engine_detect_sources} PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
kes_add_simd_source(src/detect/detect_kernels_avx2.cpp X86 -mavx2 -ffp-contract=off ARM -ffp-contract=off)
list(APPEND engine_test_sources tests/test_detect.cpp tests/test_landmarks.cpp)
