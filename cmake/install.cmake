# `cmake --install build --prefix P` (docs/python.md "Installing"): the CLI (and ptdsim-calibrate
# where built) in P/bin, the public headers in P/include/ptdsim, the libraries in P/lib, the shipped
# models, hardware and scenarios in P/share/ptdsim (found at run time from the installed binary:
# src/io/library.cpp), the Python package where built, and a CMake package:
#   find_package(ptdsim CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE ptdsim::ptdsim)   # include "ptdsim/api.hpp"
include(CMakePackageConfigHelpers)

set(_ptdsim_libraries ptdsim_core ptdsim_io ptdsim_analytic ptdsim_sim ptdsim_planner ptdsim_validation
    ptdsim_report ptdsim_calibrate ptdsim_api)
foreach(_lib IN LISTS _ptdsim_libraries)
  string(REPLACE "ptdsim_" "" _name ${_lib})
  set_target_properties(${_lib} PROPERTIES EXPORT_NAME ${_name})  # ptdsim::core, ptdsim::api, ...
endforeach()
# ptdsim::ptdsim: the public API (api.hpp) and every library below it
add_library(ptdsim_library INTERFACE)
target_link_libraries(ptdsim_library INTERFACE ptdsim_api)
set_target_properties(ptdsim_library PROPERTIES EXPORT_NAME ptdsim)

install(TARGETS ptdsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET ptdsim-calibrate)
  install(TARGETS ptdsim-calibrate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS ${_ptdsim_libraries} ptdsim_library EXPORT ptdsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ptdsim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/generated/ptdsim/core/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptdsim/core)
install(DIRECTORY models hardware scenarios DESTINATION ${CMAKE_INSTALL_DATADIR}/ptdsim)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ptdsim)
install(EXPORT ptdsimTargets NAMESPACE ptdsim:: DESTINATION ${_cmake_dir})
configure_package_config_file(cmake/ptdsimConfig.cmake.in ${PROJECT_BINARY_DIR}/ptdsimConfig.cmake
                              INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ptdsimConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ptdsimConfig.cmake ${PROJECT_BINARY_DIR}/ptdsimConfigVersion.cmake
        DESTINATION ${_cmake_dir})
