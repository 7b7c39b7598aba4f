# Sources of src/nsys/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/nsys/analysis_json.cc
  src/nsys/analyze.cc
  src/nsys/comm_kernels.cc
  src/nsys/compute_kernels.cc
  src/nsys/export_reader.cc
  src/nsys/export_rows.cc
  src/nsys/intervals.cc
  src/nsys/nvtx_pattern.cc
  src/nsys/profile_summary.cc
  src/nsys/window_analysis.cc)
list(APPEND PPSEARCH_TEST_SUPPORT_SOURCES
  src/nsys/export_testing.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/nsys/nsys_bench.cc)
