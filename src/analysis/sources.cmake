# Sources of src/analysis/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/analysis/baseline.cc
  src/analysis/decision.cc
  src/analysis/log_scan.cc
  src/analysis/points.cc
  src/analysis/prediction.cc
  src/analysis/repeat_spread.cc
  src/analysis/run.cc
  src/analysis/sample.cc)
