# Cross-module CLI tests; included from tests/CMakeLists.txt. Debian's /usr/bin/python3 (standard
# library only).
#   cli_streaming: every stream command writes its output as it decodes, in bounded memory
#                  (RLIMIT_AS 256 MiB, peak RSS < 64 MiB; the 2,000,000-object MoQT stream), and
#                  writes what it decoded before its input ends (wirekit(1) "Streams and memory").
#   cli_man:       docs/wirekit.1 documents every module, command and option the CLI's --help
#                  lists, and every exit status.
set(WK_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with zlib and zstandard for the interop tests")
set(WK_STREAM_TEST_FLAGS)
if(WK_SANITIZE)
  # ASan reserves terabytes of address space and quarantines freed memory: no memory limits
  list(APPEND WK_STREAM_TEST_FLAGS --sanitized)
endif()
add_test(NAME cli_streaming
         COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/stream_test.py $<TARGET_FILE:wirekit_cli>
                 ${CMAKE_SOURCE_DIR} ${WK_STREAM_TEST_FLAGS})
set_tests_properties(cli_streaming PROPERTIES TIMEOUT 900)
add_test(NAME cli_man
         COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/man_test.py $<TARGET_FILE:wirekit_cli>
                 ${CMAKE_SOURCE_DIR}/docs/wirekit.1)
set_tests_properties(cli_man PROPERTIES TIMEOUT 120)
