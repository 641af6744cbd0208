# The GAScore model (weft-gascore) against a raw TCP peer speaking gal_wire.hpp and Shoal AMs.
# Included from tests/galapagos/CMakeLists.txt; only when the model is built (nlohmann-json).
if(TARGET weft-gascore)
  add_executable(weft-test-gascore ${CMAKE_CURRENT_LIST_DIR}/test_gascore.cpp)
  target_include_directories(weft-test-gascore PRIVATE ${PROJECT_SOURCE_DIR}/plugins/galapagos)
  target_compile_definitions(weft-test-gascore PRIVATE
    WEFT_GASCORE_PROGRAM="$<TARGET_FILE:weft-gascore>")
  target_link_libraries(weft-test-gascore PRIVATE GTest::gtest_main Threads::Threads weft_gal_auth)
  add_dependencies(weft-test-gascore weft-gascore)
  # PRE_TEST: list the cases when ctest runs, not at build time.
  gtest_discover_tests(weft-test-gascore DISCOVERY_MODE PRE_TEST TEST_PREFIX galapagos.gascore.
    PROPERTIES LABELS galapagos TIMEOUT 60)
endif()
