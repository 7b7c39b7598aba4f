# Sources of src/run/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/run/commands.cc
  src/run/node_gpus.cc
  src/run/nsys_profile.cc
  src/run/redact.cc
  src/run/runner.cc
  src/run/server_group.cc
  src/run/server_state.cc
  src/run/sglang_engine.cc
  src/run/sim_sample.cc
  src/run/verdict.cc)
