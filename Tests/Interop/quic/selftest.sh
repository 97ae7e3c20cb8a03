#!/usr/bin/env bash
# Self-test of cribcall_peer.py: its aioquic client against its aioquic server, on 127.0.0.1.
# Prints PASS/FAIL lines and a final "N passed, N failed" line; exits non-zero on any failure.
# Python: $PYTHON, else the repo's .venv, else python3 (needs aioquic, cryptography, rfc8785).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
PEER="$HERE/cribcall_peer.py"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cribcall-quic-selftest.XXXXXX")
SERVER_PID=""
PASSED=0
FAILED=0

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

pass() { echo "PASS: $1"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL: $1"; FAILED=$((FAILED + 1)); }
# check NAME COMMAND...: PASS if the command succeeds.
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
has() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }
rc_is() { [ "$(cat "$1.rc")" = "$2" ]; }
peer() { timeout 60 "$PY" "$PEER" "$@"; }

# json_field FILE KEY: KEY of the first JSON line of FILE.
json_field() {
    "$PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2"
}

# der_fingerprint CERT.pem: SHA-256 of the DER, computed without the peer's code.
der_fingerprint() {
    "$PY" -c 'import base64, hashlib, sys
pem = open(sys.argv[1]).read().splitlines()
print(hashlib.sha256(base64.b64decode("".join(l for l in pem if not l.startswith("-----")))).hexdigest())' "$1"
}

# wait_for FILE TEXT SECONDS: until FILE contains TEXT.
wait_for() {
    local deadline=$((SECONDS + $3))
    while [ "$SECONDS" -lt "$deadline" ]; do
        has "$1" "$2" && return 0
        sleep 0.1
    done
    return 1
}

# client NAME ARGS...: runs the client with its output in $WORK/NAME.out, exit code in NAME.out.rc,
# and what the server printed meanwhile (until the connection ended) in $WORK/NAME.server.
client() {
    local name=$1; shift
    local before
    before=$(wc -l <"$WORK/server.log")
    peer client --host 127.0.0.1 --port "$PORT" --timeout 15 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.out.rc"
    tail -n +"$((before + 1))" "$WORK/server.log" >"$WORK/$name.server"
    local n=0
    while ! grep -qE '"event":"(closed|handshake-failed)"' "$WORK/$name.server" && [ $n -lt 50 ]; do
        sleep 0.1; n=$((n + 1))
        tail -n +"$((before + 1))" "$WORK/server.log" >"$WORK/$name.server"
    done
}

TRUSTED=(--cert "$WORK/trusted/cert.pem" --key "$WORK/trusted/key.pem")
UNTRUSTED=(--cert "$WORK/untrusted/cert.pem" --key "$WORK/untrusted/key.pem")
PING='{"type":"PING","timestamp":123}'
o() { echo "$WORK/$1.out"; }
s() { echo "$WORK/$1.server"; }

echo "== identities"
peer gen-cert --out "$WORK/server" >"$WORK/server.id"
peer gen-cert --out "$WORK/trusted" --device-id 8E3C4B9A-1D2E-4F5A-9B8C-7D6E5F4A3B2C >"$WORK/trusted.id"
peer gen-cert --out "$WORK/untrusted" >"$WORK/untrusted.id"
SFP=$(json_field "$WORK/server.id" fingerprint)
CFP=$(json_field "$WORK/trusted.id" fingerprint)
check "gen-cert fingerprint = SHA-256 of the certificate DER" \
    [ "$SFP" = "$(der_fingerprint "$WORK/server/cert.pem")" ]
check "gen-cert device id is the lowercase UUID" \
    [ "$(json_field "$WORK/trusted.id" deviceId)" = "8e3c4b9a-1d2e-4f5a-9b8c-7d6e5f4a3b2c" ]

echo "== server"
"$PY" "$PEER" server --host 127.0.0.1 --port 0 --cert "$WORK/server/cert.pem" --key "$WORK/server/key.pem" \
    --trusted "$CFP" >"$WORK/server.log" 2>"$WORK/server.err" &
SERVER_PID=$!
if ! wait_for "$WORK/server.log" '"event":"listening"' 15; then
    fail "server prints listening"
    cat "$WORK/server.err"
    echo "$PASSED passed, $FAILED failed"
    exit 1
fi
PORT=$(json_field "$WORK/server.log" port)
check "server listens on a picked port" [ "$PORT" -gt 0 ]
check "server prints its fingerprint" [ "$(json_field "$WORK/server.log" fingerprint)" = "$SFP" ]

echo "== trusted client"
client ping "${TRUSTED[@]}" --pin "$SFP" --send-json "$PING" --expect 1
check "trusted PING: exit 0" rc_is "$(o ping)" 0
check "trusted PING: handshake pinned, ALPN cribcall/1" \
    has "$(o ping)" "{\"event\":\"handshake\",\"serverFingerprint\":\"$SFP\",\"alpn\":\"cribcall/1\"}"
check "trusted PING: PONG with the same timestamp" \
    has "$(o ping)" '{"event":"frame","json":{"timestamp":123,"type":"PONG"}}'
check "trusted PING: server saw the client fingerprint, trusted" \
    has "$(s ping)" "{\"event\":\"connection\",\"clientFingerprint\":\"$CFP\",\"trusted\":true"
check "trusted PING: server printed the frame" has "$(s ping)" '"json":{"timestamp":123,"type":"PING"}'

client unknown "${TRUSTED[@]}" --pin "$SFP" --send-json '{"type":"NOPE"}' --send-json "$PING" --expect 2
check "trusted unknown type: ERROR 3, connection stays open (PONG follows)" \
    has "$(o unknown)" '"code":3,"error":"UNSUPPORTED_MESSAGE","inReplyTo":"NOPE"'
check "trusted unknown type: PONG after the ERROR" has "$(o unknown)" '"json":{"timestamp":123,"type":"PONG"}'
check "trusted unknown type: not closed by the server" lacks "$(o unknown)" '"byPeer":true'

"$PY" - "$WORK/big.args" <<'EOF'
import sys
head, tail = '{"pad":"', '","timestamp":7,"type":"PING"}'
text = head + "x" * (262144 - len(head) - len(tail)) + tail
assert len(text.encode()) == 262144
open(sys.argv[1], "w").write("--send-text\n" + text + "\n")
EOF
client big "${TRUSTED[@]}" --pin "$SFP" "@$WORK/big.args" --expect 1
check "262,144-byte frame (the maximum) is accepted: PONG" has "$(o big)" '"json":{"timestamp":7,"type":"PONG"}'

# expect_error NAME CODE NAME_OF_CODE: the client got ERROR CODE and an application close CODE.
expect_error() {
    local name=$1 code=$2 error=$3 what=$4
    check "$what: ERROR $code $error" has "$(o "$name")" "\"code\":$code,\"error\":\"$error\""
    check "$what: CONNECTION_CLOSE (application, 0x1d) code $code from the server" \
        has "$(o "$name")" "{\"event\":\"closed\",\"errorCode\":$code,\"frameType\":29,\"closeKind\":\"application\""
    check "$what: close observed as by peer" has "$(o "$name")" '"byPeer":true'
}

echo "== framing errors (trusted client)"
client zero "${TRUSTED[@]}" --pin "$SFP" --send-raw-hex 00000000 --expect 2
expect_error zero 1 PROTOCOL_ERROR "length 0"
client huge "${TRUSTED[@]}" --pin "$SFP" --send-raw-hex 00040001 --expect 2
expect_error huge 1 PROTOCOL_ERROR "length 262,145"
client notjson "${TRUSTED[@]}" --pin "$SFP" --send-text 'not json' --expect 2
expect_error notjson 1 PROTOCOL_ERROR "invalid JSON"
client badutf8 "${TRUSTED[@]}" --pin "$SFP" --send-raw-hex 00000002c328 --expect 2
expect_error badutf8 1 PROTOCOL_ERROR "invalid UTF-8"
client notype "${TRUSTED[@]}" --pin "$SFP" --send-json '{"type":5}' --expect 2
expect_error notype 1 PROTOCOL_ERROR "no string type"

echo "== untrusted client"
client untrusted "${UNTRUSTED[@]}" --pin "$SFP" --send-json "$PING" --expect 2
expect_error untrusted 2 UNAUTHORIZED "untrusted PING"
check "untrusted PING: ERROR names the PING" has "$(o untrusted)" '"inReplyTo":"PING"'
check "untrusted PING: exit 0" rc_is "$(o untrusted)" 0
check "untrusted PING: server marked it untrusted" has "$(s untrusted)" '"trusted":false'
client untrusted_unknown "${UNTRUSTED[@]}" --pin "$SFP" --send-json '{"type":"NOPE"}' --expect 2
expect_error untrusted_unknown 3 UNSUPPORTED_MESSAGE "untrusted unknown type"

echo "== refused connections"
client wrongpin "${TRUSTED[@]}" --pin "$CFP" --send-json "$PING" --expect 1
check "wrong pin: pin-mismatch event" \
    has "$(o wrongpin)" "{\"event\":\"pin-mismatch\",\"expected\":\"$CFP\",\"actual\":\"$SFP\"}"
check "wrong pin: exit 3" rc_is "$(o wrongpin)" 3
check "wrong pin: no handshake completed" lacks "$(o wrongpin)" '"event":"handshake"'
check "wrong pin: server printed no frame" lacks "$(s wrongpin)" '"event":"frame"'
check "wrong pin: server printed no connection" lacks "$(s wrongpin)" '"event":"connection"'
check "wrong pin: server saw the handshake aborted (bad_certificate 0x12a)" \
    has "$(s wrongpin)" '"event":"handshake-failed","errorCode":298'

client wrongalpn "${TRUSTED[@]}" --pin "$SFP" --alpn h3 --send-json "$PING" --expect 1
check "wrong ALPN: refused (exit 1)" rc_is "$(o wrongalpn)" 1
check "wrong ALPN: no_application_protocol (0x178)" has "$(o wrongalpn)" '"event":"closed","errorCode":376'
check "wrong ALPN: server printed no connection" lacks "$(s wrongalpn)" '"event":"connection"'

client noalpn "${TRUSTED[@]}" --pin "$SFP" --alpn '' --send-json "$PING" --expect 1
check "no ALPN: refused (exit 1)" rc_is "$(o noalpn)" 1
check "no ALPN: no_application_protocol (0x178)" has "$(o noalpn)" '"event":"closed","errorCode":376'
check "no ALPN: server printed no connection" lacks "$(s noalpn)" '"event":"connection"'

client nocert --no-cert --pin "$SFP" --send-json "$PING" --expect 1
check "no client certificate: refused (exit 1)" rc_is "$(o nocert)" 1
check "no client certificate: certificate_required (0x174)" has "$(o nocert)" '"event":"closed","errorCode":372'
check "no client certificate: server printed no connection" lacks "$(s nocert)" '"event":"connection"'
check "no client certificate: server printed no frame" lacks "$(s nocert)" '"event":"frame"'

echo "== concurrency"
for i in 1 2 3 4; do
    peer client --host 127.0.0.1 --port "$PORT" --timeout 15 "${TRUSTED[@]}" --pin "$SFP" \
        --send-json "{\"type\":\"PING\",\"timestamp\":$i}" --expect 1 >"$WORK/par$i.out" 2>&1 &
done
wait $(jobs -p | grep -v "^$SERVER_PID\$")
for i in 1 2 3 4; do
    check "parallel client $i: PONG $i" has "$WORK/par$i.out" "\"json\":{\"timestamp\":$i,\"type\":\"PONG\"}"
done

echo "== bench client against this server"
peer bench --target-host 127.0.0.1 --target-port "$PORT" --pin "$SFP" "${TRUSTED[@]}" \
    --connections 5 --frames 50 >"$WORK/bench.out" 2>&1
check "bench --target-host: prints the benchmark line" has "$WORK/bench.out" '{"event":"benchmark","impl":"aioquic"'

echo "== shutdown"
kill -TERM "$SERVER_PID"
n=0
while kill -0 "$SERVER_PID" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
if kill -0 "$SERVER_PID" 2>/dev/null; then
    fail "server exits on SIGTERM"
else
    wait "$SERVER_PID"
    check "server exits 0 on SIGTERM" [ $? -eq 0 ]
    check "server printed stopped" has "$WORK/server.log" '{"event":"stopped"}'
fi
SERVER_PID=""

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
