# triage_embed_html(TARGET): compile the HTML report templates (src/report/html/) into
# TARGET as byte arrays (cmake/embed-html.cmake), declared in src/report/html_assets.h.
# Also writes build/generated/report_html_csp.txt, which the HTML tests compare with a
# hash computed independently.
set(TRIAGE_HTML_TEMPLATE_DIR ${CMAKE_SOURCE_DIR}/src/report/html)
set(TRIAGE_HTML_ASSETS_C ${CMAKE_BINARY_DIR}/generated/report_html_assets.c)
set(TRIAGE_HTML_CSP_TXT ${CMAKE_BINARY_DIR}/generated/report_html_csp.txt)

function(triage_embed_html target)
  set(inputs ${TRIAGE_HTML_TEMPLATE_DIR}/page.html ${TRIAGE_HTML_TEMPLATE_DIR}/report.css
             ${TRIAGE_HTML_TEMPLATE_DIR}/report.js)
  add_custom_command(
    OUTPUT ${TRIAGE_HTML_ASSETS_C} ${TRIAGE_HTML_CSP_TXT}
    COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${TRIAGE_HTML_TEMPLATE_DIR}
            -DOUT_C=${TRIAGE_HTML_ASSETS_C} -DOUT_CSP=${TRIAGE_HTML_CSP_TXT}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed-html.cmake
    DEPENDS ${inputs} ${CMAKE_SOURCE_DIR}/cmake/embed-html.cmake
    COMMENT "Embedding the HTML report templates"
    VERBATIM)
  target_sources(${target} PRIVATE ${TRIAGE_HTML_ASSETS_C})
endfunction()
