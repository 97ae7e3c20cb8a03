'use strict';
/**
 * node_server.js: a plain Node.js + ws implementation of the BeMyEars signaling protocol v1
 * (BEMYEARS-PROTOCOL.md of the shared design). It is the performance anchor that the Swift
 * `bemyears-server` is benchmarked against. The seed's backend was Node.js + ws, so this is written
 * the way a competent Node developer would write that backend for production: one process,
 * in-memory state, synchronous handlers (so every state change is atomic), one timer.
 *
 *   node node_server.js [--host 127.0.0.1] [--port 0] [--rate-limit 50]   (port 0: any free port;
 *   --rate-limit: messages per second per socket, bursts of twice that, as bemyears-server's option)
 *
 * It serves the WebSocket at /ws and `GET /health` (200 "ok\n"). Once listening it prints exactly one
 * line on stdout, {"event":"ready","port":N}. Nothing else goes to stdout; the few logs go to stderr.
 *
 * Things the anchor deliberately does not do (extensions of the Swift server): PRESENCE coalescing
 * (here there is one PRESENCE per change of the AVAILABLE set), TURN credentials (iceServers is []),
 * Origin checks, the 5 s write-stall bound, and a shared PostgreSQL store.
 *
 * Needs Debian's node-ws (`apt-get install node-ws`, ws 8.x). NodeSource's node does not search
 * /usr/share/nodejs, where Debian installs it, so that path is the fallback.
 */

const http = require('http');
const crypto = require('crypto');
const { performance } = require('perf_hooks');

let WebSocketServer;
try {
  ({ WebSocketServer } = require('ws'));
} catch (err) {
  if (err.code !== 'MODULE_NOT_FOUND') throw err;
  ({ WebSocketServer } = require('/usr/share/nodejs/ws'));
}

// ---------------------------------------------------------------------------------------------
// Protocol constants

const MAX_MESSAGE = 65536; // bytes per message; one more → ERROR PROTOCOL_ERROR, close 1009
// ws reads messages up to READ_LIMIT, so that we can answer the ERROR above; anything larger
// (one frame or fragments) is refused by ws itself with close 1009 without buffering it.
const READ_LIMIT = 2 * MAX_MESSAGE;
const HEARTBEAT_INTERVAL_SEC = 15;
const PRESENCE_TTL_MS = 20000; // no application message for this long → close 4001
const RING_MS = 10000; // CALL_REQUEST unanswered → RING_TIMEOUT
const ANSWER_MS = 10000; // no ANSWER relayed this long after accept → CONNECT_TIMEOUT
const VIDEO_MS = 20000; // no VIDEO_VISIBLE visible:true this long after the request → CONNECT_TIMEOUT
const REPORT_WINDOW_MS = 5 * 60 * 1000; // REPORT_ABUSE allowed this long after a call ended
let RATE_PER_MS = 50 / 1000; // token bucket: 50 messages per second (--rate-limit)...
let BURST = 100; // ...with a burst of twice that
const MAX_BUFFERED = 1 << 20; // a client with more than 1 MiB unsent is disconnected
const TICK_MS = 250; // the one timer: heartbeat expiry, call deadlines, pruning
const USERNAME_RULE = /^[A-Za-z0-9._-]{3,32}$/;
const USERNAME_TEXT = 'usernames are 3 to 32 characters of A-Z, a-z, 0-9, ".", "_" and "-"';

const CLOSE_PROTOCOL = 1002;
const CLOSE_TOO_BIG = 1009;
const CLOSE_EXPIRED = 4001;

// Frames that never change are serialized once, as Buffers (ws would encode a string on every send).
const frame = (message) => Buffer.from(JSON.stringify(message));
const HEARTBEAT_ACK = frame({ type: 'HEARTBEAT_ACK' });
const RATE_LIMITED = frame({ type: 'ERROR', payload: { code: 'RATE_LIMITED',
  message: 'Too many messages: at most 50 per second (bursts of 100). This one was dropped; slow down.' } });
const NOT_REGISTERED = frame({ type: 'ERROR', payload: { code: 'NOT_REGISTERED',
  message: 'Send REGISTER {payload:{username, role}} before anything else.' } });
const STATE_FRAMES = Object.fromEntries(['AVAILABLE', 'UNAVAILABLE', 'RINGING', 'IN_CALL']
  .map((state) => [state, frame({ type: 'STATE', payload: { state } })]));
const BUSY_PAYLOAD = { reason: 'NOT_AVAILABLE' };
const RINGING_PAYLOAD = { ringSec: RING_MS / 1000 };
const RELAYS = new Set(['OFFER', 'ANSWER', 'ICE', 'VIDEO_VISIBLE', 'STATS_UPDATE']);
const SERVER_ONLY = new Set(['REGISTERED', 'STATE', 'HEARTBEAT_ACK', 'PRESENCE', 'CALL_RINGING', 'BUSY',
  'CALL_ENDED', 'REPORT_RECEIVED', 'ERROR']);
const DECLINED = 'DECLINED'; // endCall's reason for a decline: CALL_DECLINE instead of CALL_ENDED
const TEXT = { binary: false }; // send a Buffer as a text frame

// ---------------------------------------------------------------------------------------------
// State (single process, in memory)

/** One WebSocket connection; registered once `name` is set. */
class Session {
  constructor(ws, t) {
    this.ws = ws;
    this.name = null; // lowercase username once registered
    this.role = null; // 'caller' | 'interpreter'
    this.state = 'UNAVAILABLE'; // interpreters: AVAILABLE | UNAVAILABLE | RINGING | IN_CALL
    this.call = null; // the live Call this session is a party of
    this.lastSeen = t; // performance.now() of the last application message
    this.tokens = BURST; // rate limit bucket
    this.refilledAt = t;
    this.gone = false; // dropped: closing or closed, no longer part of any state
  }
}

const sessions = new Set(); // every open connection, until its 'close' (the tick scans it for expiry)
const users = new Map(); // username → registered Session
const callers = new Set(); // registered callers: PRESENCE goes to each
const available = new Set(); // usernames of AVAILABLE interpreters
const calls = new Map(); // callId → live call {id, caller, interpreter, state, ringBy, answerBy, videoBy}
const ended = new Map(); // callId → {caller, interpreter, until}: ended calls, for REPORT_ABUSE (end order)
let presenceFrame = buildPresence(); // the current PRESENCE, serialized once per change
let presenceDirty = false; // the AVAILABLE set changed; publishPresence() sends it
let now = performance.now(); // the clock of the event being handled

// ---------------------------------------------------------------------------------------------
// Sending

/** Sends a JSON text (string or Buffer); a client that lets 1 MiB pile up is cut off. */
function send(s, data) {
  const ws = s.ws;
  if (ws.readyState !== 1 /* OPEN */) return;
  ws.send(data, TEXT);
  // terminate() makes the socket CLOSING at once; its 'close' event then drops the session, outside
  // whatever handler is sending now (so no state changes under its feet).
  if (ws.bufferedAmount > MAX_BUFFERED) ws.terminate();
}

function sendError(s, code, message, callId) {
  send(s, JSON.stringify({ type: 'ERROR', callId, payload: { code, message } }));
}

/** A user-supplied string quoted for an error message, kept short. */
function quoted(text) {
  return JSON.stringify(text.length > 64 ? text.slice(0, 64) + '…' : text);
}

function buildPresence() {
  // Usernames are ASCII, so the default (UTF-16 code unit) sort is byte order.
  const interpreters = Array.from(available).sort().map((username) => ({ username }));
  return frame({ type: 'PRESENCE', payload: { interpreters } });
}

/** One PRESENCE per change of the AVAILABLE set, the same Buffer to every caller. Called after
 * each event is handled, so CALL_ENDED / CALL_DECLINE always go out before it. */
function publishPresence() {
  if (!presenceDirty) return;
  presenceDirty = false;
  presenceFrame = buildPresence();
  for (const c of callers) send(c, presenceFrame);
}

/** Changes an interpreter's state, tells it (STATE), and notes a change of the AVAILABLE set. */
function setState(s, state) {
  const was = s.state === 'AVAILABLE';
  const is = state === 'AVAILABLE';
  s.state = state;
  send(s, STATE_FRAMES[state]);
  if (was !== is) {
    if (is) available.add(s.name);
    else available.delete(s.name);
    presenceDirty = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Session and call lifecycle

/** Removes a session from all state (idempotent). Its call ends with `reason`; the session itself
 * is told nothing (it is closing or closed). */
function drop(s, reason) {
  if (s.gone) return;
  s.gone = true;
  if (s.name === null) return;
  if (s.call !== null) endCall(s.call, reason, s);
  users.delete(s.name);
  if (s.role === 'caller') {
    callers.delete(s);
  } else if (s.state === 'AVAILABLE') {
    available.delete(s.name);
    presenceDirty = true;
  }
}

/** Closes a connection on the server's initiative, after an optional ERROR. */
function closeSession(s, closeCode, reason, errorMessage) {
  if (errorMessage !== undefined) sendError(s, 'PROTOCOL_ERROR', errorMessage);
  s.ws.close(closeCode, reason); // CLOSING from here on: nothing more is sent to it
  drop(s, closeCode === CLOSE_EXPIRED ? 'HEARTBEAT_EXPIRED' : 'DISCONNECTED');
}

/** Ends a live call: CALL_ENDED {reason} to both parties (or, for DECLINED, CALL_DECLINE to the
 * caller), then the interpreter back to AVAILABLE. `leaving` is a party that is going away. */
function endCall(call, reason, leaving) {
  const { caller, interpreter } = call;
  calls.delete(call.id);
  ended.set(call.id, { caller: caller.name, interpreter: interpreter.name, until: now + REPORT_WINDOW_MS });
  caller.call = null;
  interpreter.call = null;
  if (reason === DECLINED) {
    send(caller, JSON.stringify({ type: 'CALL_DECLINE', callId: call.id, from: interpreter.name, to: caller.name }));
  } else {
    const message = JSON.stringify({ type: 'CALL_ENDED', callId: call.id, payload: { reason } });
    if (caller !== leaving) send(caller, message);
    if (interpreter !== leaving) send(interpreter, message);
  }
  if (interpreter === leaving) interpreter.state = 'UNAVAILABLE'; // it is not in `available`
  else setState(interpreter, 'AVAILABLE');
}

/** The live call `m.callId` names, if the sender is a party of it; otherwise answers the error. */
function partyCall(s, m) {
  const id = m.callId;
  if (id === undefined) {
    sendError(s, 'PROTOCOL_ERROR', `${m.type} needs the "callId" of your call.`);
    return null;
  }
  const call = calls.get(id);
  if (call === undefined) {
    sendError(s, 'UNKNOWN_CALL', `There is no live call with callId ${quoted(id)}; it ended or never existed.`, id);
    return null;
  }
  if (call.caller !== s && call.interpreter !== s) {
    sendError(s, 'NOT_A_PARTY', 'You are not a party of this call; use the callId of your own call.', id);
    return null;
  }
  return call;
}

// ---------------------------------------------------------------------------------------------
// Incoming messages

function onMessage(s, data, isBinary) {
  if (s.gone) return; // frames that were already on their way when we closed
  now = performance.now();
  s.lastSeen = now; // any application message keeps the session alive

  // Rate limit: a token bucket per socket; a message without a token is dropped unread.
  let tokens = s.tokens + (now - s.refilledAt) * RATE_PER_MS;
  if (tokens > BURST) tokens = BURST;
  s.refilledAt = now;
  if (tokens < 1) {
    s.tokens = tokens;
    send(s, RATE_LIMITED);
    return;
  }
  s.tokens = tokens - 1;

  if (isBinary) {
    return closeSession(s, CLOSE_PROTOCOL, 'binary frame', 'Binary frames are not part of the protocol; send JSON text frames.');
  }
  if (data.length > MAX_MESSAGE) {
    return closeSession(s, CLOSE_TOO_BIG, 'message too big',
      `This message is ${data.length} bytes; messages are limited to ${MAX_MESSAGE} bytes.`);
  }
  let m;
  try {
    m = JSON.parse(data.toString());
  } catch (err) {
    return closeSession(s, CLOSE_PROTOCOL, 'not JSON',
      `This message is not valid JSON (${err.message}); send one JSON object per text frame.`);
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) {
    return closeSession(s, CLOSE_PROTOCOL, 'not an object', 'A message must be a JSON object like {"type":"HEARTBEAT"}.');
  }
  if (typeof m.type !== 'string') {
    return closeSession(s, CLOSE_PROTOCOL, 'no type', 'A message needs a string "type", e.g. {"type":"HEARTBEAT"}.');
  }

  // Envelope fields of the wrong JSON type: PROTOCOL_ERROR, the socket stays open. null = absent.
  if (m.callId === null) m.callId = undefined;
  if (m.to === null) m.to = undefined;
  if (m.payload === null) m.payload = undefined;
  const badField = (m.callId !== undefined && typeof m.callId !== 'string') ? 'callId'
    : (m.to !== undefined && typeof m.to !== 'string') ? 'to'
      : (m.payload !== undefined && (typeof m.payload !== 'object' || Array.isArray(m.payload))) ? 'payload' : null;
  if (badField !== null) {
    const kind = badField === 'payload' ? 'a JSON object' : 'a string';
    return sendError(s, 'PROTOCOL_ERROR', `"${badField}" of ${m.type} must be ${kind}.`);
  }

  try {
    dispatch(s, m);
  } catch (err) {
    // E.g. a payload nested too deeply for JSON.stringify: answer rather than crash the process.
    process.stderr.write(`node_server: ${m.type} from ${s.name}: ${err.message}\n`);
    sendError(s, 'INTERNAL_ERROR', `The server could not handle this ${m.type}; the message was dropped.`, m.callId);
  }
  publishPresence();
}

function dispatch(s, m) {
  const type = m.type;
  if (s.name === null && type !== 'REGISTER') return send(s, NOT_REGISTERED);
  switch (type) {
    case 'HEARTBEAT': return send(s, HEARTBEAT_ACK);
    case 'REGISTER': return register(s, m);
    case 'SET_STATE': return setOwnState(s, m);
    case 'CALL_REQUEST': return callRequest(s, m);
    case 'CALL_ACCEPT': return callAnswer(s, m, true);
    case 'CALL_DECLINE': return callAnswer(s, m, false);
    case 'HANGUP': return hangup(s, m);
    case 'REPORT_ABUSE': return reportAbuse(s, m);
    default:
      if (RELAYS.has(type)) return relay(s, m);
      if (SERVER_ONLY.has(type)) {
        return sendError(s, 'ROLE_FORBIDDEN', `${type} is sent by the server only; clients may not send it.`, m.callId);
      }
      return sendError(s, 'UNKNOWN_TYPE', `Unknown message type ${quoted(type)}; see the BeMyEars protocol for the types.`, m.callId);
  }
}

function register(s, m) {
  if (s.name !== null) return sendError(s, 'BAD_STATE', `This connection is already registered as "${s.name}".`);
  const p = m.payload;
  const username = p === undefined ? undefined : p.username;
  if (typeof username !== 'string' || !USERNAME_RULE.test(username)) {
    return sendError(s, 'INVALID_USERNAME', `Choose another username: ${USERNAME_TEXT}.`);
  }
  const role = p.role;
  if (role !== 'caller' && role !== 'interpreter') {
    return sendError(s, 'PROTOCOL_ERROR', 'REGISTER needs payload.role "caller" or "interpreter".');
  }
  const name = username.toLowerCase();
  if (users.has(name)) {
    return sendError(s, 'USERNAME_TAKEN', `The username "${name}" is in use by someone else; choose another.`);
  }
  s.name = name;
  s.role = role;
  users.set(name, s);
  send(s, JSON.stringify({ type: 'REGISTERED', payload: { username: name, role,
    heartbeatIntervalSec: HEARTBEAT_INTERVAL_SEC, presenceTtlSec: PRESENCE_TTL_MS / 1000, iceServers: [] } }));
  if (role === 'caller') {
    callers.add(s);
    send(s, presenceFrame);
  }
}

function setOwnState(s, m) {
  if (s.role !== 'interpreter') return sendError(s, 'ROLE_FORBIDDEN', 'Only interpreters go online or offline (SET_STATE).');
  const state = m.payload === undefined ? undefined : m.payload.state;
  if (state !== 'AVAILABLE' && state !== 'UNAVAILABLE') {
    return sendError(s, 'PROTOCOL_ERROR', 'SET_STATE needs payload.state "AVAILABLE" (Go Online) or "UNAVAILABLE" (Go Offline).');
  }
  if (s.call !== null) {
    return sendError(s, 'BAD_STATE', `You cannot go online or offline while ${s.state}; hang up first.`, s.call.id);
  }
  setState(s, state); // STATE again even when unchanged; PRESENCE only on a change
}

function callRequest(s, m) {
  if (s.role !== 'caller') return sendError(s, 'ROLE_FORBIDDEN', 'Only callers place calls (CALL_REQUEST).');
  if (m.to === undefined) {
    return sendError(s, 'PROTOCOL_ERROR', 'CALL_REQUEST needs "to": the username of an available interpreter.');
  }
  if (s.call !== null) {
    return sendError(s, 'BAD_STATE', 'You are already in a call (or ringing); hang up before placing another.', s.call.id);
  }
  const target = users.get(m.to.toLowerCase());
  if (target === undefined || target.role !== 'interpreter') {
    return sendError(s, 'UNKNOWN_USER', `There is no interpreter named ${quoted(m.to)}; pick one from the list.`);
  }
  if (target.state !== 'AVAILABLE') {
    // Carries the call the interpreter is in, if any (it lost the race to that one).
    const callId = target.call === null ? undefined : target.call.id;
    return send(s, JSON.stringify({ type: 'BUSY', callId, to: target.name, payload: BUSY_PAYLOAD }));
  }
  const id = crypto.randomUUID();
  const call = { id, caller: s, interpreter: target, state: 'RINGING',
    ringBy: now + RING_MS, answerBy: 0, videoBy: now + VIDEO_MS };
  calls.set(id, call);
  s.call = call;
  target.call = call;
  setState(target, 'RINGING'); // AVAILABLE → RINGING: STATE to the interpreter, PRESENCE after this handler
  send(target, JSON.stringify({ type: 'CALL_REQUEST', callId: id, from: s.name, to: target.name }));
  send(s, JSON.stringify({ type: 'CALL_RINGING', callId: id, to: target.name, payload: RINGING_PAYLOAD }));
}

/** CALL_ACCEPT (accept = true) or CALL_DECLINE from the interpreter of a ringing call. */
function callAnswer(s, m, accept) {
  if (s.role !== 'interpreter') {
    return sendError(s, 'ROLE_FORBIDDEN', `Only the interpreter answers a call (${m.type}).`, m.callId);
  }
  const call = partyCall(s, m);
  if (call === null) return;
  if (call.state !== 'RINGING') return sendError(s, 'BAD_STATE', 'This call was already accepted.', call.id);
  if (!accept) return endCall(call, DECLINED, null); // CALL_DECLINE to the caller, no CALL_ENDED
  call.state = 'IN_CALL';
  call.answerBy = now + ANSWER_MS;
  setState(s, 'IN_CALL');
  send(call.caller, JSON.stringify({ type: 'CALL_ACCEPT', callId: call.id, from: s.name, to: call.caller.name }));
}

function hangup(s, m) {
  const call = partyCall(s, m);
  if (call === null) return;
  const reason = m.payload !== undefined && m.payload.reason === 'WEBRTC_FAILED' ? 'WEBRTC_FAILED' : 'HANGUP';
  endCall(call, reason, null);
}

/** OFFER, ANSWER, ICE, VIDEO_VISIBLE, STATS_UPDATE: to the other party of an accepted call only. */
function relay(s, m) {
  const call = partyCall(s, m);
  if (call === null) return;
  if (call.state !== 'IN_CALL') {
    return sendError(s, 'BAD_STATE', `${m.type} is only allowed once the interpreter has accepted the call.`, call.id);
  }
  const other = call.caller === s ? call.interpreter : call.caller;
  const text = JSON.stringify({ type: m.type, callId: call.id, from: s.name, to: other.name, payload: m.payload });
  if (m.type === 'ANSWER') call.answerBy = 0;
  else if (m.type === 'VIDEO_VISIBLE' && m.payload !== undefined && m.payload.visible === true) call.videoBy = 0;
  send(other, text);
}

/** REPORT_ABUSE from a party, during the call or within 5 minutes after it ended. The free-text
 * reason is neither logged nor forwarded; the offender's identity is logged (seed 18.1). */
function reportAbuse(s, m) {
  const id = m.callId;
  if (id === undefined) return sendError(s, 'PROTOCOL_ERROR', 'REPORT_ABUSE needs the "callId" of the call.');
  let callerName;
  let interpreterName;
  const call = calls.get(id);
  if (call !== undefined) {
    callerName = call.caller.name;
    interpreterName = call.interpreter.name;
  } else {
    const record = ended.get(id);
    if (record === undefined || record.until <= now) {
      return sendError(s, 'UNKNOWN_CALL', `There is no call with callId ${quoted(id)} that can still be reported.`, id);
    }
    callerName = record.caller;
    interpreterName = record.interpreter;
  }
  if (s.name !== callerName && s.name !== interpreterName) {
    return sendError(s, 'NOT_A_PARTY', 'Only a party of a call can report it.', id);
  }
  const offender = s.name === callerName ? interpreterName : callerName;
  process.stderr.write(`${JSON.stringify({ event: 'abuse_report', callId: id, reporter: s.name, offender })}\n`);
  send(s, JSON.stringify({ type: 'REPORT_RECEIVED', callId: id }));
}

// ---------------------------------------------------------------------------------------------
// The one timer: heartbeat expiry, call deadlines, pruning of ended calls

function tick() {
  now = performance.now();
  for (const s of sessions) {
    if (!s.gone && now - s.lastSeen >= PRESENCE_TTL_MS) {
      closeSession(s, CLOSE_EXPIRED, 'no heartbeat for 20 s');
      publishPresence(); // one PRESENCE per change, as for any other event
    }
  }
  for (const call of calls.values()) {
    let reason = null;
    if (call.state === 'RINGING') {
      if (now >= call.ringBy) reason = 'RING_TIMEOUT';
    } else if ((call.answerBy !== 0 && now >= call.answerBy) || (call.videoBy !== 0 && now >= call.videoBy)) {
      reason = 'CONNECT_TIMEOUT';
    }
    if (reason !== null) {
      endCall(call, reason, null);
      publishPresence();
    }
  }
  for (const [id, record] of ended) { // in end order: stop at the first still reportable
    if (record.until > now) break;
    ended.delete(id);
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP and WebSocket servers

function parseArgs(argv) {
  const options = { host: '127.0.0.1', port: 0 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline !== undefined ? inline : argv[++i];
    if (flag === '--host' && value) options.host = value;
    else if (flag === '--port' && /^\d+$/.test(value || '')) options.port = Number(value);
    else if (flag === '--rate-limit' && /^[1-9]\d*$/.test(value || '')) options.rateLimit = Number(value);
    else {
      process.stderr.write('usage: node node_server.js [--host 127.0.0.1] [--port 0] [--rate-limit 50]\n');
      process.exit(2);
    }
  }
  return options;
}

function main() {
  const { host, port, rateLimit } = parseArgs(process.argv.slice(2));
  if (rateLimit) {
    RATE_PER_MS = rateLimit / 1000;
    BURST = 2 * rateLimit;
  }

  const server = http.createServer((req, res) => {
    const ok = req.url === '/health' && (req.method === 'GET' || req.method === 'HEAD');
    res.writeHead(ok ? 200 : 404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(ok ? 'ok\n' : 'not found\n');
  });
  // Upgrades to any path but /ws are refused by ws with 400.
  const wss = new WebSocketServer({ server, path: '/ws', maxPayload: READ_LIMIT, perMessageDeflate: false,
    clientTracking: false });

  wss.on('connection', (ws) => {
    const s = new Session(ws, performance.now());
    sessions.add(s);
    ws.on('message', (data, isBinary) => onMessage(s, data, isBinary));
    const gone = () => {
      now = performance.now();
      drop(s, 'DISCONNECTED');
      publishPresence();
    };
    ws.on('close', () => {
      sessions.delete(s);
      gone();
    });
    // ws closes by itself (e.g. 1009 for a message over READ_LIMIT, 1007 for bad UTF-8) and then
    // reports the cause here: the session is over from this moment.
    ws.on('error', gone);
  });

  const fatal = (err) => {
    process.stderr.write(`node_server: ${err.message}\n`);
    process.exit(1);
  };
  wss.on('error', fatal); // also the http server's errors (e.g. EADDRINUSE), re-emitted by ws

  const timer = setInterval(tick, TICK_MS);

  server.listen(port, host, () => {
    process.stdout.write(`${JSON.stringify({ event: 'ready', port: server.address().port })}\n`);
  });

  const shutdown = () => {
    clearInterval(timer);
    for (const s of sessions) s.ws.terminate();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main();
