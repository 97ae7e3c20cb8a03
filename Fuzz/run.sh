#!/usr/bin/env bash
# make fuzz [TARGET=control-channel|upload-parsers] SECONDS=N: libFuzzer (+ AddressSanitizer) over one target:
#   control-channel  the frame decoder, the JSON parser and message decoding (CribCall)
#   upload-parsers   the multipart/form-data parser, tus Upload-Metadata and the audio sniffer (Toukan)
# Crashing inputs land in Fuzz/artifacts/; replay one with the plain build:
#   swift build --product fuzz-parsers && FUZZ_TARGET=… .build/debug/fuzz-parsers Fuzz/artifacts/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target=${2:-control-channel}
case "$target" in
    control-channel) seeds=Fuzz/seeds dict=(-dict=Fuzz/control.dict) ;;
    upload-parsers) seeds=Fuzz/upload-seeds dict=(-dict=Fuzz/upload.dict) ;;
    *) echo "TARGET must be control-channel or upload-parsers (got $target)" >&2; exit 2 ;;
esac
# lld, because GNU gold (Debian's default) crashes ("internal error in format_file_lineno") linking libFuzzer's
# driver into a SwiftPM executable.
flags=(-c release --product fuzz-parsers --scratch-path .build-fuzz
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)
swift build "${flags[@]}"
bin="$(swift build "${flags[@]}" --show-bin-path)/fuzz-parsers"
corpus="Fuzz/corpus/$target"
mkdir -p "$corpus" Fuzz/artifacts
echo "Fuzzing $target for ${seconds}s (corpus: $corpus, seeds: $seeds)"
FUZZ_TARGET="$target" "$bin" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 "${dict[@]}" -artifact_prefix="Fuzz/artifacts/$target-" "$corpus" "$seeds"
