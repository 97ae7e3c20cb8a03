#!/usr/bin/env bash
# make fuzz SECONDS=N: libFuzzer (+ AddressSanitizer) over the frame decoder, the JSON parser and message decoding.
# Crashing inputs land in Fuzz/artifacts/; replay one with the plain build:
#   swift build --product fuzz-control-channel && .build/debug/fuzz-control-channel Fuzz/artifacts/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
# lld, because GNU gold (Debian's default) crashes ("internal error in format_file_lineno") linking libFuzzer's
# driver into a SwiftPM executable.
flags=(-c release --product fuzz-control-channel --scratch-path .build-fuzz
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)
swift build "${flags[@]}"
bin="$(swift build "${flags[@]}" --show-bin-path)/fuzz-control-channel"
mkdir -p Fuzz/corpus Fuzz/artifacts
echo "Fuzzing for ${seconds}s (corpus: Fuzz/corpus, seeds: Fuzz/seeds)"
"$bin" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -dict=Fuzz/control.dict -artifact_prefix=Fuzz/artifacts/ Fuzz/corpus Fuzz/seeds
