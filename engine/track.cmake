# track.cmake — multi-object tracking (kestrel/track.h, issue 26 §1): a ByteTrack-style tracker (Kalman
# filter per track, two score rounds, optimal assignment with an optional appearance cost) in src/track/.
# Scalar C++ only: a frame's work is a few small matrices. Included by engine/CMakeLists.txt; appends to
# engine_sources / engine_test_sources and adds the update call's fuzz target.
list(APPEND engine_sources
  src/track/assignment.cpp
  src/track/tracker.cpp
  src/track/track_api.cpp)
list(APPEND engine_test_sources tests/test_track.cpp)

function(engine_track_after_module)
  if(KES_BUILD_TESTS)
    kes_add_fuzzer(engine track_update SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_track_update.cpp
                   SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds_track)
  endif()
endfunction()
