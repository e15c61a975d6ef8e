# `wirekit moqt` CLI tests over every vector: the 89 shipped ones (WK_VECTORS_DIR) and ours
# (tests/moqt/vectors/*.json, picked up by glob at run time), plus options, streaming, properties
# and refusals. Included from tests/CMakeLists.txt. Needs Debian's /usr/bin/python3 (standard
# library only).
set(WK_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with zlib and zstandard for the interop tests")
add_test(NAME moqt_cli
         COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/cli_test.py $<TARGET_FILE:wirekit_cli>
                 ${WK_VECTORS_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
# About 130 s alone here, 190 s beside the rest of the suite, and past 300 s under ASan on a
# loaded 2-core machine (a brand-new-machine run, 2026-12-07): a deadline, not a speed check.
set_tests_properties(moqt_cli PROPERTIES TIMEOUT 900)
