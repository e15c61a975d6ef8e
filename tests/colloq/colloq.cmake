# colloq: the Colloq plan codec; included from tests/CMakeLists.txt (after wk_test is defined).
# Fixtures (conversations, canonical plans, transcripts in three encodings, expected traces) live
# in tests/colloq/fixtures/, written by fixtures/gen_fixtures.py (an independent Python model).
set(WK_COLLOQ_FIXTURES ${CMAKE_CURRENT_SOURCE_DIR}/colloq/fixtures)

# Criterion 1 (every fixture: same trace through reference, compact and binary, whole and byte by
# byte), criterion 6 (schedule-only plan change refused at the preface), plan canonical form and
# identity against the Python model, verify_trace on valid and invalid trace fixtures.
wk_test(test_colloq_fixtures colloq/test_fixtures.c)
add_test(NAME colloq_fixtures COMMAND test_colloq_fixtures ${WK_COLLOQ_FIXTURES})

# Units: compile errors with their JSON paths, binary decoder edge cases, JSON integer extremes,
# encoders (capacity 0..N), prefaces, the checker, and zero allocations per binary frame
# (malloc/calloc/realloc wrapped at link time, counted per thread by tests/wk_alloc_probe.h).
wk_test(test_colloq colloq/test_colloq.c)
target_link_options(test_colloq PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
add_test(NAME colloq_unit COMMAND test_colloq ${WK_COLLOQ_FIXTURES})

# The checked-in fixtures are what the Python model writes now (needs b3sum; skipped without it).
add_test(NAME colloq_fixtures_current COMMAND bash -c
  "command -v b3sum >/dev/null || exit 77; rm -rf \"$0\" && /usr/bin/python3 \"$1/gen_fixtures.py\" --out \"$0\" && for d in plans transcripts traces; do diff -r \"$0/$d\" \"$1/$d\" || exit 1; done"
  ${CMAKE_CURRENT_BINARY_DIR}/colloq_fixtures_regen ${WK_COLLOQ_FIXTURES})
set_tests_properties(colloq_fixtures_current PROPERTIES SKIP_RETURN_CODE 77)
