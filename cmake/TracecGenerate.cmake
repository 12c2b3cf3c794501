# tracec_generate(): generate C trace writers from .proto files with protoc and
# protoc-gen-tracec, at build time.  The same file serves the source tree
# (include()d by the top-level CMakeLists.txt, also when tracec is a
# subproject) and the installed package (include()d by tracecConfig.cmake).
#
#   tracec_generate(
#     [TARGET <target>]          add the generated .c/.h to <target>, their folder to its
#                                include path (PUBLIC) and tracec::tracec to its links
#     PROTOS a.proto ...         the files to generate: relative to PROTO_ROOT, or absolute
#     [PROTO_ROOT <dir>]         the -I root the PROTOS are named from, which fixes the
#                                generated names (default: CMAKE_CURRENT_SOURCE_DIR; a
#                                file outside it uses its own folder)
#     [IMPORT_DIRS <dir> ...]    more -I roots for imports (tracec's bundled Perfetto
#                                schema and google/protobuf are always searched)
#     [OPTIONS <opt> ...]        --tracec_opt values, e.g. name_prefix=app_
#     [OUT_DIR <dir>]            default: ${CMAKE_CURRENT_BINARY_DIR}/tracec_gen
#     [OUT_SRCS <var>]           receives the generated .c files
#     [OUT_HDRS <var>])          receives the generated .h files
#
# a/b.proto generates OUT_DIR/a/b.tracec.h and OUT_DIR/a/b.tracec.c, once
# per build (for several targets, generate into a library and link it).  Each
# file is one protoc run with --dependency_out, so editing the .proto or any
# .proto it imports regenerates it, and so does a new protoc-gen-tracec
# binary; nothing else does.  Needs CMake 3.20 (DEPFILE with Makefiles).
#
# Before include()ing this file, set TRACEC_GENERATE_PLUGIN (the plugin's
# target) and TRACEC_GENERATE_SCHEMA_DIR (the bundled schema's .proto root);
# PROTOC_EXECUTABLE and TRACEC_PROTOBUF_INCLUDE are found if not set.
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "tracec_generate() needs CMake 3.20 or newer (this is ${CMAKE_VERSION})")
endif()
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)

if(NOT PROTOC_EXECUTABLE)
  find_program(PROTOC_EXECUTABLE protoc REQUIRED)
endif()
if(NOT TRACEC_PROTOBUF_INCLUDE)
  find_path(TRACEC_PROTOBUF_INCLUDE google/protobuf/descriptor.proto
    PATHS /usr/include /usr/local/include REQUIRED)
endif()
set_property(GLOBAL PROPERTY TRACEC_I_PLUGIN "${TRACEC_GENERATE_PLUGIN}")
set_property(GLOBAL PROPERTY TRACEC_I_SCHEMA_DIR "${TRACEC_GENERATE_SCHEMA_DIR}")
set_property(GLOBAL PROPERTY TRACEC_I_PROTOC "${PROTOC_EXECUTABLE}")
set_property(GLOBAL PROPERTY TRACEC_I_PROTOBUF_INCLUDE "${TRACEC_PROTOBUF_INCLUDE}")

function(tracec_generate)
  cmake_parse_arguments(G "" "TARGET;OUT_DIR;PROTO_ROOT;OUT_SRCS;OUT_HDRS"
    "PROTOS;IMPORT_DIRS;OPTIONS" ${ARGN})
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tracec_generate: unknown arguments: ${G_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT G_PROTOS)
    message(FATAL_ERROR "tracec_generate: PROTOS is required")
  endif()
  if(G_TARGET AND NOT TARGET ${G_TARGET})
    message(FATAL_ERROR "tracec_generate: TARGET ${G_TARGET} is not a target (create it first)")
  endif()
  get_property(plugin GLOBAL PROPERTY TRACEC_I_PLUGIN)
  get_property(schema_dir GLOBAL PROPERTY TRACEC_I_SCHEMA_DIR)
  if(NOT plugin OR NOT TARGET "${plugin}" OR NOT IS_DIRECTORY "${schema_dir}")
    message(FATAL_ERROR "tracec_generate: no protoc-gen-tracec target ('${plugin}') or schema folder "
      "('${schema_dir}'). Get tracec with find_package(tracec CONFIG), add_subdirectory() or "
      "FetchContent instead of including TracecGenerate.cmake by itself.")
  endif()
  get_property(protoc GLOBAL PROPERTY TRACEC_I_PROTOC)
  get_property(gpb_dir GLOBAL PROPERTY TRACEC_I_PROTOBUF_INCLUDE)
  if(NOT G_OUT_DIR)
    set(G_OUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/tracec_gen)
  endif()
  get_filename_component(out_dir "${G_OUT_DIR}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  if(NOT G_PROTO_ROOT)
    set(G_PROTO_ROOT ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  get_filename_component(root "${G_PROTO_ROOT}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set(imports)
  foreach(d IN LISTS G_IMPORT_DIRS)
    get_filename_component(d "${d}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND imports "${d}")
  endforeach()
  list(APPEND imports "${schema_dir}" "${gpb_dir}")
  set(opt)
  if(G_OPTIONS)
    string(REPLACE ";" "," joined "${G_OPTIONS}")
    set(opt "--tracec_opt=${joined}")
  endif()

  set(srcs)
  set(hdrs)
  foreach(p IN LISTS G_PROTOS)
    get_filename_component(abs "${p}" ABSOLUTE BASE_DIR "${root}")
    # A missing file is a configure error here, not make's "No rule to make target" later
    # (a file made by a custom command of this folder is let through).
    get_source_file_property(made "${abs}" GENERATED)
    if(NOT EXISTS "${abs}" AND NOT made)
      set(hint "")
      get_filename_component(from_here "${p}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      if(EXISTS "${from_here}" AND NOT IS_ABSOLUTE "${p}")
        file(RELATIVE_PATH hint "${root}" "${from_here}")
        set(hint ": did you mean ${hint}?")
      endif()
      message(FATAL_ERROR "tracec_generate: PROTOS file ${p} does not exist: looked for ${abs}. "
        "PROTOS are named relative to PROTO_ROOT (${root})${hint}")
    endif()
    file(RELATIVE_PATH rel "${root}" "${abs}")
    set(file_root "${root}")
    if(rel MATCHES "^\\.\\./")
      get_filename_component(file_root "${abs}" DIRECTORY)
      get_filename_component(rel "${abs}" NAME)
    endif()
    string(REGEX REPLACE "\\.proto$" "" stem "${rel}")
    set(c "${out_dir}/${stem}.tracec.c")
    set(h "${out_dir}/${stem}.tracec.h")
    get_property(owner GLOBAL PROPERTY "TRACEC_I_GENERATED:${c}")
    if(owner)
      message(FATAL_ERROR "tracec_generate: ${rel} is already generated into ${out_dir} (for "
        "${owner}). Generate it once, into a library (add_library(x STATIC) + tracec_generate(TARGET x "
        "...)), and link that library to every target that uses it.")
    endif()
    if(G_TARGET)
      set_property(GLOBAL PROPERTY "TRACEC_I_GENERATED:${c}" "target ${G_TARGET}")
    else()
      set_property(GLOBAL PROPERTY "TRACEC_I_GENERATED:${c}" "${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    string(MAKE_C_IDENTIFIER "${stem}" dep_name)
    set(depfile "${out_dir}/.deps/${dep_name}.d")
    set(incs "-I${file_root}")
    foreach(d IN LISTS imports)
      if(NOT d STREQUAL file_root)
        list(APPEND incs "-I${d}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES incs)
    add_custom_command(
      OUTPUT "${c}" "${h}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}/.deps"
      COMMAND ${protoc} --plugin=protoc-gen-tracec=$<TARGET_FILE:${plugin}>
              "--tracec_out=${out_dir}" ${opt} "--dependency_out=${depfile}" ${incs} "${abs}"
      DEPENDS "${abs}" ${plugin} $<TARGET_FILE:${plugin}>
      DEPFILE "${depfile}"
      COMMENT "protoc-gen-tracec: ${rel}"
      VERBATIM)
    list(APPEND srcs "${c}")
    list(APPEND hdrs "${h}")
  endforeach()

  if(G_TARGET)
    target_sources(${G_TARGET} PRIVATE ${srcs} ${hdrs})
    target_include_directories(${G_TARGET} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
    get_target_property(links ${G_TARGET} LINK_LIBRARIES)
    if(NOT "tracec::tracec" IN_LIST links)
      # Appended directly so that it mixes with either target_link_libraries() signature.
      set_property(TARGET ${G_TARGET} APPEND PROPERTY LINK_LIBRARIES tracec::tracec)
      get_target_property(type ${G_TARGET} TYPE)
      if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "SHARED_LIBRARY")
        set_property(TARGET ${G_TARGET} APPEND PROPERTY INTERFACE_LINK_LIBRARIES tracec::tracec)
      endif()
    endif()
  endif()
  if(G_OUT_SRCS)
    set(${G_OUT_SRCS} ${srcs} PARENT_SCOPE)
  endif()
  if(G_OUT_HDRS)
    set(${G_OUT_HDRS} ${hdrs} PARENT_SCOPE)
  endif()
endfunction()

cmake_policy(POP)
