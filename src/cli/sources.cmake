# Sources of src/cli/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/cli/cmd_adaptive_eval.cc
  src/cli/cmd_backtest.cc
  src/cli/cmd_bench.cc
  src/cli/cmd_calibrate.cc
  src/cli/cmd_compare.cc
  src/cli/cmd_model.cc
  src/cli/cmd_nsys.cc
  src/cli/cmd_plan.cc
  src/cli/cmd_probe.cc
  src/cli/cmd_redact_log.cc
  src/cli/cmd_search.cc
  src/cli/cmd_report.cc
  src/cli/cmd_run.cc
  src/cli/cmd_router_sim.cc
  src/cli/cmd_serve_sim.cc
  src/cli/cmd_simulate.cc
  src/cli/cmd_smi_sim.cc
  src/cli/cmd_validate.cc
  src/cli/exit_codes.cc
  src/cli/command_inputs.cc
  src/cli/simulate_disaggregated.cc
  src/cli/slurm_submit.cc
  src/cli/spec_options.cc)
list(APPEND PPSEARCH_MAIN_SOURCES
  src/cli/main.cc)
