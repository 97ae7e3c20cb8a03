// BeMyEars browser client: 1:1 video calls between deaf callers and sign-language interpreters.
//
// Wire contract: shared/design/BEMYEARS-PROTOCOL.md (signaling over ws(s)://<this host>/ws).
// Behaviour follows the iOS client of the seed (§12–14): remote video full screen, mirrored local preview as a
// draggable picture-in-picture that snaps to corners inside the safe area, "Hang up" as the only call control,
// a "Poor connection" warning from tunable thresholds, and the call state machine
// Idle → Registered → Calling → IncomingCall → Connecting → InCall → Ending.
//
// URL parameters (for tests and constrained links; none is needed in normal use):
//   relay=1        iceTransportPolicy "relay": media only through the TURN server from REGISTERED
//   video=WxH      ideal camera size, e.g. video=320x240 (default 1280x720)
//
// Test hook: window.bemyears is a frozen, read-only view of the client state (see `snapshot()` below).
// It holds no credentials and no addresses.
"use strict";

// ---------------------------------------------------------------------------------------------------------------
// Tunable constants

/** "Poor connection" warning (seed §13): sampled from RTCPeerConnection.getStats() once a second. */
const QUALITY = Object.freeze({
    SAMPLE_MS: 1000,
    POOR_LOSS: 0.05, // inbound RTP packets lost in one sample, fraction (5 %)
    POOR_RTT_MS: 400, // round-trip time of the selected ICE candidate pair
    POOR_FPS: 10, // inbound video frames decoded per second
    GOOD_LOSS: 0.02, // hysteresis: the warning clears only when every metric is back below these...
    GOOD_RTT_MS: 300,
    GOOD_FPS: 14,
    POOR_AFTER_SAMPLES: 3, // ...and only after this many bad samples in a row does it appear
    GOOD_AFTER_SAMPLES: 5, // ...and this many good samples in a row make it go away
    MIN_PACKETS: 20, // fewer packets in a sample say nothing about loss
    FPS_GRACE_MS: 3000, // after the first remote frame, give the decoder time before judging the frame rate
});

/** Media connection recovery. The caller is the offerer (it sends OFFER after CALL_ACCEPT), so only it restarts ICE. */
const ICE = Object.freeze({
    DISCONNECTED_GRACE_MS: 4000, // "disconnected" often heals by itself; restart only after this long
    RESTART_TIMEOUT_MS: 8000, // one ICE restart gets this long to reconnect
    MAX_RESTARTS: 2, // then HANGUP {reason: "WEBRTC_FAILED"}
    SERVERS_WAIT_MS: 1500, // a restart waits this long at most for fresh ICE servers (ICE_SERVERS)
    CONNECT_LIMIT_MS: 25000, // never connected this long after accept: give up (the server's limit is 20 s)
});

const SIGNALING = Object.freeze({
    CONNECT_TIMEOUT_MS: 8000, // WebSocket open
    REPLY_TIMEOUT_MS: 8000, // REGISTER, SET_STATE and CALL_REQUEST replies
    DEAD_AFTER_SILENCE_MS: 10000, // no message for heartbeat interval + this: the socket is dead, reconnect
    RECONNECT_FIRST_MS: 1000,
    RECONNECT_MAX_MS: 15000,
    USERNAME_TAKEN_RETRY_MS: 30000, // after a drop the old session may linger up to presenceTtlSec: keep trying
    DEFAULT_HEARTBEAT_SEC: 15,
});

const RING_SEC = 10;
const USERNAME_RE = /^[A-Za-z0-9._-]{3,32}$/;

// ---------------------------------------------------------------------------------------------------------------
// Configuration from the URL

const PARAMS = new URLSearchParams(location.search);
const RELAY_ONLY = PARAMS.get("relay") === "1";
const VIDEO_SIZE = (() => {
    const m = /^(\d{2,4})x(\d{2,4})$/.exec(PARAMS.get("video") || "");
    return m ? { width: Number(m[1]), height: Number(m[2]) } : { width: 1280, height: 720 };
})();

// ---------------------------------------------------------------------------------------------------------------
// DOM

const $ = (sel) => document.querySelector(sel);
const el = {
    status: $("#status"),
    views: {
        register: $("#view-register"),
        interpreter: $("#view-interpreter"),
        caller: $("#view-caller"),
        calling: $("#view-calling"),
        incoming: $("#view-incoming"),
        call: $("#view-call"),
    },
    form: $("#register-form"),
    username: $("#username"),
    usernameError: $("#username-error"),
    registerButton: $("#register-button"),
    toggle: $("#toggle-online"),
    interpreterState: $("#interpreter-state"),
    list: $("#interpreter-list"),
    noInterpreters: $("#no-interpreters"),
    callingSeconds: $("#calling-seconds"),
    cancel: $("#cancel-call"),
    incomingSeconds: $("#incoming-seconds"),
    accept: $("#accept-call"),
    decline: $("#decline-call"),
    remoteVideo: $("#remote-video"),
    localVideo: $("#local-video"),
    pip: $("#pip"),
    hangup: $("#hangup"),
    callOverlay: $("#call-overlay"),
    callPeer: $("#call-peer"),
    callPhase: $("#call-phase"),
    poorBanner: $("#poor-banner"),
    probe: $("#safe-area-probe"),
};

// ---------------------------------------------------------------------------------------------------------------
// State

const S = {
    registration: "unregistered", // unregistered | registering | registered | reconnecting
    username: null,
    role: null, // "caller" | "interpreter"
    interpreterState: null, // UNAVAILABLE | AVAILABLE | RINGING | IN_CALL (interpreters only, from STATE)
    heartbeatMs: SIGNALING.DEFAULT_HEARTBEAT_SEC * 1000,
    iceServers: [],
    interpreters: [], // AVAILABLE interpreters from the last PRESENCE (callers only)
    call: null, // the current call, see newCall()
    pendingToggle: null, // the SET_STATE we wait a STATE for
    lastError: null,
    lastCallEnd: null,
    lastCall: null, // summary of the previous call (for the test hook)
    reconnects: 0,
    heartbeatsSent: 0,
    view: null,
};

let ws = null;
let lastRxAt = 0;
let heartbeatTimer = null;
let reconnectTimer = null;
let reconnectAttempt = 0;
let droppedAt = 0; // when the registered session was lost (for USERNAME_TAKEN retries)
let replyTimer = null;
let titleTimer = null;
let statusFadeTimer = null;

// ---------------------------------------------------------------------------------------------------------------
// Status line (aria-live) and small helpers

/** Shows `text` in the status line, which is also the aria-live region that screen readers announce. */
function announce(text, { bad = false } = {}) {
    // Identical text is not re-announced by screen readers: alternate a trailing no-break space.
    el.status.textContent = text === el.status.textContent.trim() ? text + "\u00a0" : text;
    el.status.classList.toggle("bad", bad);
    el.status.classList.remove("faded");
    clearTimeout(statusFadeTimer);
    // In a call the status line fades after a while (it stays in the accessibility tree) so it does not cover
    // the signer; warnings stay.
    if (S.call && (S.call.phase === "in_call") && !bad) {
        statusFadeTimer = setTimeout(() => el.status.classList.add("faded"), 4000);
    }
}

function recordError(code, message, callId = null) {
    S.lastError = { code, message, callId, at: new Date().toISOString() };
}

function stopStream(stream) {
    if (stream) for (const t of stream.getTracks()) t.stop();
}

function cameraErrorText(e) {
    switch (e && e.name) {
        case "NotAllowedError":
            return "Camera and microphone are blocked. Allow them for this page and try again.";
        case "NotFoundError":
        case "OverconstrainedError":
            return "No camera or microphone was found.";
        case "NotReadableError":
            return "The camera or microphone is in use by another application.";
        case "InsecureContext":
            return e.message;
        default:
            return `The camera could not be started (${(e && e.message) || e}).`;
    }
}

async function getCamera() {
    if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
        const e = new Error("The camera only works when this page is opened over https:// (or on localhost).");
        e.name = "InsecureContext";
        throw e;
    }
    return navigator.mediaDevices.getUserMedia({
        video: {
            facingMode: "user", // front camera only (seed §12)
            width: { ideal: VIDEO_SIZE.width },
            height: { ideal: VIDEO_SIZE.height },
            frameRate: { ideal: 30 },
        },
        audio: { echoCancellation: true, noiseSuppression: true }, // audio is implicit with video (seed §2)
    });
}

// ---------------------------------------------------------------------------------------------------------------
// WebSocket signaling

function wsUrl() {
    return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

function send(msg) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(msg));
    return true;
}

function openSocket() {
    const sock = new WebSocket(wsUrl());
    ws = sock;
    const openTimer = setTimeout(() => {
        if (ws === sock && sock.readyState !== WebSocket.OPEN) dropSocket(4000, "could not connect");
    }, SIGNALING.CONNECT_TIMEOUT_MS);
    sock.onopen = () => {
        clearTimeout(openTimer);
        if (ws !== sock) return;
        lastRxAt = Date.now();
        sendRegister();
    };
    sock.onmessage = (ev) => {
        if (ws !== sock) return;
        lastRxAt = Date.now();
        onMessage(ev.data);
    };
    sock.onclose = (ev) => {
        clearTimeout(openTimer);
        if (ws !== sock) return;
        ws = null;
        onSocketClosed(ev.code, ev.reason);
    };
    sock.onerror = () => {}; // a close event always follows
}

/** Gives up on the current socket at once (a dead network may take minutes to report the close). */
function dropSocket(code, reason) {
    const sock = ws;
    if (!sock) return;
    ws = null;
    sock.onopen = sock.onmessage = sock.onclose = sock.onerror = null;
    try {
        sock.close(1000);
    } catch (_) {
        // already closing
    }
    onSocketClosed(code, reason);
}

function sendRegister() {
    S.registration = S.registration === "reconnecting" ? "reconnecting" : "registering";
    send({ type: "REGISTER", payload: { username: S.username, role: S.role } });
    clearTimeout(replyTimer);
    replyTimer = setTimeout(() => {
        if (S.registration !== "registered") dropSocket(4000, "no reply to REGISTER");
    }, SIGNALING.REPLY_TIMEOUT_MS);
    render();
}

function onSocketClosed(code, reason) {
    stopHeartbeat();
    clearTimeout(replyTimer);
    S.pendingToggle = null;
    const hadCall = !!S.call;
    if (S.call) {
        finishCall(S.call, {
            reason: "DISCONNECTED",
            text: "The connection to the server was lost, so the call ended.",
            bad: true,
        });
    }
    if (S.registration === "registered" || S.registration === "reconnecting") {
        const first = S.registration === "registered";
        if (first) droppedAt = Date.now();
        S.registration = "reconnecting";
        S.interpreterState = S.role === "interpreter" ? "UNAVAILABLE" : null;
        const why = code === 4001
            ? "The server ended the session because no heartbeat arrived in time."
            : first ? "The connection to the server was lost." : "The server cannot be reached yet.";
        scheduleReconnect(hadCall ? `${why} The call ended.` : why);
    } else if (S.registration === "registering") {
        S.registration = "unregistered";
        recordError("CONNECTION", `WebSocket closed (${code}${reason ? " " + reason : ""})`);
        showFormError("The server cannot be reached. Check your connection and press Register again.");
    }
    render();
}

function scheduleReconnect(why) {
    clearTimeout(reconnectTimer);
    reconnectAttempt += 1;
    const base = Math.min(SIGNALING.RECONNECT_MAX_MS, SIGNALING.RECONNECT_FIRST_MS * 2 ** (reconnectAttempt - 1));
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    announce(`${why} Reconnecting in ${Math.max(1, Math.round(delay / 1000))} s…`, { bad: true });
    reconnectTimer = setTimeout(reconnectNow, delay);
}

function reconnectNow() {
    clearTimeout(reconnectTimer);
    reconnectTimer = null;
    if (S.registration !== "reconnecting" || ws) return;
    S.reconnects += 1;
    announce("Reconnecting to the server…", { bad: true });
    openSocket();
}

function startHeartbeat() {
    stopHeartbeat();
    heartbeatTimer = setInterval(heartbeatTick, S.heartbeatMs);
}

function stopHeartbeat() {
    clearInterval(heartbeatTimer);
    heartbeatTimer = null;
}

function heartbeatTick() {
    if (Date.now() - lastRxAt > S.heartbeatMs + SIGNALING.DEAD_AFTER_SILENCE_MS) {
        dropSocket(4000, "no reply from the server");
        return;
    }
    if (send({ type: "HEARTBEAT" })) S.heartbeatsSent += 1;
}

// ---------------------------------------------------------------------------------------------------------------
// Incoming messages

function onMessage(raw) {
    let m;
    try {
        m = JSON.parse(raw);
    } catch (_) {
        return;
    }
    if (!m || typeof m !== "object" || typeof m.type !== "string") return;
    const p = m.payload && typeof m.payload === "object" ? m.payload : {};
    const call = S.call;
    const forThisCall = call && call.id && m.callId === call.id;
    switch (m.type) {
        case "REGISTERED": return onRegistered(p);
        case "ERROR": return onError(p.code, p.message, m.callId);
        case "HEARTBEAT_ACK": return;
        case "STATE": return onState(p.state);
        case "PRESENCE": return onPresence(p.interpreters);
        case "CALL_REQUEST": return onIncomingCall(m.callId, m.from, p.iceServers);
        case "CALL_RINGING": return onRinging(m.callId, m.to, p.ringSec, p.iceServers);
        case "ICE_SERVERS": return forThisCall && onFreshIceServers(call, p.iceServers);
        case "BUSY": return onBusy(m.to);
        case "CALL_ACCEPT": return forThisCall && onAccepted(call);
        case "CALL_DECLINE":
            if (forThisCall) {
                const text = call.cancelled ? "Call cancelled." : `${call.peer} declined the call.`;
                finishCall(call, { reason: "DECLINED", text });
            }
            return;
        case "CALL_ENDED": return forThisCall && onEnded(call, p.reason);
        case "OFFER":
        case "ANSWER":
        case "ICE":
            if (forThisCall) queueSignal(call, m.type, p);
            return;
        case "VIDEO_VISIBLE":
            if (forThisCall && p.visible === true && !call.peerVideoVisible) {
                call.peerVideoVisible = true;
                renderCall();
            }
            return;
        case "STATS_UPDATE":
            if (forThisCall && (p.quality === "poor" || p.quality === "good")) {
                onPeerQuality(call, p.quality === "poor");
            }
            return;
        default:
            return; // REPORT_RECEIVED and anything newer: nothing to do
    }
}

function onRegistered(p) {
    clearTimeout(replyTimer);
    const again = S.registration === "reconnecting";
    S.registration = "registered";
    S.username = p.username || S.username;
    S.role = p.role || S.role;
    S.heartbeatMs = Math.max(1, Number(p.heartbeatIntervalSec) || SIGNALING.DEFAULT_HEARTBEAT_SEC) * 1000;
    S.iceServers = Array.isArray(p.iceServers) ? p.iceServers : [];
    S.interpreterState = S.role === "interpreter" ? "UNAVAILABLE" : null; // interpreters always start UNAVAILABLE
    reconnectAttempt = 0;
    droppedAt = 0;
    startHeartbeat();
    hideFormError();
    render();
    if (S.role === "interpreter") {
        announce(again
            ? "Reconnected. You are offline: press Go Online to take calls again."
            : `Registered as ${S.username}. You are offline: press Go Online to take calls.`);
    } else {
        announce(again ? "Reconnected." : `Registered as ${S.username}.`);
    }
}

function onError(code, message, callId) {
    message = message || code || "Unknown error";
    recordError(code, message, callId || null);
    // 1. registration
    if (S.registration === "registering" || S.registration === "reconnecting") {
        if (code === "USERNAME_TAKEN" && S.registration === "reconnecting"
            && Date.now() - droppedAt < SIGNALING.USERNAME_TAKEN_RETRY_MS) {
            // Our old session has not expired yet: a failed REGISTER may be retried on the same socket.
            clearTimeout(replyTimer);
            announce("Reconnecting: waiting for the old session to expire…", { bad: true });
            setTimeout(() => { if (ws && S.registration === "reconnecting") sendRegister(); }, 3000);
            return;
        }
        if (code === "USERNAME_TAKEN" || code === "INVALID_USERNAME") {
            clearTimeout(replyTimer);
            S.registration = "unregistered";
            showFormError(code === "USERNAME_TAKEN"
                ? `The username ${S.username} is already in use. Choose another one.`
                : `The server did not accept this username: ${message}`);
            render();
            return;
        }
    }
    // 2. the SET_STATE we are waiting for
    if (S.pendingToggle && !callId && (code === "BAD_STATE" || code === "ROLE_FORBIDDEN")) {
        S.pendingToggle = null;
        clearTimeout(replyTimer);
        render();
        announce(`Your state could not be changed: ${message}`, { bad: true });
        return;
    }
    // 3. the call
    const call = S.call;
    if (call && !call.id && call.phase === "calling" && !callId
        && (code === "UNKNOWN_USER" || code === "BAD_STATE" || code === "ROLE_FORBIDDEN")) {
        finishCall(call, {
            reason: code,
            text: code === "UNKNOWN_USER"
                ? `${call.peer} is no longer online.`
                : `The call could not be placed: ${message}`,
            bad: true,
        });
        return;
    }
    if (call && callId && callId === call.id) {
        if (code === "UNKNOWN_CALL" || code === "NOT_A_PARTY") {
            finishCall(call, { reason: code, text: "The call has already ended.", bad: true });
        } else if (code === "BAD_STATE" && call.cancelled) {
            announce("The call cannot be cancelled yet; it stops ringing by itself.");
        }
        return;
    }
    if (callId) return; // a late error about a call that is already over
    if (code === "RATE_LIMITED") return;
    announce(`Server error: ${message}`, { bad: true });
}

function onState(state) {
    if (S.role !== "interpreter" || !state) return;
    const wanted = S.pendingToggle;
    S.interpreterState = state;
    if (wanted) {
        clearTimeout(replyTimer);
        S.pendingToggle = null;
        if (state === "AVAILABLE") announce("You are online. Callers can see you and call you.");
        else if (state === "UNAVAILABLE") announce("You are offline. Callers cannot see you.");
    }
    render();
}

function onPresence(list) {
    if (!Array.isArray(list)) return;
    S.interpreters = list.map((i) => i && i.username).filter((u) => typeof u === "string");
    renderInterpreterList();
}

// ---------------------------------------------------------------------------------------------------------------
// Registration and interpreter state (user actions)

function showFormError(text) {
    el.usernameError.textContent = text;
    el.usernameError.hidden = false;
    el.username.setAttribute("aria-invalid", "true");
    announce(text, { bad: true });
}

function hideFormError() {
    el.usernameError.hidden = true;
    el.usernameError.textContent = "";
    el.username.removeAttribute("aria-invalid");
}

function onRegisterSubmit(ev) {
    ev.preventDefault();
    if (S.registration === "registering") return;
    const name = el.username.value.trim();
    if (!USERNAME_RE.test(name)) {
        showFormError("Use 3 to 32 characters: letters, digits, dot, underscore or hyphen.");
        el.username.focus();
        return;
    }
    hideFormError();
    S.username = name;
    S.role = el.form.elements.role.value === "interpreter" ? "interpreter" : "caller";
    S.registration = "registering";
    announce("Registering…");
    if (ws && ws.readyState === WebSocket.OPEN) sendRegister();
    else if (!ws) openSocket();
    render();
}

async function onToggleOnline() {
    if (S.registration !== "registered" || S.role !== "interpreter" || S.pendingToggle) return;
    const want = S.interpreterState === "AVAILABLE" ? "UNAVAILABLE" : "AVAILABLE";
    if (want === "UNAVAILABLE" && S.interpreterState !== "AVAILABLE") return;
    S.pendingToggle = want;
    render();
    if (want === "AVAILABLE") {
        // Ask for the camera now, not when a call rings: an answer must not wait for a permission prompt.
        try {
            await ensureCameraPermission();
        } catch (e) {
            S.pendingToggle = null;
            render();
            recordError("CAMERA", cameraErrorText(e));
            announce(`${cameraErrorText(e)} You stay offline.`, { bad: true });
            return;
        }
        if (S.registration !== "registered" || S.interpreterState !== "UNAVAILABLE") {
            S.pendingToggle = null;
            render();
            return;
        }
    }
    send({ type: "SET_STATE", payload: { state: want } });
    clearTimeout(replyTimer);
    replyTimer = setTimeout(() => {
        if (S.pendingToggle) {
            S.pendingToggle = null;
            render();
            announce("The server did not confirm the change. Try again.", { bad: true });
        }
    }, SIGNALING.REPLY_TIMEOUT_MS);
}

async function ensureCameraPermission() {
    try {
        const [cam, mic] = await Promise.all([
            navigator.permissions.query({ name: "camera" }),
            navigator.permissions.query({ name: "microphone" }),
        ]);
        if (cam.state === "granted" && mic.state === "granted") return;
    } catch (_) {
        // Permissions API without camera/microphone: just ask
    }
    stopStream(await getCamera());
}

// ---------------------------------------------------------------------------------------------------------------
// Calls: ringing

function newCall(direction, peer) {
    return {
        id: null,
        peer,
        direction, // "outgoing" (we are the caller) | "incoming" (we are the interpreter)
        phase: direction === "outgoing" ? "calling" : "incoming", // calling | incoming | connecting | in_call
        ringDeadline: 0,
        cancelled: false,
        accepting: false,
        localHangup: false,
        localStream: null,
        remoteStream: null,
        pc: null,
        iceServers: null, // this call's own servers (fresh TURN credentials), else REGISTERED's
        chain: Promise.resolve(),
        early: [],
        pendingIce: [],
        acceptedAt: 0,
        firstFrameAt: 0,
        everConnected: false,
        restarts: 0,
        restarting: false,
        videoVisibleSent: false,
        peerVideoVisible: false,
        poor: false,
        peerPoor: false,
        quality: { badRun: 0, goodRun: 0, prev: null, lossPct: null, rttMs: null, fps: null },
        stats: { framesDecoded: 0, candidatePair: null, iceConnectionState: "new", connectionState: "new" },
        timers: {},
        statsTimer: null,
    };
}

function clearCallTimers(call) {
    for (const k of Object.keys(call.timers)) {
        clearTimeout(call.timers[k]);
        clearInterval(call.timers[k]);
    }
    call.timers = {};
    clearInterval(call.statsTimer);
    call.statsTimer = null;
}

function startCountdown(call, seconds, out) {
    call.ringDeadline = performance.now() + seconds * 1000;
    const tick = () => {
        const left = Math.max(0, Math.ceil((call.ringDeadline - performance.now()) / 1000));
        out.textContent = String(left);
        if (left === 0 && !call.timers.ringGrace) {
            // The server ends an unanswered call (RING_TIMEOUT); should that message never come, stop anyway.
            call.timers.ringGrace = setTimeout(() => {
                if (S.call === call && (call.phase === "calling" || call.phase === "incoming")) {
                    finishCall(call, { reason: "RING_TIMEOUT", text: ringTimeoutText(call) });
                }
            }, 4000);
        }
    };
    tick();
    call.timers.countdown = setInterval(tick, 250);
}

function ringTimeoutText(call) {
    return call.direction === "outgoing"
        ? `${call.peer} did not answer within ${RING_SEC} seconds.`
        : `Missed call from ${call.peer}.`;
}

/** Caller: "Call <username>". Starts the camera first, so nobody is rung when our camera cannot work. */
async function startCall(peer) {
    if (S.registration !== "registered" || S.role !== "caller" || S.call) return;
    const call = (S.call = newCall("outgoing", peer));
    el.callingSeconds.textContent = String(RING_SEC);
    render();
    announce(`Starting your camera to call ${peer}…`);
    try {
        call.localStream = await getCamera();
    } catch (e) {
        recordError("CAMERA", cameraErrorText(e));
        if (S.call === call) finishCall(call, { reason: "CAMERA", text: cameraErrorText(e), bad: true });
        return;
    }
    if (S.call !== call) return stopStream(call.localStream);
    if (call.cancelled) return finishCall(call, { reason: "CANCELLED", text: "Call cancelled." });
    if (!send({ type: "CALL_REQUEST", to: peer })) {
        return finishCall(call, { reason: "DISCONNECTED", text: "Not connected to the server.", bad: true });
    }
    call.requestSent = true;
    announce(`Calling ${peer}…`);
    call.timers.request = setTimeout(() => {
        if (S.call === call && !call.id) {
            finishCall(call, { reason: "NO_REPLY", text: "The server did not answer the call request.", bad: true });
        }
    }, SIGNALING.REPLY_TIMEOUT_MS);
}

function onRinging(callId, to, ringSec, iceServers) {
    const call = S.call;
    if (!call || call.direction !== "outgoing" || call.id || !callId) return;
    clearTimeout(call.timers.request);
    call.id = callId;
    if (Array.isArray(iceServers)) call.iceServers = iceServers; // fresh TURN credentials for this call
    if (to) call.peer = to;
    if (call.cancelled) {
        send({ type: "HANGUP", callId });
        return;
    }
    const seconds = Number(ringSec) > 0 ? Number(ringSec) : RING_SEC;
    startCountdown(call, seconds, el.callingSeconds);
    render();
    announce(`Ringing ${call.peer}. Waiting up to ${seconds} seconds for an answer.`);
}

function onBusy(to) {
    const call = S.call;
    if (!call || call.direction !== "outgoing" || call.id) return;
    finishCall(call, {
        reason: "BUSY",
        text: call.cancelled
            ? "Call cancelled."
            : `${to || call.peer} is not available right now (busy, or just went offline).`,
    });
}

function onCancel() {
    const call = S.call;
    if (!call || call.direction !== "outgoing" || call.phase !== "calling" || call.cancelled) return;
    call.cancelled = true;
    call.localHangup = true;
    render();
    announce("Cancelling the call…");
    // Without a callId yet: startCall() finishes the call once the camera answered (request not sent), or
    // onRinging() hangs up as soon as CALL_RINGING names it, or BUSY/ERROR ends it.
    if (call.id) send({ type: "HANGUP", callId: call.id });
}

/** Interpreter: CALL_REQUEST. Visual ring (pulse, flashing page and title, vibration), 10 s countdown. */
function onIncomingCall(callId, from, iceServers) {
    if (!callId || S.role !== "interpreter") return;
    if (S.call) {
        send({ type: "CALL_DECLINE", callId }); // cannot happen with a correct server; never ring twice
        return;
    }
    const call = (S.call = newCall("incoming", from || "a caller"));
    call.id = callId;
    if (Array.isArray(iceServers)) call.iceServers = iceServers; // fresh TURN credentials for this call
    startCountdown(call, RING_SEC, el.incomingSeconds);
    startVisualRing();
    render();
    announce(`Incoming call from ${call.peer}. Accept or Decline within ${RING_SEC} seconds.`);
}

function startVisualRing() {
    document.body.classList.add("incoming-flash");
    let on = false;
    clearInterval(titleTimer);
    titleTimer = setInterval(() => {
        on = !on;
        document.title = on ? "● Incoming call — BeMyEars" : "Incoming call — BeMyEars";
    }, 500);
    if (navigator.vibrate) navigator.vibrate([400, 200, 400, 200, 400, 200, 400, 200, 400]);
}

function stopVisualRing() {
    document.body.classList.remove("incoming-flash");
    clearInterval(titleTimer);
    titleTimer = null;
    document.title = "BeMyEars";
    if (navigator.vibrate) navigator.vibrate(0);
}

async function onAccept() {
    const call = S.call;
    if (!call || call.phase !== "incoming" || call.accepting) return;
    call.accepting = true;
    render();
    announce("Starting your camera…");
    try {
        call.localStream = await getCamera();
    } catch (e) {
        recordError("CAMERA", cameraErrorText(e));
        if (S.call === call && call.phase === "incoming") {
            send({ type: "CALL_DECLINE", callId: call.id });
            finishCall(call, { reason: "CAMERA", text: `${cameraErrorText(e)} The call was declined.`, bad: true });
        }
        return;
    }
    if (S.call !== call || call.phase !== "incoming") return stopStream(call.localStream);
    if (!send({ type: "CALL_ACCEPT", callId: call.id })) {
        return finishCall(call, { reason: "DISCONNECTED", text: "Not connected to the server.", bad: true });
    }
    call.acceptedAt = performance.now();
    stopVisualRing();
    beginConnecting(call); // the caller sends the OFFER once our CALL_ACCEPT reaches it
}

function onDecline() {
    const call = S.call;
    if (!call || call.phase !== "incoming" || call.accepting) return;
    send({ type: "CALL_DECLINE", callId: call.id });
    finishCall(call, { reason: "DECLINED", text: `You declined the call from ${call.peer}.` });
}

/** Caller: CALL_ACCEPT. We are the offerer. */
function onAccepted(call) {
    if (call.direction !== "outgoing" || call.phase !== "calling") return;
    if (call.cancelled) {
        send({ type: "HANGUP", callId: call.id }); // accepted while we were cancelling: end it now
        return;
    }
    call.acceptedAt = performance.now();
    beginConnecting(call);
    makeOffer(call, false);
}

function onEnded(call, reason) {
    const peer = call.peer;
    const ringing = call.phase === "calling" || call.phase === "incoming";
    let text;
    let bad = true;
    switch (reason) {
        case "HANGUP":
            bad = false;
            if (call.phase === "incoming") text = `Missed call: ${peer} cancelled the call.`;
            else text = call.localHangup ? "You hung up." : `${peer} hung up.`;
            break;
        case "RING_TIMEOUT":
            text = ringTimeoutText(call);
            break;
        case "CONNECT_TIMEOUT":
            text = "The video connection could not be set up in time. Please try again.";
            break;
        case "WEBRTC_FAILED":
            text = "The video connection failed. Please try again.";
            break;
        case "HEARTBEAT_EXPIRED":
            text = `${peer} lost the connection to the server.`;
            break;
        case "DISCONNECTED":
            text = `${peer} disconnected.`;
            break;
        default:
            text = `The call ended (${reason || "no reason given"}).`;
    }
    if (call.cancelled) {
        text = "Call cancelled.";
        bad = false;
    } else if (!ringing) {
        text = `Call ended. ${text}`;
    }
    finishCall(call, { reason: reason || "UNKNOWN", text, bad });
}

// ---------------------------------------------------------------------------------------------------------------
// Calls: WebRTC

function beginConnecting(call) {
    call.phase = "connecting";
    const pc = (call.pc = new RTCPeerConnection({
        iceServers: call.iceServers || S.iceServers,
        iceTransportPolicy: RELAY_ONLY ? "relay" : "all",
        bundlePolicy: "max-bundle",
    }));
    for (const track of call.localStream.getTracks()) pc.addTrack(track, call.localStream);
    pc.onicecandidate = (e) => {
        if (e.candidate && S.call === call) {
            send({ type: "ICE", callId: call.id, payload: { candidate: e.candidate.toJSON() } });
        }
    };
    pc.onicecandidateerror = (e) => {
        // Chrome reports every unreachable STUN/TURN address here; kept for diagnosis only (e.g. TURN 401).
        if (e.errorCode !== 701) {
            recordError("ICE_CANDIDATE", `${e.url || ""} ${e.errorCode} ${e.errorText || ""}`.trim(), call.id);
        }
    };
    pc.ontrack = (e) => onRemoteTrack(call, e);
    pc.oniceconnectionstatechange = () => onIceState(call);
    pc.onconnectionstatechange = () => {
        call.stats.connectionState = pc.connectionState;
        if (pc.connectionState === "failed") onIceTrouble(call);
    };
    el.localVideo.srcObject = call.localStream;
    el.localVideo.play().catch(() => {});
    call.statsTimer = setInterval(() => sampleStats(call), QUALITY.SAMPLE_MS);
    call.timers.connectLimit = setTimeout(() => {
        if (S.call === call && !call.firstFrameAt) giveUp(call, "The video connection could not be set up.");
    }, ICE.CONNECT_LIMIT_MS);
    render();
    announce(`Connecting to ${call.peer}…`);
    for (const m of call.early.splice(0)) queueSignal(call, m.type, m.payload);
}

/** Signaling for one call is handled strictly in order, so a candidate never races its description. */
function queueSignal(call, type, payload) {
    if (!call.pc) {
        call.early.push({ type, payload });
        return;
    }
    call.chain = call.chain
        .then(() => handleSignal(call, type, payload))
        .catch((e) => recordError("SIGNALING", `${type}: ${e && e.message ? e.message : e}`, call.id));
}

function sdpOf(payload) {
    const s = payload.sdp;
    return typeof s === "string" ? s : s && typeof s.sdp === "string" ? s.sdp : null;
}

function candidateOf(payload) {
    const c = payload.candidate;
    if (c && typeof c === "object" && typeof c.candidate === "string") return c;
    if (typeof c === "string") {
        // lenient: a bare candidate line with sdpMid / sdpMLineIndex beside it
        return { candidate: c, sdpMid: payload.sdpMid ?? null, sdpMLineIndex: payload.sdpMLineIndex ?? 0 };
    }
    return null;
}

async function handleSignal(call, type, payload) {
    const pc = call.pc;
    if (S.call !== call || !pc || pc.signalingState === "closed") return;
    if (type === "OFFER") {
        const sdp = sdpOf(payload);
        if (!sdp) return;
        await pc.setRemoteDescription({ type: "offer", sdp });
        await flushIce(call);
        await pc.setLocalDescription(await pc.createAnswer());
        send({ type: "ANSWER", callId: call.id, payload: { sdp: pc.localDescription.sdp } });
    } else if (type === "ANSWER") {
        const sdp = sdpOf(payload);
        if (!sdp || pc.signalingState !== "have-local-offer") return;
        await pc.setRemoteDescription({ type: "answer", sdp });
        await flushIce(call);
    } else if (type === "ICE") {
        const c = candidateOf(payload);
        if (!c) return;
        if (pc.remoteDescription) await addCandidate(call, c);
        else call.pendingIce.push(c);
    }
}

async function flushIce(call) {
    for (const c of call.pendingIce.splice(0)) await addCandidate(call, c);
}

async function addCandidate(call, c) {
    try {
        await call.pc.addIceCandidate(c);
    } catch (e) {
        // e.g. a candidate of the ICE generation before a restart: harmless
        recordError("ICE_CANDIDATE", `addIceCandidate: ${e && e.message ? e.message : e}`, call.id);
    }
}

function makeOffer(call, iceRestart) {
    call.chain = call.chain
        .then(async () => {
            const pc = call.pc;
            if (S.call !== call || !pc || pc.signalingState === "closed") return;
            if (pc.signalingState === "have-local-offer") await pc.setLocalDescription({ type: "rollback" });
            await pc.setLocalDescription(await pc.createOffer({ iceRestart }));
            send({ type: "OFFER", callId: call.id, payload: { sdp: pc.localDescription.sdp } });
        })
        .catch((e) => recordError("SIGNALING", `OFFER: ${e && e.message ? e.message : e}`, call.id));
}

function onRemoteTrack(call, e) {
    if (S.call !== call) return;
    if (!call.remoteStream) {
        call.remoteStream = e.streams[0] || new MediaStream();
        el.remoteVideo.srcObject = call.remoteStream;
    }
    if (!call.remoteStream.getTracks().includes(e.track)) call.remoteStream.addTrack(e.track);
    playRemote();
    if (e.track.kind === "video") watchFirstFrame(call);
}

function playRemote() {
    el.remoteVideo.play().catch((err) => {
        if (err && err.name === "NotAllowedError" && !el.remoteVideo.muted) {
            // Autoplay with sound refused: the picture matters most, so play it muted.
            el.remoteVideo.muted = true;
            el.remoteVideo.play().catch(() => {});
        }
    });
}

/** VIDEO_VISIBLE is sent once the remote video has actually rendered a frame, not when the track arrived. */
function watchFirstFrame(call) {
    const v = el.remoteVideo;
    if (typeof v.requestVideoFrameCallback === "function") {
        v.requestVideoFrameCallback(() => onFirstFrame(call));
    } else {
        const check = () => {
            if (S.call !== call || call.firstFrameAt) return;
            if (v.videoWidth > 0 && !v.paused) onFirstFrame(call);
            else setTimeout(check, 100);
        };
        v.addEventListener("playing", check, { once: true });
    }
}

function onFirstFrame(call) {
    if (S.call !== call || call.firstFrameAt) return;
    call.firstFrameAt = performance.now();
    call.phase = "in_call";
    clearTimeout(call.timers.connectLimit);
    call.videoVisibleSent = send({ type: "VIDEO_VISIBLE", callId: call.id, payload: { visible: true } });
    // name and phase fade out of the signer's way (the status line says it all); warnings stay visible
    call.timers.overlayFade = setTimeout(() => el.callOverlay.classList.add("faded"), 4000);
    render();
    announce(`Connected to ${call.peer}.`);
}

function onIceState(call) {
    const pc = call.pc;
    if (S.call !== call || !pc) return;
    const st = pc.iceConnectionState;
    call.stats.iceConnectionState = st;
    if (st === "connected" || st === "completed") {
        call.everConnected = true;
        for (const k of ["disconnected", "restartWait", "giveUp"]) {
            clearTimeout(call.timers[k]);
            delete call.timers[k];
        }
        if (call.restarting) {
            call.restarting = false;
            announce("The connection is back.");
        }
        renderCall();
    } else if (st === "disconnected") {
        if (!call.timers.disconnected) {
            call.timers.disconnected = setTimeout(() => {
                delete call.timers.disconnected;
                if (S.call === call && call.pc && call.pc.iceConnectionState !== "connected"
                    && call.pc.iceConnectionState !== "completed") onIceTrouble(call);
            }, ICE.DISCONNECTED_GRACE_MS);
        }
        renderCall();
    } else if (st === "failed") {
        onIceTrouble(call);
    }
}

/**
 * The media path is broken. The caller (the offerer) restarts ICE up to ICE.MAX_RESTARTS times; the interpreter
 * waits for those restarts. When nothing brings it back: HANGUP {reason: "WEBRTC_FAILED"}.
 */
function onIceTrouble(call) {
    if (S.call !== call || !call.pc) return;
    if (call.direction === "outgoing") {
        if (call.timers.restartWait) return; // a restart is under way
        if (call.restarts >= ICE.MAX_RESTARTS) return giveUp(call, "The video connection failed.");
        call.restarts += 1;
        call.restarting = true;
        announce("The connection was interrupted. Trying to reconnect…", { bad: true });
        // Fresh servers first (the call may have outlived its TURN credentials); restart when they arrive, or
        // with the old ones if the server does not answer soon.
        call.awaitingIceServers = true;
        send({ type: "ICE_SERVERS", callId: call.id });
        call.timers.iceServers = setTimeout(() => onFreshIceServers(call, null), ICE.SERVERS_WAIT_MS);
        call.timers.restartWait = setTimeout(() => {
            delete call.timers.restartWait;
            const st = call.pc && call.pc.iceConnectionState;
            if (S.call === call && st !== "connected" && st !== "completed") onIceTrouble(call);
        }, ICE.RESTART_TIMEOUT_MS);
    } else if (!call.timers.giveUp) {
        call.restarting = true;
        send({ type: "ICE_SERVERS", callId: call.id }); // ready for the caller's restart with fresh credentials
        announce("The connection was interrupted. Trying to reconnect…", { bad: true });
        call.timers.giveUp = setTimeout(() => {
            const st = call.pc && call.pc.iceConnectionState;
            if (S.call === call && st !== "connected" && st !== "completed") {
                giveUp(call, "The video connection failed.");
            }
        }, ICE.DISCONNECTED_GRACE_MS + ICE.MAX_RESTARTS * ICE.RESTART_TIMEOUT_MS + 2000);
    }
}

/** ICE_SERVERS answered (or not, `servers` null): use them from now on, and restart ICE if that waited for them. */
function onFreshIceServers(call, servers) {
    if (S.call !== call || !call.pc) return;
    if (Array.isArray(servers)) {
        call.iceServers = servers;
        try {
            call.pc.setConfiguration({ ...call.pc.getConfiguration(), iceServers: servers });
        } catch (e) {
            recordError("SIGNALING", `ICE_SERVERS: ${e && e.message ? e.message : e}`, call.id);
        }
    }
    if (call.awaitingIceServers) {
        call.awaitingIceServers = false;
        clearTimeout(call.timers.iceServers);
        delete call.timers.iceServers;
        makeOffer(call, true);
    }
}

function giveUp(call, text) {
    if (S.call !== call) return;
    send({ type: "HANGUP", callId: call.id, payload: { reason: "WEBRTC_FAILED" } });
    finishCall(call, { reason: "WEBRTC_FAILED", text: `Call ended. ${text} Please try again.`, bad: true });
}

function onHangup() {
    const call = S.call;
    if (!call || (call.phase !== "connecting" && call.phase !== "in_call")) return;
    call.localHangup = true;
    send({ type: "HANGUP", callId: call.id });
    finishCall(call, { reason: "HANGUP", text: "Call ended. You hung up." });
}

/** Ends the call on this side: media stopped, view back home, the reason shown and announced. */
function finishCall(call, { reason, text, bad = false }) {
    if (S.call !== call) return;
    clearCallTimers(call);
    stopVisualRing();
    if (call.pc) {
        call.pc.onicecandidate = call.pc.ontrack = call.pc.oniceconnectionstatechange = null;
        call.pc.onconnectionstatechange = call.pc.onicecandidateerror = null;
        call.pc.close();
    }
    stopStream(call.localStream);
    el.remoteVideo.srcObject = null;
    el.localVideo.srcObject = null;
    el.callOverlay.classList.remove("faded");
    el.remoteVideo.muted = false;
    S.lastCall = callSummary(call);
    S.lastCallEnd = { callId: call.id, peer: call.peer, reason, text, at: new Date().toISOString() };
    S.call = null;
    render();
    announce(text, { bad });
}

// ---------------------------------------------------------------------------------------------------------------
// Connection quality (seed §13)

async function sampleStats(call) {
    const pc = call.pc;
    if (S.call !== call || !pc || pc.signalingState === "closed") return;
    let report;
    try {
        report = await pc.getStats();
    } catch (_) {
        return;
    }
    if (S.call !== call) return;
    const byId = new Map();
    let video = null;
    let transport = null;
    let received = 0;
    let lost = 0;
    report.forEach((r) => {
        byId.set(r.id, r);
        if (r.type === "inbound-rtp") {
            received += r.packetsReceived || 0;
            lost += Math.max(0, r.packetsLost || 0);
            if (r.kind === "video") video = r;
        } else if (r.type === "transport" && !transport) {
            transport = r;
        }
    });
    let pair = transport && transport.selectedCandidatePairId ? byId.get(transport.selectedCandidatePairId) : null;
    if (!pair) {
        report.forEach((r) => {
            if (!pair && r.type === "candidate-pair" && r.nominated && r.state === "succeeded") pair = r;
        });
    }
    const now = performance.now();
    const framesDecoded = video ? video.framesDecoded || 0 : 0;
    call.stats.framesDecoded = framesDecoded;
    if (pair) {
        const local = byId.get(pair.localCandidateId) || {};
        const remote = byId.get(pair.remoteCandidateId) || {};
        call.stats.candidatePair = {
            local: local.candidateType || null,
            remote: remote.candidateType || null,
            protocol: local.protocol || null,
            relayProtocol: local.relayProtocol || null,
        };
    }

    // quality metrics over the last sample
    const q = call.quality;
    const prev = q.prev;
    q.prev = { at: now, received, lost, framesDecoded };
    if (!prev) return;
    const dt = (now - prev.at) / 1000;
    const dRecv = received - prev.received;
    const dLost = lost - prev.lost;
    const loss = dRecv + dLost >= QUALITY.MIN_PACKETS ? Math.max(0, dLost) / (dRecv + Math.max(0, dLost)) : null;
    const rtt = pair && typeof pair.currentRoundTripTime === "number" ? pair.currentRoundTripTime * 1000 : null;
    const fpsValid = call.firstFrameAt > 0 && now - call.firstFrameAt > QUALITY.FPS_GRACE_MS && dt > 0;
    const fps = fpsValid ? (framesDecoded - prev.framesDecoded) / dt : null;
    q.lossPct = loss === null ? null : Math.round(loss * 1000) / 10;
    q.rttMs = rtt === null ? null : Math.round(rtt);
    q.fps = fps === null ? null : Math.round(fps * 10) / 10;
    const st = pc.iceConnectionState;
    if (call.phase !== "in_call" || (st !== "connected" && st !== "completed")) return; // interruptions: onIceState

    const bad = (loss !== null && loss > QUALITY.POOR_LOSS)
        || (rtt !== null && rtt > QUALITY.POOR_RTT_MS)
        || (fps !== null && fps < QUALITY.POOR_FPS);
    const good = (loss === null || loss < QUALITY.GOOD_LOSS)
        && (rtt === null || rtt < QUALITY.GOOD_RTT_MS)
        && (fps === null || fps >= QUALITY.GOOD_FPS);
    if (!call.poor) {
        q.badRun = bad ? q.badRun + 1 : 0;
        if (q.badRun >= QUALITY.POOR_AFTER_SAMPLES) setPoor(call, true);
    } else {
        q.goodRun = good ? q.goodRun + 1 : 0;
        if (q.goodRun >= QUALITY.GOOD_AFTER_SAMPLES) setPoor(call, false);
    }
}

function setPoor(call, poor) {
    call.poor = poor;
    call.quality.badRun = 0;
    call.quality.goodRun = 0;
    // Tell the other party only the verdict: no addresses, no raw media statistics (seed §18.2).
    send({ type: "STATS_UPDATE", callId: call.id, payload: { quality: poor ? "poor" : "good" } });
    renderCall();
    if (poor) announce("Poor connection: the video may freeze or blur.", { bad: true });
    else announce("The connection is good again.");
}

function onPeerQuality(call, poor) {
    if (call.peerPoor === poor) return;
    call.peerPoor = poor;
    renderCall();
    if (poor) {
        announce(`Poor connection on ${call.peer}'s side: your video may reach them frozen or blurred.`, { bad: true });
    }
    else announce(`${call.peer}'s connection is good again.`);
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering

function currentView() {
    if (S.registration === "unregistered" || (S.registration === "registering" && !S.lastRegistered)) return "register";
    const c = S.call;
    if (c) {
        if (c.phase === "calling") return "calling";
        if (c.phase === "incoming") return "incoming";
        return "call";
    }
    return S.role === "interpreter" ? "interpreter" : "caller";
}

function render() {
    if (S.registration === "registered") S.lastRegistered = true;
    if (S.registration === "unregistered") S.lastRegistered = false;
    const view = currentView();
    const changed = view !== S.view;
    S.view = view;
    for (const [name, node] of Object.entries(el.views)) node.hidden = name !== view;
    document.body.classList.toggle("in-call", view === "call");

    const connected = S.registration === "registered";
    // aria-disabled / readOnly rather than disabled: a disabled control would drop keyboard and switch focus
    el.registerButton.setAttribute("aria-disabled", String(S.registration === "registering"));
    el.username.readOnly = S.registration === "registering";
    for (const n of document.querySelectorAll(".me-name")) n.textContent = S.username || "";
    for (const n of document.querySelectorAll(".peer-name")) n.textContent = S.call ? S.call.peer : "";

    // interpreter
    const st = S.interpreterState;
    el.toggle.textContent = st === "AVAILABLE" ? "Go Offline" : "Go Online";
    el.toggle.disabled = !connected || st === "RINGING" || st === "IN_CALL";
    el.toggle.setAttribute("aria-disabled", String(!!S.pendingToggle));
    el.interpreterState.className = "state-line " + (st === "AVAILABLE" ? "online" : "offline");
    el.interpreterState.textContent = !connected
        ? "Not connected to the server."
        : S.pendingToggle
            ? (S.pendingToggle === "AVAILABLE" ? "Going online…" : "Going offline…")
            : { AVAILABLE: "You are online. Callers can see you and call you.",
                UNAVAILABLE: "You are offline. Callers cannot see you.",
                RINGING: "A call is ringing.",
                IN_CALL: "You are in a call." }[st] || "";

    // caller
    renderInterpreterList();

    // ringing
    el.cancel.disabled = !!(S.call && S.call.cancelled);
    el.accept.disabled = el.decline.disabled = !!(S.call && S.call.accepting);

    renderCall();

    if (changed) onViewChanged(view);
}

function renderInterpreterList() {
    const enabled = S.registration === "registered" && !S.call;
    const names = S.interpreters;
    el.noInterpreters.hidden = names.length > 0;
    // Keyed update: a button that stays keeps its DOM node, so keyboard and switch focus is not lost.
    const existing = new Map([...el.list.children].map((li) => [li.dataset.username, li]));
    names.forEach((name, i) => {
        let li = existing.get(name);
        if (!li) {
            li = document.createElement("li");
            li.dataset.username = name;
            const b = document.createElement("button");
            b.type = "button";
            b.textContent = `Call ${name}`;
            b.addEventListener("click", () => startCall(name));
            li.appendChild(b);
        }
        existing.delete(name);
        if (el.list.children[i] !== li) el.list.insertBefore(li, el.list.children[i] || null);
        li.firstChild.disabled = !enabled;
    });
    for (const li of existing.values()) li.remove();
}

function renderCall() {
    const c = S.call;
    if (!c || (c.phase !== "connecting" && c.phase !== "in_call")) return;
    el.callPeer.textContent = c.peer;
    const ice = c.pc ? c.pc.iceConnectionState : "new";
    let phase;
    if (c.phase === "connecting") phase = "Connecting…";
    else if (ice === "disconnected" || ice === "failed") {
        phase = "Reconnecting…";
        el.callOverlay.classList.remove("faded");
    }
    else phase = c.peerVideoVisible ? `${c.peer} can see you.` : "Connected.";
    el.callPhase.textContent = phase;
    const warn = c.poor
        ? "Poor connection"
        : c.peerPoor ? `Poor connection on ${c.peer}'s side` : "";
    el.poorBanner.textContent = warn;
    el.poorBanner.hidden = !warn;
}

function onViewChanged(view) {
    // Move keyboard / switch / screen-reader focus to where the next action is.
    let target = null;
    if (view === "register") target = el.username;
    else if (view === "incoming") target = el.accept;
    else if (view === "calling") target = el.cancel;
    else if (view === "call") target = el.hangup;
    else if (view === "interpreter") target = el.toggle;
    else if (view === "caller") target = el.list.querySelector("button") || $("#caller-title");
    if (target) {
        if (target.tagName === "H1") target.setAttribute("tabindex", "-1");
        requestAnimationFrame(() => target.focus({ preventScroll: true }));
    }
    if (view === "call") requestAnimationFrame(() => placePip(pip.corner, false));
}

// ---------------------------------------------------------------------------------------------------------------
// Local preview: picture-in-picture, draggable, snaps to the nearest corner inside the safe area

const PIP_MARGIN = 12;
const pip = { corner: "tr", x: 0, y: 0, drag: null };

function safeInsets() {
    const cs = getComputedStyle(el.probe);
    return {
        top: parseFloat(cs.paddingTop) || 0,
        right: parseFloat(cs.paddingRight) || 0,
        bottom: parseFloat(cs.paddingBottom) || 0,
        left: parseFloat(cs.paddingLeft) || 0,
    };
}

function pipBounds() {
    const i = safeInsets();
    const w = el.pip.offsetWidth;
    const h = el.pip.offsetHeight;
    const vw = el.views.call.clientWidth || window.innerWidth;
    const vh = el.views.call.clientHeight || window.innerHeight;
    return {
        minX: i.left + PIP_MARGIN,
        maxX: Math.max(i.left + PIP_MARGIN, vw - i.right - PIP_MARGIN - w),
        minY: i.top + PIP_MARGIN,
        maxY: Math.max(i.top + PIP_MARGIN, vh - i.bottom - PIP_MARGIN - h),
        w, h, vw, vh,
    };
}

function cornerXY(corner) {
    const b = pipBounds();
    const x = corner[1] === "l" ? b.minX : b.maxX;
    let y = corner[0] === "t" ? b.minY : b.maxY;
    if (corner[0] === "b") {
        // keep the bottom corners clear of the "Hang up" button where they would cover it (narrow portrait)
        const hb = el.hangup.getBoundingClientRect();
        const overlaps = hb.width > 0 && x < hb.right && x + b.w > hb.left && y < hb.bottom && y + b.h > hb.top;
        if (overlaps) y = Math.max(b.minY, hb.top - PIP_MARGIN - b.h);
    }
    return { x, y };
}

function setPipPosition(x, y) {
    pip.x = x;
    pip.y = y;
    el.pip.style.transform = `translate(${Math.round(x)}px, ${Math.round(y)}px)`;
}

function placePip(corner, animate = true) {
    pip.corner = corner;
    el.pip.classList.toggle("dragging", !animate);
    const { x, y } = cornerXY(corner);
    setPipPosition(x, y);
    el.pip.dataset.corner = corner;
    if (!animate) requestAnimationFrame(() => el.pip.classList.remove("dragging"));
}

el.pip.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || pip.drag) return;
    el.pip.setPointerCapture(e.pointerId);
    pip.drag = { id: e.pointerId, sx: e.clientX, sy: e.clientY, x0: pip.x, y0: pip.y };
    el.pip.classList.add("dragging");
    e.preventDefault();
});
el.pip.addEventListener("pointermove", (e) => {
    const d = pip.drag;
    if (!d || d.id !== e.pointerId) return;
    const b = pipBounds();
    setPipPosition(
        Math.min(b.maxX, Math.max(b.minX, d.x0 + e.clientX - d.sx)),
        Math.min(b.maxY, Math.max(b.minY, d.y0 + e.clientY - d.sy)),
    );
});
function endPipDrag(e) {
    const d = pip.drag;
    if (!d || d.id !== e.pointerId) return;
    pip.drag = null;
    el.pip.classList.remove("dragging");
    const b = pipBounds();
    const cx = pip.x + b.w / 2;
    const cy = pip.y + b.h / 2;
    placePip((cy < b.vh / 2 ? "t" : "b") + (cx < b.vw / 2 ? "l" : "r"), true);
}
el.pip.addEventListener("pointerup", endPipDrag);
el.pip.addEventListener("pointercancel", endPipDrag);
/** The preview shows the whole picture that is sent (same aspect ratio), so the signer can frame hands and face. */
function fitPipToLocalVideo() {
    const v = el.localVideo;
    if (v.videoWidth > 0 && v.videoHeight > 0) el.pip.style.aspectRatio = `${v.videoWidth} / ${v.videoHeight}`;
    requestAnimationFrame(() => placePip(pip.corner, false));
}
el.localVideo.addEventListener("loadedmetadata", fitPipToLocalVideo);
el.localVideo.addEventListener("resize", fitPipToLocalVideo);
window.addEventListener("resize", () => {
    if (S.view === "call" && !pip.drag) placePip(pip.corner, false);
});

// ---------------------------------------------------------------------------------------------------------------
// Wiring

el.form.addEventListener("submit", onRegisterSubmit);
el.username.addEventListener("input", () => {
    const v = el.username.value.trim();
    if (v === "" || USERNAME_RE.test(v)) hideFormError();
    else el.username.setAttribute("aria-invalid", "true");
});
el.toggle.addEventListener("click", onToggleOnline);
el.cancel.addEventListener("click", onCancel);
el.accept.addEventListener("click", onAccept);
el.decline.addEventListener("click", onDecline);
el.hangup.addEventListener("click", onHangup);
window.addEventListener("online", () => {
    if (S.registration === "reconnecting" && !ws) reconnectNow();
});
window.addEventListener("offline", () => {
    if (S.registration === "registered") announce("Your device is offline.", { bad: true });
});
document.addEventListener("visibilitychange", () => {
    // Hidden tabs get throttled timers; catch up with a heartbeat as soon as the page is visible again.
    if (document.visibilityState === "visible" && S.registration === "registered") heartbeatTick();
});
window.addEventListener("pagehide", () => {
    if (S.call && S.call.id) {
        const type = S.call.phase === "incoming" ? "CALL_DECLINE" : "HANGUP";
        send({ type, callId: S.call.id });
    }
    if (ws) ws.close(1000);
});

// ---------------------------------------------------------------------------------------------------------------
// Test hook: window.bemyears, read-only

function callSummary(c) {
    return {
        callId: c.id,
        peer: c.peer,
        direction: c.direction,
        framesDecoded: c.stats.framesDecoded,
        firstRemoteFrameMs: c.firstFrameAt && c.acceptedAt ? Math.round(c.firstFrameAt - c.acceptedAt) : null,
        videoVisibleSent: c.videoVisibleSent,
        peerVideoVisible: c.peerVideoVisible,
        candidatePair: c.stats.candidatePair,
        iceConnectionState: c.stats.iceConnectionState,
        connectionState: c.stats.connectionState,
        iceRestarts: c.restarts,
        poorConnection: c.poor,
        peerPoorConnection: c.peerPoor,
        quality: { lossPct: c.quality.lossPct, rttMs: c.quality.rttMs, fps: c.quality.fps },
    };
}

/** A fresh copy of the client state; changing it changes nothing. */
function snapshot() {
    const c = S.call;
    const s = c ? callSummary(c) : null;
    return JSON.parse(JSON.stringify({
        registration: S.registration,
        username: S.username,
        role: S.role,
        interpreterState: S.interpreterState,
        callState: c ? c.phase : "idle", // idle | calling | incoming | connecting | in_call
        callId: c ? c.id : null,
        peer: c ? c.peer : null,
        availableInterpreters: S.interpreters,
        framesDecoded: s ? s.framesDecoded : 0,
        firstRemoteFrameMs: s ? s.firstRemoteFrameMs : null,
        videoVisibleSent: s ? s.videoVisibleSent : false,
        peerVideoVisible: s ? s.peerVideoVisible : false,
        candidatePair: s ? s.candidatePair : null,
        iceConnectionState: s ? s.iceConnectionState : null,
        connectionState: s ? s.connectionState : null,
        iceRestarts: s ? s.iceRestarts : 0,
        poorConnection: s ? s.poorConnection : false,
        peerPoorConnection: s ? s.peerPoorConnection : false,
        quality: s ? s.quality : null,
        relayOnly: RELAY_ONLY,
        iceServerUrls: S.iceServers.flatMap((i) => (Array.isArray(i.urls) ? i.urls : [i.urls])),
        // TURN usernames (expiry:opaque-id, no secret): REGISTERED's, and the call's own fresh one.
        turnUsername: turnUsernameOf(S.iceServers),
        callTurnUsername: c && c.iceServers ? turnUsernameOf(c.iceServers) : null,
        status: el.status.textContent.trim(),
        lastError: S.lastError,
        lastCallEnd: S.lastCallEnd,
        lastCall: S.lastCall,
        reconnects: S.reconnects,
        heartbeatsSent: S.heartbeatsSent,
    }));
}

function turnUsernameOf(servers) {
    const turn = servers.find((i) => typeof i.username === "string");
    return turn ? turn.username : null;
}

Object.defineProperty(window, "bemyears", {
    value: Object.freeze(Object.assign(
        Object.create(null, Object.fromEntries(Object.keys(snapshot()).map((k) => [k, {
            get: () => snapshot()[k],
            enumerable: true,
        }]))),
        { snapshot },
    )),
    writable: false,
    configurable: false,
    enumerable: true,
});

render();
