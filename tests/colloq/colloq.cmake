# colloq: the Colloq plan codec; included from tests/CMakeLists.txt (after wk_test is defined).
# Fixtures (conversations, canonical plans, transcripts in three encodings, expected traces) live
# in tests/colloq/fixtures/, written by fixtures/gen_fixtures.py (an independent Python model).
set(WK_COLLOQ_FIXTURES ${CMAKE_CURRENT_SOURCE_DIR}/colloq/fixtures)

# Criterion 1 (every fixture: same trace through reference, compact and binary, whole and byte by
# byte), criterion 6 (schedule-only plan change refused at the preface), plan canonical form and
# identity against the Python model, verify_trace on valid and invalid trace fixtures.
wk_test(test_colloq_fixtures colloq/test_fixtures.c)
target_link_libraries(test_colloq_fixtures PRIVATE wk_contract)
add_test(NAME colloq_fixtures COMMAND test_colloq_fixtures ${WK_COLLOQ_FIXTURES})

# Units: compile errors with their JSON paths, binary decoder edge cases, JSON integer extremes,
# encoders (capacity 0..N), prefaces, the checker, and zero allocations per binary frame
# (malloc/calloc/realloc wrapped at link time, counted per thread by tests/wk_alloc_probe.h).
wk_test(test_colloq colloq/test_colloq.c)
target_link_libraries(test_colloq PRIVATE wk_contract)
target_link_options(test_colloq PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
add_test(NAME colloq_unit COMMAND test_colloq ${WK_COLLOQ_FIXTURES})

# The checked-in fixtures are what the Python model writes now (needs b3sum; skipped without it).
add_test(NAME colloq_fixtures_current COMMAND bash -c
  "command -v b3sum >/dev/null || exit 77; rm -rf \"$0\" && /usr/bin/python3 \"$1/gen_fixtures.py\" --out \"$0\" && for d in plans transcripts traces; do diff -r \"$0/$d\" \"$1/$d\" || exit 1; done"
  ${CMAKE_CURRENT_BINARY_DIR}/colloq_fixtures_regen ${WK_COLLOQ_FIXTURES})
set_tests_properties(colloq_fixtures_current PROPERTIES SKIP_RETURN_CODE 77)

# Generated codecs (issue 19): `wirekit colloq gen` at build time for every fixture conversation
# (all-types: the thirteen field types, optionals, bitmaps of 2 and 5 bytes; gen-names: names that
# are C keywords, macros or clash with generated names), compiled with the project's warnings
# (-Wall -Wextra -Werror ...) and tested against the generic codec: every fixture, 100,000 random
# frames per plan and mutations of them (same bytes, traces, failure kinds and offsets).
set(WK_COLLOQ_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/colloq_gen)
set(WK_COLLOQ_GEN_SOURCES)
foreach(pair gts:token-stream gmoe:moe-router gchat:chat gat:all-types gnm:gen-names)
  string(REPLACE ":" ";" kv ${pair})
  list(GET kv 0 prefix)
  list(GET kv 1 conv)
  wk_colloq_generate(${prefix} ${WK_COLLOQ_FIXTURES}/${conv}.json ${WK_COLLOQ_GEN_DIR} src)
  list(APPEND WK_COLLOQ_GEN_SOURCES ${src})
endforeach()
wk_test(test_colloq_generated colloq/test_generated.c ${WK_COLLOQ_GEN_SOURCES})
target_include_directories(test_colloq_generated PRIVATE ${WK_COLLOQ_GEN_DIR})
target_link_options(test_colloq_generated PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
add_test(NAME colloq_generated COMMAND test_colloq_generated ${WK_COLLOQ_FIXTURES})
set_tests_properties(colloq_generated PROPERTIES TIMEOUT 600)

# Every colloq object with a counting, failing allocator (tests/contract/wk_contract_alloc.h):
# each allocation call fails in turn, alone and sticky; WK_OK or WK_ERR_NOMEM and nothing live.
wk_test(test_colloq_alloc colloq/test_alloc.c)
target_link_libraries(test_colloq_alloc PRIVATE wk_contract)
add_test(NAME colloq_alloc COMMAND test_colloq_alloc ${WK_COLLOQ_FIXTURES})
