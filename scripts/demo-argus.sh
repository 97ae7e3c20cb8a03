#!/usr/bin/env bash
# The Argus part of `make demo`: a hub watching the moving test pattern, a pairing code, the `argus` client pairing
# with it over pinned TLS and listing the events its motion made, with a thumbnail saved; then (with CRIBCALL set)
# a CribCall monitor paired with the hub by its QR code, whose noise becomes an event with a picture.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ARGUS_HUB:?set ARGUS_HUB to the argus-hub executable (make demo does)}"
: "${ARGUS:?set ARGUS to the argus executable (make demo does)}"
DEMO_DIR=${DEMO_DIR:-.demo}
rm -rf "$DEMO_DIR/argus-hub" "$DEMO_DIR/argus" "$DEMO_DIR/argus-monitor"
mkdir -p "$DEMO_DIR"

step() { printf '\n\033[1m== %s\033[0m\n' "$1"; }

step "A1. The hub starts: HTTPS with its own certificate, a test camera whose motion makes events"
"$ARGUS_HUB" --host 127.0.0.1 --port 0 --json --no-bonjour --camera "Garden=test" --motion-cooldown 3 \
    --ice-address 127.0.0.1 --data-dir "$DEMO_DIR/argus-hub" > "$DEMO_DIR/argus-hub.jsonl" 2> "$DEMO_DIR/argus-hub.err" &
HUB=$!
MONITOR=
trap 'kill "$HUB" $MONITOR 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q '"ready"' "$DEMO_DIR/argus-hub.jsonl" 2>/dev/null && break; sleep 0.1; done
PORT=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['port'])" "$DEMO_DIR/argus-hub.jsonl")
echo "argus-hub on https://127.0.0.1:$PORT/api/v1/mobile"

step "A2. The owner makes a pairing code on the hub (6 digits, 5 minutes, once)"
PAIRING=$("$ARGUS_HUB" pair --data-dir "$DEMO_DIR/argus-hub")
echo "$PAIRING"
CODE=$(echo "$PAIRING" | sed -n 's/^Pairing code: //p' | tr -d ' ')
FINGERPRINT=$(echo "$PAIRING" | sed -n 's/.*certificate fingerprint: //p' | tr -d ' ')

step "A3. The client pairs: it checks the hub's certificate against the fingerprint, then trades the code for tokens"
"$ARGUS" pair --hub "https://127.0.0.1:$PORT" --fingerprint "$FINGERPRINT" --code "$CODE" --name "Demo laptop" \
    --config-dir "$DEMO_DIR/argus"

step "A4. Events from the camera's motion, newest first, and one thumbnail (≤ 50 KB)"
for _ in $(seq 100); do
    [ "$("$ARGUS" events --json --config-dir "$DEMO_DIR/argus" | wc -l)" -ge 2 ] && break
    sleep 0.2
done
"$ARGUS" events --limit 5 --config-dir "$DEMO_DIR/argus"
EVENT=$("$ARGUS" events --json --limit 1 --config-dir "$DEMO_DIR/argus" | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['id'])")
"$ARGUS" thumbnail "$EVENT" -o "$DEMO_DIR/argus/thumbnail.jpg" --config-dir "$DEMO_DIR/argus"
"$ARGUS" cameras --config-dir "$DEMO_DIR/argus"
"$ARGUS_HUB" devices list --data-dir "$DEMO_DIR/argus-hub"

[ -n "${CRIBCALL:-}" ] || exit 0
step "A5. A CribCall monitor becomes a camera: the hub pairs with it by its QR code, as a CribCall listener"
"$CRIBCALL" monitor --name Nursery --port 0 --json --no-discovery --qr --audio-source test:cry --video-source test \
    --ice-address 127.0.0.1 --data-dir "$DEMO_DIR/argus-monitor" > "$DEMO_DIR/argus-monitor.jsonl" \
    2> "$DEMO_DIR/argus-monitor.err" &
MONITOR=$!
for _ in $(seq 300); do grep -q '"event":"qr"' "$DEMO_DIR/argus-monitor.jsonl" 2>/dev/null && break; sleep 0.1; done
read -r MPORT QR < <(python3 -c "
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
print(next(l['port'] for l in lines if l['event'] == 'ready'), next(l['text'] for l in lines if l['event'] == 'qr'))
" "$DEMO_DIR/argus-monitor.jsonl")
"$ARGUS_HUB" monitors pair --qr "$QR" --address "127.0.0.1:$MPORT" --data-dir "$DEMO_DIR/argus-hub"

step "A6. Its noise (a test cry every 10 s) is an event of the camera 'Nursery', with a picture from its stream"
# A noise heard before the pairing is replayed without a picture; the next one, live, gets one.
for _ in $(seq 60); do
    NOISE=$("$ARGUS" events --json --config-dir "$DEMO_DIR/argus" | python3 -c "
import json, sys
print(next((e['id'] for e in map(json.loads, sys.stdin) if e.get('smart_detection_type') == 'noise'), ''))")
    [ -n "$NOISE" ] && "$ARGUS" thumbnail "$NOISE" -o "$DEMO_DIR/argus/nursery.jpg" --config-dir "$DEMO_DIR/argus" \
        2>/dev/null && break
    sleep 0.5
done
"$ARGUS" events --limit 4 --config-dir "$DEMO_DIR/argus"
"$ARGUS" cameras --config-dir "$DEMO_DIR/argus"
