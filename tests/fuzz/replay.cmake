# Included by tests/CMakeLists.txt: builds every fuzz harness as a plain program (with
# replay_main.c instead of libFuzzer, so no clang is needed) and registers one ctest per
# harness that runs its seed corpus and its regression cases. Under TRIAGE_SANITIZE the
# replays run with ASan+UBSan like the rest of the suite.
set(TRIAGE_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

set(TRIAGE_FUZZ_HARNESSES fuzz_rule_pack fuzz_live_reply fuzz_trace_reader fuzz_analysis
    fuzz_names fuzz_scanner)

# Extra seed directories read in place (the shipped packs and the engine's broken packs).
set(TRIAGE_FUZZ_EXTRA_fuzz_rule_pack ${CMAKE_SOURCE_DIR}/rules ${CMAKE_SOURCE_DIR}/tests/rules/broken)
# The analysis harness starts from the trace harness's seeds and the bad-input traces.
set(TRIAGE_FUZZ_EXTRA_fuzz_analysis ${TRIAGE_FUZZ_DIR}/corpus/fuzz_trace_reader
  ${TRIAGE_FUZZ_DIR}/regressions/fuzz_trace_reader ${CMAKE_SOURCE_DIR}/tests/bad-input/cases)
# The scanner harness also compares the two scanners on those.
set(TRIAGE_FUZZ_EXTRA_fuzz_scanner ${TRIAGE_FUZZ_EXTRA_fuzz_analysis})

foreach(h ${TRIAGE_FUZZ_HARNESSES})
  add_executable(replay_${h} ${TRIAGE_FUZZ_DIR}/${h}.c ${TRIAGE_FUZZ_DIR}/replay_main.c)
  target_include_directories(replay_${h} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(replay_${h} PRIVATE triage_cli)
  target_compile_definitions(replay_${h} PRIVATE TRIAGE_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME fuzz/replay_${h}
    COMMAND replay_${h} ${TRIAGE_FUZZ_DIR}/corpus/${h} ${TRIAGE_FUZZ_DIR}/regressions/${h}
            ${TRIAGE_FUZZ_EXTRA_${h}})
  set_tests_properties(fuzz/replay_${h} PROPERTIES TIMEOUT 300)
endforeach()
