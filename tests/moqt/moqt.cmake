# moqt: MoQT draft-20 data streams; included from tests/CMakeLists.txt (after wk_test is defined).
# The shipped vectors are read from WK_VECTORS_DIR, ours from tests/moqt/vectors/; json-c parses both.
pkg_check_modules(JSONC REQUIRED IMPORTED_TARGET json-c)

set(WK_MOQT_SHIPPED ${WK_VECTORS_DIR}/moqt/transport/draft20/codec)
wk_test(test_moqt_vectors moqt/test_vectors.c)
target_link_libraries(test_moqt_vectors PRIVATE PkgConfig::JSONC wk_contract)
# All 89 shipped vectors, counted so a missing or shortened file fails.
add_test(NAME moqt_vectors_shipped COMMAND test_moqt_vectors --expect-count 89
         ${WK_MOQT_SHIPPED}/varint.json
         ${WK_MOQT_SHIPPED}/data-streams/subgroup.json
         ${WK_MOQT_SHIPPED}/data-streams/datagram.json
         ${WK_MOQT_SHIPPED}/data-streams/fetch-header.json)
# Ours (tests/moqt/vectors/, written by gen_vectors.py there), counted likewise.
set(WK_MOQT_OWN ${CMAKE_CURRENT_SOURCE_DIR}/moqt/vectors)
add_test(NAME moqt_vectors_own COMMAND test_moqt_vectors --expect-count 398
         ${WK_MOQT_OWN}/varint.json ${WK_MOQT_OWN}/subgroup.json ${WK_MOQT_OWN}/datagram.json
         ${WK_MOQT_OWN}/fetch.json)

# Unit tests: the integer, Type Flags computed vs enumerated, every error with its offset, writer
# refusals, and zero allocations per object (malloc/calloc/realloc wrapped at link time and
# counted per thread by tests/wk_alloc_probe.h; a thread checks that another thread's allocations
# are not counted).
find_package(Threads REQUIRED)
wk_test(test_moqt moqt/test_moqt.c)
target_link_libraries(test_moqt PRIVATE wk_contract)
target_link_options(test_moqt PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
target_link_libraries(test_moqt PRIVATE Threads::Threads)
add_test(NAME moqt_unit COMMAND test_moqt)
