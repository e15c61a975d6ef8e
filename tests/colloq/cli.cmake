# `wirekit colloq` CLI tests (compile, run, convert, verify): our own conversations and transcripts
# (with an independent model of the three encodings) and every fixture under tests/colloq/fixtures/
# (picked up by glob at run time). Included from tests/CMakeLists.txt. Needs Debian's
# /usr/bin/python3 (standard library only).
set(WK_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with zlib and zstandard for the interop tests")
add_test(NAME colloq_cli
         COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/cli_test.py $<TARGET_FILE:wirekit_cli>
                 ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(colloq_cli PROPERTIES TIMEOUT 900) # under ASan on a loaded 2-core machine: 180-300 s
