# The installed package: CMake config + version file with imported targets
# (tracec::tracec, tracec::schema, tracec::text (= tracec::grammar),
# tracec::decode, tracec::pb, tracec::protoc-gen-tracec, tracec::cli) and
# tracec_generate(); pkg-config
# files; man pages.  The same tracec:: names exist as ALIAS targets in the
# build tree, so a project that add_subdirectory()s or FetchContent()s tracec
# is written exactly like one that find_package()s it.
include(CMakePackageConfigHelpers)

set(TRACEC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tracec)
set(TRACEC_INSTALL_PROTODIR ${CMAKE_INSTALL_DATADIR}/tracec/protos)

set_target_properties(tracec_schema PROPERTIES EXPORT_NAME schema)
set_target_properties(tracec_grammar PROPERTIES EXPORT_NAME text)
set_target_properties(tracec_decode PROPERTIES EXPORT_NAME decode)
set_target_properties(tracec_pb PROPERTIES EXPORT_NAME pb)
set_target_properties(tracec_cli PROPERTIES EXPORT_NAME cli)
add_library(tracec::tracec ALIAS tracec)
add_library(tracec::schema ALIAS tracec_schema)
add_library(tracec::text ALIAS tracec_grammar)
add_library(tracec::grammar ALIAS tracec_grammar)
add_library(tracec::decode ALIAS tracec_decode)
add_library(tracec::pb ALIAS tracec_pb)
add_executable(tracec::protoc-gen-tracec ALIAS protoc-gen-tracec)
add_executable(tracec::cli ALIAS tracec_cli)

# Shared libraries: the installed programs find them from their own folder, unless that folder is one the
# loader searches anyway (a distribution's /usr/lib/<triplet>: no RUNPATH there, which packaging checks flag).
# CMAKE_SKIP_INSTALL_RPATH=ON leaves it out in any case.
if(BUILD_SHARED_LIBS)
  list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES "${CMAKE_INSTALL_FULL_LIBDIR}" _tracec_system_libdir)
  if(_tracec_system_libdir EQUAL -1)
    file(RELATIVE_PATH _tracec_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
    set_target_properties(tracec_cli protoc-gen-tracec PROPERTIES INSTALL_RPATH "$ORIGIN/${_tracec_bin_to_lib}")
  endif()
endif()

install(EXPORT tracec-targets NAMESPACE tracec:: DESTINATION ${TRACEC_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tracecConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tracecConfig.cmake
  INSTALL_DESTINATION ${TRACEC_INSTALL_CMAKEDIR}
  PATH_VARS TRACEC_INSTALL_PROTODIR)
# 0.x: a minor version may break the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tracecConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tracecConfig.cmake ${PROJECT_BINARY_DIR}/tracecConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/TracecGenerate.cmake
  DESTINATION ${TRACEC_INSTALL_CMAKEDIR})

# pkg-config: relocatable (prefix from the .pc file's own folder), one file per library.
file(RELATIVE_PATH TRACEC_PC_PREFIX_REL
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TRACEC_PC_PREFIX_REL "${TRACEC_PC_PREFIX_REL}")
foreach(pc tracec tracec_schema tracec_pb tracec_grammar tracec_text tracec_decode)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/pkgconfig/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/man/tracec.1 ${PROJECT_SOURCE_DIR}/man/protoc-gen-tracec.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
