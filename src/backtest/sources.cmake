# Sources of src/backtest/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/backtest/backtest.cc
  src/backtest/case_file.cc
  src/backtest/evaluate.cc
  src/backtest/coverage.cc
  src/backtest/memory_case.cc
  src/backtest/backtest_render.cc)
