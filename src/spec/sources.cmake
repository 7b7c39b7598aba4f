# Sources of src/spec/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/spec/cluster_section.cc
  src/spec/disaggregation_section.cc
  src/spec/emit.cc
  src/spec/engine_env.cc
  src/spec/engine_section.cc
  src/spec/experiment_sections.cc
  src/spec/keys.cc
  src/spec/layout_text.cc
  src/spec/lifecycle_section.cc
  src/spec/overrides.cc
  src/spec/profile_section.cc
  src/spec/moe_backends.cc
  src/spec/new_run.cc
  src/spec/search_section.cc
  src/spec/secret_text.cc
  src/spec/secrets.cc
  src/spec/sim_section.cc
  src/spec/spec.cc
  src/spec/spec_parser.cc
  src/spec/sweep_section.cc
  src/spec/toml_access.cc)
