#!/usr/bin/env bash
# Builds the SSE fuzz target with clang++ (libFuzzer + ASan + UBSan) into
# BUILD_DIR and runs it for a bounded time. Exits 77 (ctest: skipped) when
# clang++ or libFuzzer is missing; non-zero when the fuzzer finds a crash.
# Usage: run_fuzz.sh SOURCE_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$1
out=$2/fuzz
seconds=${3:-20}
CXX=${FUZZ_CXX:-clang++}
if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "run_fuzz: $CXX not found; install clang (scripts/setup.sh) to fuzz" >&2
  exit 77
fi
mkdir -p "$out/corpus"
bin=$out/sse_fuzz
sources=("$src/fuzz/sse_fuzz.cc" "$src/src/bench/sse_parser.cc" "$src/src/bench/stream_decoder.cc")
rebuild=0
[ -x "$bin" ] || rebuild=1
for f in "${sources[@]}" "$src/src/bench/sse_parser.h" "$src/src/bench/stream_decoder.h" "$0"; do
  [ "$f" -nt "$bin" ] && rebuild=1
done
if [ "$rebuild" = 1 ]; then
  if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
      "$CXX" -fsanitize=fuzzer -x c++ - -o "$out/probe" 2>/dev/null; then
    echo "run_fuzz: $CXX cannot link -fsanitize=fuzzer (libclang-rt missing?); skipped" >&2
    exit 77
  fi
  "$CXX" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I "$src/src" "${sources[@]}" -o "$bin.tmp"
  mv "$bin.tmp" "$bin"
fi
# Seeds: real SGLang stream shapes.
printf '\x05data: {"text": "Hi", "output_ids": [9], "meta_info": {"id": "a", "finish_reason": {"type": "length", "length": 1}, "prompt_tokens": 4, "completion_tokens": 1, "cached_tokens": 0}}\n\ndata: [DONE]\n\n' \
  >"$out/corpus/native"
printf '\x03data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":"Hi","finish_reason":null}]}\r\n\r\ndata: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":1}}\n\ndata: [DONE]\n\n' \
  >"$out/corpus/openai"
printf '\x01: comment\ndata: {"error": {"message": "bad", "code": 400}}\n\n' >"$out/corpus/error"
# libFuzzer's default crash exit code is 77, ctest's "skipped": report 1.
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$out/" "$out/corpus"
