# triage_libcurl_soname(<var>): the SONAME of the libcurl that pkg_check_modules(CURL ...)
# found (e.g. "libcurl.so.4"), read from its dynamic section with readelf or objdump.
# triage does not link libcurl; src/live/curl_lib.c dlopens this name when live capture
# runs (docs/live.md). Falls back to "libcurl.so.4" (the SONAME of every libcurl 7.16+
# build on Linux) when the library or the tools are not found.
# Sets out to the first group of regex in the output of `tool arg file` ("" when the tool
# is missing, fails or prints no match): readelf and objdump print SONAME differently.
function(triage_soname_from tool arg file regex out)
  set(found "")
  if(tool)
    execute_process(COMMAND ${tool} ${arg} ${file} OUTPUT_VARIABLE dyn ERROR_QUIET
                    RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND dyn MATCHES "${regex}")
      set(found ${CMAKE_MATCH_1})
    endif()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

function(triage_libcurl_soname out)
  set(soname "")
  set(lib "")
  # CURL_LINK_LIBRARIES: full paths of the libraries of `pkg-config --libs libcurl`.
  foreach(l ${CURL_LINK_LIBRARIES})
    get_filename_component(name ${l} NAME)
    if(name MATCHES "^libcurl.*\\.so")
      set(lib ${l})
      break()
    endif()
  endforeach()
  if(NOT lib)
    find_library(TRIAGE_LIBCURL_LIBRARY NAMES curl HINTS ${CURL_LIBRARY_DIRS})
    set(lib ${TRIAGE_LIBCURL_LIBRARY})
  endif()
  if(lib AND EXISTS ${lib})
    get_filename_component(real ${lib} REALPATH)
    if(NOT CMAKE_READELF)
      find_program(CMAKE_READELF readelf)
    endif()
    triage_soname_from("${CMAKE_READELF}" -d ${real} "\\(SONAME\\)[^\n]*\\[([^]\n]+)\\]" soname)
    if(NOT soname)
      triage_soname_from("${CMAKE_OBJDUMP}" -p ${real} "\n[ \t]*SONAME[ \t]+([^ \t\n]+)" soname)
    endif()
  endif()
  if(soname)
    message(STATUS "libcurl (live capture, loaded at run time): ${soname} from ${lib}")
  else()
    set(soname "libcurl.so.4")
    message(STATUS "libcurl (live capture, loaded at run time): SONAME not read from "
                   "'${lib}', using ${soname}")
  endif()
  set(${out} ${soname} PARENT_SCOPE)
endfunction()
