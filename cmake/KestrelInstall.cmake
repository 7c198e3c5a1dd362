# cmake --install: include/, lib/ (per-module archives and libkestrel.a), lib/cmake/Kestrel/ for
# find_package(Kestrel), lib/pkgconfig/kestrel.pc for pkg-config.
include(CMakePackageConfigHelpers)

get_property(kes_targets GLOBAL PROPERTY KES_MODULE_TARGETS)
install(TARGETS ${kes_targets} kestrel EXPORT KestrelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${KES_GENERATED_INCLUDE_DIR}/kestrel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(KES_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kestrel)
install(EXPORT KestrelTargets NAMESPACE Kestrel:: DESTINATION ${KES_CMAKE_DIR})
# Outside libraries the modules link as imported targets, found again in the app's build.
get_property(kes_config_deps GLOBAL PROPERTY KES_CONFIG_DEPENDENCIES)
set(KES_CONFIG_DEPENDENCIES "")
if(kes_config_deps)
  set(KES_CONFIG_DEPENDENCIES "find_dependency(PkgConfig)")
  foreach(dep IN LISTS kes_config_deps)
    string(APPEND KES_CONFIG_DEPENDENCIES "\n${dep}")
  endforeach()
endif()
configure_package_config_file(cmake/KestrelConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/KestrelConfig.cmake INSTALL_DESTINATION ${KES_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KestrelConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: minors may break the API
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KestrelConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/KestrelConfigVersion.cmake DESTINATION ${KES_CMAKE_DIR})

# pkg-config: libkestrel.a is C++ inside, so a C app linking it needs libstdc++ too.
get_property(kes_ext_libs GLOBAL PROPERTY KES_EXTERNAL_LIBS)
set(KES_PC_LIBS_PRIVATE "")
foreach(lib IN LISTS kes_ext_libs)
  if(NOT TARGET ${lib})
    string(APPEND KES_PC_LIBS_PRIVATE " -l${lib}")
  endif()
endforeach()
get_property(KES_PC_REQUIRES GLOBAL PROPERTY KES_PKGCONFIG_REQUIRES)
if(KES_PC_REQUIRES)
  list(JOIN KES_PC_REQUIRES " " KES_PC_REQUIRES)
endif()
file(RELATIVE_PATH KES_PC_PREFIX_FROM_PCDIR "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" KES_PC_PREFIX_FROM_PCDIR "${KES_PC_PREFIX_FROM_PCDIR}")
configure_file(cmake/kestrel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/kestrel.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kestrel.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
