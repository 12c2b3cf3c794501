# Libraries that export only the public API.
#
# A shared library (BUILD_SHARED_LIBS) gets the linker version script MAP
# (liburing's style: every exported name listed, all else local), its
# version and its SONAME (TRACEC_SOVERSION); nothing below applies to it.
#
# Hidden visibility does nothing for a static archive: every cross-file
# internal (tracec_i_*, the scanner's tracec_tp_*) would be a global symbol in
# users' programs.  tracec_export_public() rewrites an archive after it is
# built: the objects of each GROUP are linked into one relocatable object
# (ld -r) in which only public names stay global (objcopy
# --keep-global-symbols): names starting `tracec_` but not `tracec_i_` /
# `tracec_tp_`, names that are not ours (the protobuf-c bindings of
# tracec::pb), the names another member of the archive needs, and KEEP.
# PLAIN objects are archived as they are.  One group per module keeps the
# archive's granularity: a program that uses only the writer core does not
# pull the buffers in.
#
#   tracec_export_public(TARGET tracec
#     GROUPS core buffer te record
#     OBJECTS_core $<TARGET_OBJECTS:tracec_core_obj> ...
#     PLAIN $<TARGET_OBJECTS:tracec_protos_obj>
#     HEADERS runtime/core/include ...
#     KEEP tracec_i_something_another_library_uses
#     MAP ${CMAKE_CURRENT_SOURCE_DIR}/libtracec.map)
#
# Run as a script (cmake -P) it does the rewriting; see the bottom.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  set(_TRACEC_LOCALIZE_SCRIPT ${CMAKE_CURRENT_LIST_FILE})
  function(tracec_export_public)
    # GROUPS names the groups; then OBJECTS_<group> lists each one's objects.
    set(E_GROUPS)
    set(in_groups OFF)
    foreach(a IN LISTS ARGN)
      if(a STREQUAL "GROUPS")
        set(in_groups ON)
      elseif(a MATCHES "^(TARGET|MAP|PLAIN|KEEP|HEADERS|OBJECTS_.*)$")
        set(in_groups OFF)
      elseif(in_groups)
        list(APPEND E_GROUPS ${a})
      endif()
    endforeach()
    set(group_kw)
    foreach(g IN LISTS E_GROUPS)
      list(APPEND group_kw OBJECTS_${g})
    endforeach()
    cmake_parse_arguments(E "" "TARGET;MAP" "GROUPS;PLAIN;KEEP;HEADERS;${group_kw}" ${ARGN})
    get_target_property(type ${E_TARGET} TYPE)
    if(type STREQUAL "SHARED_LIBRARY")
      if(NOT E_MAP)
        message(FATAL_ERROR "tracec_export_public(${E_TARGET}): a shared library needs MAP")
      endif()
      set_target_properties(${E_TARGET} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${TRACEC_SOVERSION}
        LINK_DEPENDS ${E_MAP})
      target_link_options(${E_TARGET} PRIVATE "LINKER:--version-script=${E_MAP}")
      # Every name resolved when the library is linked (sanitizer runtimes are the program's).
      if(NOT TRACEC_SANITIZE)
        target_link_options(${E_TARGET} PRIVATE "LINKER:--no-undefined")
      endif()
      return()
    endif()
    set(defs)
    foreach(g IN LISTS E_GROUPS)
      list(APPEND defs "-DTRACEC_GROUP_${g}=$<JOIN:${E_OBJECTS_${g}},|>")
    endforeach()
    string(JOIN "|" groups ${E_GROUPS})
    string(JOIN "|" keep ${E_KEEP})
    add_custom_command(TARGET ${E_TARGET} POST_BUILD
      COMMAND ${CMAKE_COMMAND}
        -DTRACEC_ARCHIVE=$<TARGET_FILE:${E_TARGET}>
        -DTRACEC_WORK=${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${E_TARGET}.public
        -DTRACEC_AR=${CMAKE_AR} -DTRACEC_LD=${CMAKE_LINKER} -DTRACEC_NM=${CMAKE_NM}
        -DTRACEC_OBJCOPY=${CMAKE_OBJCOPY}
        "-DTRACEC_GROUPS=${groups}" "-DTRACEC_KEEP=${keep}"
        "-DTRACEC_PLAIN=$<JOIN:${E_PLAIN},|>"
        "-DTRACEC_HEADERS=$<JOIN:${E_HEADERS},|>"
        ${defs}
        -P ${_TRACEC_LOCALIZE_SCRIPT}
      COMMENT "Exporting only the public API of ${E_TARGET}"
      VERBATIM)
  endfunction()
  return()
endif()

# ---- script mode ----------------------------------------------------------
cmake_policy(VERSION 3.20)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "${cmd}: ${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

string(REPLACE "|" ";" groups "${TRACEC_GROUPS}")
string(REPLACE "|" ";" plain "${TRACEC_PLAIN}")
string(REPLACE "|" ";" keep "${TRACEC_KEEP}")
# Out-of-line internals that the public headers' inline functions call are
# reached from users' code: they stay global.
string(REPLACE "|" ";" header_dirs "${TRACEC_HEADERS}")
foreach(d IN LISTS header_dirs)
  file(GLOB_RECURSE hs ${d}/*.h)
  foreach(h IN LISTS hs)
    file(READ ${h} text)
    string(REGEX MATCHALL "tracec_i_[A-Za-z0-9_]+" ids "${text}")
    list(APPEND keep ${ids})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES keep)
file(REMOVE_RECURSE ${TRACEC_WORK})
file(MAKE_DIRECTORY ${TRACEC_WORK})

set(members)
foreach(g IN LISTS groups)
  string(REPLACE "|" ";" objs "${TRACEC_GROUP_${g}}")
  run(${TRACEC_LD} -r -o ${TRACEC_WORK}/${g}.o ${objs})
  list(APPEND members ${TRACEC_WORK}/${g}.o)
endforeach()

# nm runs once over every member (-A: each line "<file>: <symbol> <type> ...";
# one nm a member cost more CPU than the rest of this script).
# What the members need from one another stays global.
set(needed)
run(${TRACEC_NM} -u -P -A ${members} ${plain})
string(REGEX MATCHALL "[^\n]+" lines "${run_out}")
foreach(l IN LISTS lines)
  string(REGEX REPLACE "^.*: ([^ ]+) .*$" "\\1" s "${l}")
  list(APPEND needed ${s})
endforeach()
list(REMOVE_DUPLICATES needed)

run(${TRACEC_NM} -g --defined-only -P -A ${members})
string(REGEX MATCHALL "[^\n]+" lines "${run_out}")
foreach(g IN LISTS groups)
  set(globals_${g})
endforeach()
foreach(l IN LISTS lines)
  string(REGEX REPLACE "^.*/([^/]+)\\.o: ([^ ]+) .*$" "\\1;\\2" gs "${l}")
  list(GET gs 0 g)
  list(GET gs 1 s)
  if(s MATCHES "^tracec_(i|tp)_" AND NOT s IN_LIST needed AND NOT s IN_LIST keep)
    continue()
  endif()
  list(APPEND globals_${g} ${s})
endforeach()
foreach(g IN LISTS groups)
  set(o ${TRACEC_WORK}/${g}.o)
  string(JOIN "\n" text ${globals_${g}})
  file(WRITE ${TRACEC_WORK}/${g}.keep "${text}\n")
  run(${TRACEC_OBJCOPY} --keep-global-symbols=${TRACEC_WORK}/${g}.keep ${o})
endforeach()

file(REMOVE ${TRACEC_ARCHIVE})
run(${TRACEC_AR} qcs ${TRACEC_ARCHIVE} ${members} ${plain})
