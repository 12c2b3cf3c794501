# tracec_embed_schema(OUT_DIR SYMBOL PROTOS...): the built-in schema (paths
# relative to protos/) compiled by protoc into OUT_DIR/builtin_schema.pb, a
# FileDescriptorSet with its imports, and embedded as the byte array SYMBOL
# (and SYMBOL_size) in OUT_DIR/builtin_schema.c, to add to a target's sources.
# The text tools load it as their built-in schema; protoc-gen-tracec reads
# the names Perfetto's schema uses from it (warn.c).
function(tracec_embed_schema out_dir symbol)
  set(_abs)
  foreach(p IN LISTS ARGN)
    list(APPEND _abs ${PROJECT_SOURCE_DIR}/protos/${p})
  endforeach()
  file(MAKE_DIRECTORY ${out_dir})
  add_custom_command(
    OUTPUT ${out_dir}/builtin_schema.pb
    COMMAND ${PROTOC_EXECUTABLE} -I${PROJECT_SOURCE_DIR}/protos -I${TRACEC_PROTOBUF_INCLUDE}
            --include_imports --descriptor_set_out=${out_dir}/builtin_schema.pb ${ARGN}
    DEPENDS ${_abs}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/protos
    COMMENT "protoc: built-in schema descriptor set (${symbol})"
    VERBATIM)
  add_custom_command(
    OUTPUT ${out_dir}/builtin_schema.c
    COMMAND ${CMAKE_COMMAND} -DINPUT=${out_dir}/builtin_schema.pb
            -DOUTPUT=${out_dir}/builtin_schema.c -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${out_dir}/builtin_schema.pb ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "embedding the built-in schema (${symbol})"
    VERBATIM)
endfunction()
