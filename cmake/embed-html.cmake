# Turns the HTML report templates into one C source of byte arrays, so the installed
# binary needs no data files (run in script mode: cmake -D... -P embed-html.cmake).
#
#   SRC_DIR  folder holding page.html, report.css, report.js
#   OUT_C    generated C file (defines the assets declared in src/report/html_assets.h)
#   OUT_CSP  generated text file holding the Content-Security-Policy alone (tests read it)
#
# The page's Content-Security-Policy allows exactly the embedded script and style by
# their SHA-256 (base64), so text that escaped into the page still could not run or
# load anything. CMake has SHA-256 but no base64: hex_to_base64 below does it.
cmake_minimum_required(VERSION 3.16)
foreach(var SRC_DIR OUT_C OUT_CSP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed-html.cmake: -D${var}=... is required")
  endif()
endforeach()

function(hex_to_base64 hex out_var)
  set(alphabet "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  string(LENGTH "${hex}" n)
  set(result "")
  set(i 0)
  while(i LESS n)
    math(EXPR left "${n} - ${i}")
    if(left GREATER 6)
      set(left 6)
    endif()
    string(SUBSTRING "${hex}" ${i} ${left} chunk)
    # Pad the last group to 3 bytes; emit one sextet per 6 bits actually present.
    string(SUBSTRING "${chunk}000000" 0 6 padded)
    math(EXPR value "0x${padded}")
    math(EXPR nchars "(${left} * 4 + 5) / 6")
    foreach(k RANGE 0 3)
      if(k LESS nchars)
        math(EXPR idx "(${value} >> (18 - 6 * ${k})) & 63")
        string(SUBSTRING "${alphabet}" ${idx} 1 c)
        string(APPEND result "${c}")
      else()
        string(APPEND result "=")
      endif()
    endforeach()
    math(EXPR i "${i} + 6")
  endwhile()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

function(csp_hash file out_var)
  file(SHA256 "${file}" hex)
  hex_to_base64("${hex}" b64)
  set(${out_var} "'sha256-${b64}'" PARENT_SCOPE)
endfunction()

# The renderer copies these files into the page verbatim, so a closing tag inside one
# would end its element early; refuse it here rather than ship a broken page.
function(refuse_text file pattern why)
  file(READ "${file}" text)
  string(TOLOWER "${text}" lower)
  string(FIND "${lower}" "${pattern}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${file}: contains '${pattern}' (${why})")
  endif()
endfunction()

function(c_array file name out_var)
  file(READ "${file}" hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR len "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
  # 16 bytes a line (CMake regexes have no {n} repeat, so spell the 16 out).
  string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
  string(REGEX REPLACE "(${line})" "\\1\n  " body "${body}")
  get_filename_component(base "${file}" NAME)
  set(${out_var}
    "static const unsigned char ${name}_bytes[] = {\n  ${body}0x00};\nconst rp_html_asset ${name} = {${name}_bytes, ${len}u, \"${base}\"};\n\n"
    PARENT_SCOPE)
endfunction()

set(page "${SRC_DIR}/page.html")
set(css "${SRC_DIR}/report.css")
set(js "${SRC_DIR}/report.js")
refuse_text("${css}" "</style" "would close the <style> element")
refuse_text("${js}" "</script" "would close the <script> element")
refuse_text("${js}" "<!--" "changes how the HTML parser reads a script")
file(READ "${page}" page_text)
foreach(slot csp version title css body js)
  string(REGEX MATCHALL "<!--triage:${slot}-->" hits "${page_text}")
  list(LENGTH hits nhits)
  if(NOT nhits EQUAL 1)
    message(FATAL_ERROR "${page}: slot <!--triage:${slot}--> appears ${nhits} times, want 1")
  endif()
endforeach()

csp_hash("${js}" js_hash)
csp_hash("${css}" css_hash)
set(csp "default-src 'none'; script-src ${js_hash}; style-src ${css_hash}; img-src data:; base-uri 'none'; form-action 'none'")

c_array("${page}" rp_html_page page_c)
c_array("${css}" rp_html_css css_c)
c_array("${js}" rp_html_js js_c)
set(out "/* Generated from src/report/html/ by cmake/embed-html.cmake: do not edit. */\n")
string(APPEND out "#include \"report/html_assets.h\"\n\n${page_c}${css_c}${js_c}")
string(APPEND out "const char rp_html_csp[] =\n  \"${csp}\";\n")

# Write only on change, so an unchanged template does not rebuild the report module.
set(old "")
if(EXISTS "${OUT_C}")
  file(READ "${OUT_C}" old)
endif()
if(NOT old STREQUAL out)
  file(WRITE "${OUT_C}" "${out}")
endif()
file(WRITE "${OUT_CSP}" "${csp}\n")
