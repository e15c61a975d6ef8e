# ILTP stream-layer interop tests (Python zlib / python3-zstandard) and the `wirekit iltp` CLI
# contract. Included from tests/CMakeLists.txt; needs Debian's /usr/bin/python3 with
# python3-zstandard (a missing module makes iltp_interop exit 77: skipped).
set(WK_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with zlib and zstandard for the interop tests")
if(EXISTS ${WK_TEST_PYTHON})
  add_test(NAME iltp_interop
           COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/iltp_interop.py $<TARGET_FILE:wirekit_cli>)
  set_tests_properties(iltp_interop PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  add_test(NAME iltp_cli
           COMMAND ${WK_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../iltp/cli_test.py $<TARGET_FILE:wirekit_cli>
                   ${WK_VECTORS_DIR})
  set_tests_properties(iltp_cli PROPERTIES TIMEOUT 300)
else()
  message(STATUS "wirekit: ${WK_TEST_PYTHON} not found; iltp_interop and iltp_cli tests not added")
endif()
