#!/usr/bin/env bash
# The end-to-end demonstration behind `make demo`. It grows as capabilities land.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CRIBCALL:?set CRIBCALL to the cribcall executable (make demo does)}"
DEMO_DIR=${DEMO_DIR:-.demo}

step() { printf '\n\033[1m== %s\033[0m\n' "$1"; }

step "1. A monitor and a listener get their device identities (Ed25519 key, self-signed X.509, files 0600)"
"$CRIBCALL" identity --data-dir "$DEMO_DIR/monitor"
"$CRIBCALL" identity --data-dir "$DEMO_DIR/listener" --json
echo "(run again: the same identities are loaded, not recreated)"
"$CRIBCALL" identity --data-dir "$DEMO_DIR/monitor" | head -3

step "2. Everything authenticated is serialized with RFC 8785 canonical JSON"
echo '{"b":[1E30,4.50,2e-3],"a":"\u20ac"}'
echo '{"b":[1E30,4.50,2e-3],"a":"\u20ac"}' | "$CRIBCALL" canonicalize
echo
echo '{"a":1,"a":2}' | "$CRIBCALL" canonicalize || echo "(refused with exit status $?)"

step "3. Sound detection on 30 s of synthetic nursery audio (a 3 s cry every 10 s, 48 kHz)"
python3 scripts/cry-audio.py 30 48000 | "$CRIBCALL" detect --sample-rate 48000

step "Done. Data of the demo devices: $DEMO_DIR/"
