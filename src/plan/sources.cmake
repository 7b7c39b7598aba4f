# Sources of src/plan/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/plan/disaggregation.cc
  src/plan/engine_config.cc
  src/plan/number_format.cc
  src/plan/partition.cc
  src/plan/memory.cc
  src/plan/plan.cc
  src/plan/rank_map.cc
  src/plan/render_json.cc
  src/plan/render_text.cc
  src/plan/spec_hardware.cc
  src/plan/stages.cc
  src/plan/layout_checks.cc
  src/plan/warnings.cc
  src/plan/weight_blocks.cc)
