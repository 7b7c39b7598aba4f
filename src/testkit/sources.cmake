# Sources of src/testkit/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_TEST_SUPPORT_SOURCES
  src/testkit/headless_browser.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/testkit/html_bench.cc)
