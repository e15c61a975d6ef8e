# The contract harness library (tests/contract/wk_contract.h) and the per-module adapters, linked
# by the module tests and the fuzz targets. Included from tests/CMakeLists.txt and
# fuzz/CMakeLists.txt (fuzz builds configure without tests); defines wk_contract once.
if(NOT TARGET wk_contract)
  add_library(wk_contract STATIC ${CMAKE_CURRENT_LIST_DIR}/wk_contract.c
              ${CMAKE_CURRENT_LIST_DIR}/wk_contract_moqt.c
              ${CMAKE_CURRENT_LIST_DIR}/wk_contract_iltp.c
              ${CMAKE_CURRENT_LIST_DIR}/wk_contract_eth.c
              ${CMAKE_CURRENT_LIST_DIR}/wk_contract_colloq.c
              ${CMAKE_CURRENT_LIST_DIR}/wk_contract_alloc.c)
  target_include_directories(wk_contract PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(wk_contract PUBLIC wirekit_static)
endif()
