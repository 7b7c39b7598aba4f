# Sources of src/adaptive/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/adaptive/observe.cc
  src/adaptive/policy.cc
  src/adaptive/preconditions.cc
  src/adaptive/session.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/adaptive/policy_bench.cc)
