# `wirekit eth` CLI tests over every vector, and interop with python3-snappy, golang/snappy and
# klauspost/compress s2 (two Go peers built offline from tests/eth/go/ into the build directory).
# Included from tests/CMakeLists.txt. Both need Debian's /usr/bin/python3 (python3-snappy); the
# interop test also needs the go toolchain, golang-github-golang-snappy-dev and
# golang-github-klauspost-compress-dev (bootstrap installs them): a missing peer is a failure, not
# a skip.
set(WK_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with zlib and zstandard for the interop tests")
add_test(NAME eth_cli
         COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/cli_test.py $<TARGET_FILE:wirekit_cli>
                 ${WK_VECTORS_DIR})
set_tests_properties(eth_cli PROPERTIES TIMEOUT 600)
add_test(NAME eth_interop
         COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/interop_test.py $<TARGET_FILE:wirekit_cli>
                 ${WK_VECTORS_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(eth_interop PROPERTIES TIMEOUT 600)
