# tracec_generate(): run protoc with protoc-gen-tracec over a set of .proto files.
#
#   tracec_generate(
#     OUT_DIR     <dir>            where NAME.tracec.h / NAME.tracec.c go
#     PROTO_ROOT  <dir>            the -I root the PROTOS are relative to
#     PROTOS      a/b.proto ...    files to generate, relative to PROTO_ROOT
#     [IMPORT_DIRS <dir> ...]      more -I roots for imports
#     [OPTIONS    <opt,opt>]       --tracec_opt value
#     [OUT_SRCS   <var>]           receives the generated .c files
#     [OUT_HDRS   <var>])          receives the generated .h files
function(tracec_generate)
  cmake_parse_arguments(G "" "OUT_DIR;PROTO_ROOT;OPTIONS;OUT_SRCS;OUT_HDRS" "PROTOS;IMPORT_DIRS" ${ARGN})
  set(srcs)
  set(hdrs)
  set(abs)
  foreach(p IN LISTS G_PROTOS)
    string(REGEX REPLACE "\\.proto$" "" stem "${p}")
    list(APPEND srcs "${G_OUT_DIR}/${stem}.tracec.c")
    list(APPEND hdrs "${G_OUT_DIR}/${stem}.tracec.h")
    list(APPEND abs "${G_PROTO_ROOT}/${p}")
  endforeach()
  set(incs "-I${G_PROTO_ROOT}")
  foreach(d IN LISTS G_IMPORT_DIRS)
    list(APPEND incs "-I${d}")
  endforeach()
  list(APPEND incs "-I${TRACEC_PROTOBUF_INCLUDE}")
  set(opt "")
  if(G_OPTIONS)
    set(opt "--tracec_opt=${G_OPTIONS}")
  endif()
  add_custom_command(
    OUTPUT ${srcs} ${hdrs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${G_OUT_DIR}
    COMMAND ${PROTOC_EXECUTABLE}
            --plugin=protoc-gen-tracec=$<TARGET_FILE:protoc-gen-tracec>
            --tracec_out=${G_OUT_DIR} ${opt} ${incs} ${G_PROTOS}
    WORKING_DIRECTORY ${G_PROTO_ROOT}
    DEPENDS protoc-gen-tracec ${abs}
    COMMENT "protoc-gen-tracec: ${G_PROTOS}"
    VERBATIM)
  if(G_OUT_SRCS)
    set(${G_OUT_SRCS} ${srcs} PARENT_SCOPE)
  endif()
  if(G_OUT_HDRS)
    set(${G_OUT_HDRS} ${hdrs} PARENT_SCOPE)
  endif()
endfunction()
