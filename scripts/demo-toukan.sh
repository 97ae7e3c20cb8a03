#!/usr/bin/env bash
# The Toukan part of `make demo`: record a few seconds of speech, stop, watch it upload to toukan-server and come
# back transcribed.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TOUKAN:?set TOUKAN to the toukan executable (make demo does)}"
: "${TOUKAN_SERVER_BIN:?set TOUKAN_SERVER_BIN to the toukan-server executable (make demo does)}"
DEMO_DIR=${DEMO_DIR:-.demo}
rm -rf "$DEMO_DIR/toukan" "$DEMO_DIR/toukan-server"
mkdir -p "$DEMO_DIR"

step() { printf '\n\033[1m== %s\033[0m\n' "$1"; }

step "T1. The Toukan server starts (uploads, processing, transcription with PocketSphinx)"
"$TOUKAN_SERVER_BIN" --port 0 --data-dir "$DEMO_DIR/toukan-server" --json \
    > "$DEMO_DIR/toukan-server.jsonl" 2> "$DEMO_DIR/toukan-server.err" &
SERVER=$!
stop_all() {
    "$TOUKAN" stop --data-dir "$DEMO_DIR/toukan" >/dev/null 2>&1 || true
    pkill -f "toukan daemon --data-dir $(cd "$DEMO_DIR" && pwd)/toukan" 2>/dev/null || true
    kill "$SERVER" 2>/dev/null || true
}
trap stop_all EXIT
for _ in $(seq 300); do grep -q '"ready"' "$DEMO_DIR/toukan-server.jsonl" 2>/dev/null && break; sleep 0.1; done
PORT=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['port'])" "$DEMO_DIR/toukan-server.jsonl")
echo "toukan-server on http://127.0.0.1:$PORT (its review page is at /)"

step "T2. Record 6 s of speech (the daemon starts on first use)"
"$TOUKAN" start --audio-source test:speech --server "http://127.0.0.1:$PORT" --data-dir "$DEMO_DIR/toukan"
sleep 3
"$TOUKAN" status --data-dir "$DEMO_DIR/toukan"
sleep 3
"$TOUKAN" stop --data-dir "$DEMO_DIR/toukan"

step "T3. Uploaded in the background, then processed on the server"
for _ in $(seq 120); do
    "$TOUKAN" history --json --data-dir "$DEMO_DIR/toukan" | grep -q '"uploadStatus":"uploaded"' && break
    sleep 0.5
done
"$TOUKAN" history --data-dir "$DEMO_DIR/toukan"
for _ in $(seq 120); do
    curl -fsS "http://127.0.0.1:$PORT/memories" | grep -q '"status":"ready"' && break
    sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/memories" | python3 -m json.tool | cut -c1-160
