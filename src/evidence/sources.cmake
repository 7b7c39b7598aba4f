# Sources of src/evidence/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/evidence/bench_summary.cc
  src/evidence/calibration_file.cc
  src/evidence/csv_cells.cc
  src/evidence/evidence.cc
  src/evidence/json_fields.cc
  src/evidence/medians_csv.cc
  src/evidence/point_columns.cc
  src/evidence/profile_files.cc
  src/evidence/results_csv.cc
  src/evidence/run_metadata.cc
  src/evidence/run_spec.cc
  src/evidence/server_state_file.cc
  src/evidence/spec_json.cc
  src/evidence/summary_json.cc
  src/evidence/trajectory.cc
  src/evidence/validation.cc
  src/evidence/verdict.cc)
