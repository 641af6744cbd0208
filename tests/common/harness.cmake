# The test harness shared by every suite (included by tests/CMakeLists.txt).
#
# weft-test-common: link it to get tests/common/ on the include path (watchdog.hpp,
# weft_env.hpp, error_detail.hpp, collective_test.hpp, multiprocess_main.hpp, mix64.hpp); the
# program links Weft itself (libweft, or the core's objects).
find_package(Threads REQUIRED)
add_library(weft-test-common INTERFACE)
target_include_directories(weft-test-common INTERFACE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(weft-test-common INTERFACE Threads::Threads)

# Multi-process tests, started through weftrun, run on every fabric plugin built:
# weft_weftrun_test(NAME NP TARGET [ARGS...]) registers NAME (the default fabric, ucx) and
# NAME.<fabric> for each other one (WEFT_FABRIC=<fabric>).  Set properties on all variants
# with weft_test_properties(NAME PROPERTIES ...) / weft_test_environment(NAME VAR=VALUE ...).
# weft_weftrun_add(NAME NP TARGET [ARGS...]) registers NAME alone, with no properties.
set(WEFT_TEST_OTHER_FABRICS "")
if(TARGET weft-ofi)
  list(APPEND WEFT_TEST_OTHER_FABRICS ofi)
endif()
if(TARGET weft-galapagos)
  list(APPEND WEFT_TEST_OTHER_FABRICS galapagos)
endif()
function(weft_weftrun_add name np target)
  add_test(NAME ${name} COMMAND $<TARGET_FILE:weftrun> -n ${np} $<TARGET_FILE:${target}> ${ARGN})
endfunction()
function(weft_weftrun_test name np target)
  weft_weftrun_add(${name} ${np} ${target} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 LABELS multiprocess)
  foreach(fabric ${WEFT_TEST_OTHER_FABRICS})
    weft_weftrun_add(${name}.${fabric} ${np} ${target} ${ARGN})
    set_tests_properties(${name}.${fabric} PROPERTIES TIMEOUT 120 LABELS multiprocess
                         ENVIRONMENT "WEFT_FABRIC=${fabric}")
  endforeach()
endfunction()
function(weft_test_variants name out)
  set(names ${name})
  foreach(fabric ${WEFT_TEST_OTHER_FABRICS})
    list(APPEND names ${name}.${fabric})
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
function(weft_test_properties name)
  weft_test_variants(${name} names)
  set_tests_properties(${names} ${ARGN})
endfunction()
function(weft_test_environment name)
  weft_test_variants(${name} names)
  set_property(TEST ${names} APPEND PROPERTY ENVIRONMENT ${ARGN})
endfunction()
