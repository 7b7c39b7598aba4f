# Sources of src/run/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/run/prepare.cc
  src/run/profile_evidence.cc
  src/run/redact.cc
  src/run/replay_medians.cc
  src/run/replay_sample.cc
  src/run/runner.cc
  src/run/instances.cc
  src/run/server_state.cc
  src/run/sim_deployment.cc
  src/run/sim_evidence.cc
  src/run/sim_sample.cc
  src/run/sample_verdict.cc)
