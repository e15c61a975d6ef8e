# Lace-060 session nonces and address strings; included from tests/CMakeLists.txt (after wk_test is
# defined). The nonce test and the CLI test compare with b3sum when it is installed and fall back
# to pinned values otherwise.
wk_test(test_iltp_nonce iltp/test_nonce.c)
add_test(NAME iltp_nonce COMMAND test_iltp_nonce)
wk_test(test_iltp_address iltp/test_address.c)
add_test(NAME iltp_address COMMAND test_iltp_address)
add_test(NAME iltp_session_cli
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/iltp/session_cli_test.sh $<TARGET_FILE:wirekit_cli>)
