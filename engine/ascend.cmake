# ascend.cmake — the Ascend executor (src/ascend/): .om models on the NPU through AscendCL, which the sdk
# loads at run time (kes/ascend.hpp), so this part needs no CANN at build time and costs nothing on a
# machine without it (a .om load then fails saying why). Its tests run against the simulator and are
# registered by board/ascend-sim/CMakeLists.txt (they need the simulator's targets); the kes-convert
# --om tests need only the tool and are registered here.
list(APPEND engine_sources src/ascend/ascend_executor.cpp)

function(engine_ascend_after_module)
  target_compile_definitions(kes_engine_obj PRIVATE KES_ENGINE_HAVE_ASCEND=1)
  # dladdr/dlopen(RTLD_NOLOAD) for the optional AscendCL symbols the sdk's table does not carry.
  target_link_libraries(kes_engine_obj PUBLIC ${CMAKE_DL_LIBS})
  if(KES_BUILD_TESTS AND TARGET kes-convert)
    set(script ${CMAKE_CURRENT_SOURCE_DIR}/tests/kes_convert_om_check.sh)
    foreach(case atc-missing atc-arguments atc-writes-nothing)
      add_test(NAME KesConvert.Om.${case}
               COMMAND bash ${script} ${case} $<TARGET_FILE:kes-convert> ${CMAKE_BINARY_DIR}/test-tmp/kes-convert-om
                       ${CMAKE_CURRENT_SOURCE_DIR}/tests/models ${CMAKE_CROSSCOMPILING_EMULATOR})
      set_tests_properties(KesConvert.Om.${case} PROPERTIES LABELS "ascend;engine" TIMEOUT ${KES_TEST_TIMEOUT}
                           SKIP_RETURN_CODE 77)
    endforeach()
  endif()
endfunction()
