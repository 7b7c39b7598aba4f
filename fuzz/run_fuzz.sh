#!/usr/bin/env bash
# Builds one fuzz target with clang++ (libFuzzer + ASan + UBSan) into
# BUILD_DIR/fuzz and runs it for a bounded time. Exits 77 (ctest: skipped)
# when clang++ or libFuzzer is missing; non-zero when the fuzzer finds a crash.
# Usage: run_fuzz.sh SOURCE_DIR BUILD_DIR TARGET [SECONDS]
#   TARGET: sse (SSE parser + stream decoder), spec (spec parser + --set),
#           evidence (manifest, request records, nvidia-smi CSV, bench summary
#           readers, and the checks of impossible evidence),
#           nsys (Nsight Systems export reader and analysis, NVTX patterns)
set -euo pipefail
src=$1
out=$2/fuzz
name=$3
seconds=${4:-20}
CXX=${FUZZ_CXX:-clang++}
if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "run_fuzz: $CXX not found; install clang (scripts/setup.sh) to fuzz" >&2
  exit 77
fi
corpus=$out/corpus-$name
mkdir -p "$corpus"

# The library .cc files (no tests) of the given src/ folders.
lib_sources() {
  for dir in "$@"; do
    for f in "$src/src/$dir"/*.cc; do
      case $f in *_test.cc | *_bench.cc) ;; *) echo "$f" ;; esac
    done
  done
}
util=("$src/src/util/did_you_mean.cc" "$src/src/util/excerpt.cc" "$src/src/util/files.cc"
  "$src/src/util/host_name.cc" "$src/src/util/safe_name.cc")
defines=(-DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1 "-DPPSEARCH_SOURCE_DIR=\"$src\""
  '-DPPSEARCH_DATA_DIR_FROM_BIN="../share/ppsearch/data"')
libs=()
case $name in
  sse)
    sources=("$src/fuzz/sse_fuzz.cc" "$src/src/loadgen/sse_parser.cc" "$src/src/loadgen/stream_decoder.cc")
    # Seeds: real SGLang stream shapes; the first byte picks the piece size.
    printf '\x05data: {"text": "Hi", "output_ids": [9], "meta_info": {"id": "a", "finish_reason": {"type": "length", "length": 1}, "prompt_tokens": 4, "completion_tokens": 1, "cached_tokens": 0}}\n\ndata: [DONE]\n\n' \
      >"$corpus/native"
    printf '\x03data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":"Hi","finish_reason":null}]}\r\n\r\ndata: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":1}}\n\ndata: [DONE]\n\n' \
      >"$corpus/openai"
    printf '\x01: comment\ndata: {"error": {"message": "bad", "code": 400}}\n\n' >"$corpus/error"
    ;;
  spec)
    # A workload's lengths file is read while the spec is (workload/lengths_file);
    # [decision] names its objectives and SLA keys through decide/.
    mapfile -t sources < <(echo "$src/fuzz/spec_fuzz.cc"; lib_sources spec decide
      echo "$src/src/workload/lengths_file.cc"; echo "$src/src/util/csv.cc"
      echo "$src/src/util/format.cc"
      printf '%s\n' "${util[@]}")
    libs=(-ltomlplusplus -lfmt)
    # Seeds: the shipped examples, alone and with an override line.
    for f in "$src"/examples/*.toml; do
      cp "$f" "$corpus/$(basename "$f")"
      { echo '@sweep.pp=[2,4]'; cat "$f"; } >"$corpus/set-$(basename "$f")"
    done
    ;;
  evidence)
    # Not run_spec.cc: re-reading a run's spec needs the TOML parser, which
    # the spec target fuzzes; nor calibration_file.cc, which needs the cost
    # model's parameter table and is not among the formats fuzzed here; nor
    # the profile and server-state files (they need nsys/ and launch/).
    mapfile -t sources < <(echo "$src/fuzz/evidence_fuzz.cc"; lib_sources evidence |
      grep -v -e '/run_spec\.cc$' -e '/calibration_file\.cc$' -e '/profile_files\.cc$' \
        -e '/server_state_file\.cc$'
      echo "$src/src/decide/objective.cc"
      echo "$src/src/spec/spec.cc"; echo "$src/src/spec/secrets.cc"
      echo "$src/src/spec/layout_text.cc"
      echo "$src/src/nvidia_smi/gpu_memory.cc"; echo "$src/src/workload/request_record.cc"
      echo "$src/src/stats/stats.cc"; echo "$src/src/stats/point_figures.cc"
      echo "$src/src/decide/sla.cc"
      echo "$src/src/util/format.cc"; echo "$src/src/util/sha256.cc"
      echo "$src/src/util/csv.cc"; printf '%s\n' "${util[@]}")
    # sha256.cc: run.json's input hashes (OpenSSL's digest).
    libs=(-lfmt -lcrypto)
    printf '%s\n' '{"sample": "pp1-tp32-ep4_c8_r1", "state": "started"}' \
      '{"sample": "pp1-tp32-ep4_c8_r1", "state": "completed", "verdict": "ok", "detail": "fine"}' \
      '{"sample": "pp2-tp16-ep4_c8_r1", "state": "failed", "verdict": "engine_died", "detail": "x"}' \
      '{"sample": "pp2-tp16-ep4_c8_r1", "sta' >"$corpus/manifest"
    printf '0, GPU-0a1b, NVIDIA RTX 6000D, 61234, 85651\n1, GPU-2c3d, NVIDIA RTX 6000D, [N/A], 85651\n' \
      >"$corpus/gpu-csv"
    printf '%s\n' '{"id": 0, "status": "ok", "http_status": 200, "send_ns": 10, "first_token_ns": 90, "end_ns": 95, "ttft_s": 8e-08, "e2e_s": 8.5e-08, "input_tokens": 16000, "reported_input_tokens": 16000, "output_tokens": 1, "error": ""}' \
      '{"id": 1, "status": "http_error", "http_status": 503, "send_ns": 10, "first_token_ns": -1, "end_ns": 40, "ttft_s": null, "e2e_s": 3e-08, "input_tokens": 16000, "reported_input_tokens": -1, "output_tokens": 0, "error": "busy"}' \
      >"$corpus/records"
    # The same file appended to itself: what the records checks must name.
    cat "$corpus/records" "$corpus/records" >"$corpus/records-doubled"
    printf '%s\n' '{"sample": "2x-pp2-tp8-ep4_c8_r1", "simulated": false, "seed": 7, "ready_s": 0.5, "server_version": null, "url": "http://n0:1", "ttft_s": {"p50": 0.2, "max": 0.4}, "instances": [{"instance": 0, "hosts": ["n0"], "requests": 4, "requests_ok": 4}], "stop_notes": ["killed"], "replayed_from": {"file": "m.csv", "line": 2}, "noise_cv": 0.01, "micro_batches": 9}' \
      >"$corpus/bench"
    printf '%s\n' '{"sample": "1p1d-pp1-tp8-ep8+pp1-tp8-ep8-dp8_c8_r1", "disaggregation": {"pools": [{"role": "prefill", "gpus": 8, "servers": [{"instance": 0, "hosts": ["n0"], "requests": 4, "requests_ok": 4}], "busy_share": 0.5, "batch_fill": 0.1}], "ttft_parts_s": {"prefill": 0.2, "transfer": 0.01}, "transfer_bytes": 1024, "bottleneck": "prefill"}}' \
      >"$corpus/bench-disaggregated"
    ;;
  nsys)
    mapfile -t sources < <(echo "$src/fuzz/nsys_fuzz.cc"; lib_sources nsys stats decide table
      echo "$src/src/util/format.cc")
    libs=(-lsqlite3 -lre2 -lfmt -pthread)
    # Seeds: the NVTX pattern up to a lone backslash (FuzzedDataProvider's
    # ConsumeRandomLengthString), then the bytes the rows are drawn from.
    printf 'prefill\\\x05\x01\x02\x03\x04\x05\x06\x07\x08\x09' >"$corpus/prefill"
    printf '(a+)+$\\\x10\x03\x03\x00\x00\x00\x05\x00\x00\x00\x00' >"$corpus/nested"
    ;;
  *)
    echo "run_fuzz: unknown target '$name' (sse, spec, evidence, nsys)" >&2
    exit 2
    ;;
esac

bin=$out/${name}_fuzz
rebuild=0
[ -x "$bin" ] || rebuild=1
for f in "${sources[@]}" "$0"; do
  [ "$f" -nt "$bin" ] && rebuild=1
done
for f in "$src"/src/*/*.h; do
  [ "$f" -nt "$bin" ] && rebuild=1
done
if [ "$rebuild" = 1 ]; then
  if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
      "$CXX" -fsanitize=fuzzer -x c++ - -o "$out/probe" 2>/dev/null; then
    echo "run_fuzz: $CXX cannot link -fsanitize=fuzzer (libclang-rt missing?); skipped" >&2
    exit 77
  fi
  # One translation unit of every source, as the main build's unity batches:
  # the headers' templates are instrumented and generated once, not once per
  # file (a third of the time: 49 s for the evidence readers instead of 133).
  unity=$out/${name}_all.cc
  printf '#include "%s"\n' "${sources[@]}" >"$unity"
  "$CXX" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${defines[@]}" -I "$src/src" -I "$2/generated" "$unity" "${libs[@]}" -o "$bin.tmp"
  mv "$bin.tmp" "$bin"
fi
# libFuzzer's default crash exit code is 77, ctest's "skipped": report 1.
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$out/$name-" "$corpus"
