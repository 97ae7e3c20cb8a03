#!/usr/bin/env bash
# The end-to-end demonstration behind `make demo`: what a parent sees. It grows as capabilities land.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CRIBCALL:?set CRIBCALL to the cribcall executable (make demo does)}"
DEMO_DIR=${DEMO_DIR:-.demo}
LISTEN_SECONDS=${LISTEN_SECONDS:-25}
rm -rf "$DEMO_DIR/monitor" "$DEMO_DIR/listener"
mkdir -p "$DEMO_DIR"

step() { printf '\n\033[1m== %s\033[0m\n' "$1"; }
field() { python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['$1'])"; }

# With a running Avahi daemon the listener finds the monitor on the LAN; without one it is given the address.
if "$CRIBCALL" scan --seconds 1 --data-dir "$DEMO_DIR/probe" >/dev/null 2>&1; then
    DISCOVERY=1; MONITOR_NETWORK=(--host ::)
else
    DISCOVERY=0; MONITOR_NETWORK=(--host 127.0.0.1 --no-discovery)
fi
rm -rf "$DEMO_DIR/probe"

step "1. The monitor starts in the nursery (test:cry plays a 3 s cry every 10 s)"
"$CRIBCALL" monitor --name Nursery --audio-source test:cry --data-dir "$DEMO_DIR/monitor" --port 0 "${MONITOR_NETWORK[@]}" --json --web 0 \
    > "$DEMO_DIR/monitor.jsonl" 2> "$DEMO_DIR/monitor.err" &
MONITOR=$!
trap 'kill $MONITOR 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '"ready"' "$DEMO_DIR/monitor.jsonl" 2>/dev/null && break; sleep 0.1; done
READY=$(grep '"ready"' "$DEMO_DIR/monitor.jsonl" | head -1)
PORT=$(echo "$READY" | field port)
FINGERPRINT=$(echo "$READY" | field certFingerprint)
echo "Monitor \"Nursery\" listening on UDP $PORT, certificate $FINGERPRINT"
for _ in $(seq 50); do grep -q '"event":"web"' "$DEMO_DIR/monitor.jsonl" 2>/dev/null && break; sleep 0.1; done
if WEB=$(grep '"event":"web"' "$DEMO_DIR/monitor.jsonl" | head -1 | field url 2>/dev/null); then
    echo "The app for parents (while the demo runs): open $WEB in a browser on this machine"
fi

if [ "$DISCOVERY" = 1 ]; then
    step "2. Dad's laptop finds the monitor on the LAN (mDNS) and pairs by PIN through CPace"
    "$CRIBCALL" scan --seconds 2 --data-dir "$DEMO_DIR/listener"
    PAIR_TARGET=(--monitor Nursery)
else
    step "2. Dad's laptop pairs by PIN: the monitor shows a PIN, the listener sends it through CPace"
    echo "(no Avahi daemon here: the listener is given the monitor's address and fingerprint)"
    PAIR_TARGET=(--address "127.0.0.1:$PORT" --fingerprint "$FINGERPRINT" --monitor-name Nursery)
fi
(
    for _ in $(seq 100); do grep -q '"pin"' "$DEMO_DIR/monitor.jsonl" && break; sleep 0.1; done
    PIN=$(grep '"pin"' "$DEMO_DIR/monitor.jsonl" | tail -1 | field pin)
    echo "(the monitor shows PIN $PIN; typing it on the listener)" >&2
    echo "$PIN"
) | "$CRIBCALL" pair --pin "${PAIR_TARGET[@]}" --name "Dad's laptop" --data-dir "$DEMO_DIR/listener"
echo

step "3. The listener stays connected and shows alerts (for ${LISTEN_SECONDS} s; missed ones are replayed first)"
timeout "$LISTEN_SECONDS" "$CRIBCALL" listen --data-dir "$DEMO_DIR/listener" --name "Dad's laptop" || true

step "4. What the monitor logged (its --json output)"
cut -c1-160 "$DEMO_DIR/monitor.jsonl"
kill "$MONITOR" 2>/dev/null || true
wait "$MONITOR" 2>/dev/null || true

step "5. Under the hood: canonical JSON (RFC 8785) and sound detection on synthetic audio"
echo '{"b":[1E30,4.50,2e-3],"a":"\u20ac"}' | "$CRIBCALL" canonicalize
echo
python3 scripts/cry-audio.py 30 48000 | "$CRIBCALL" detect --sample-rate 48000

step "Done. The demo devices' data: $DEMO_DIR/"
