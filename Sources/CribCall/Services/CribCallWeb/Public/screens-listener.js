// CribCall web app on a listener (`cribcall listen --web`, state.role "listener"), seed 000 §3.2: every paired
// monitor as a card (its link, its safety status, Listen / Video / Keep live / End, Forget), the stream player,
// adding a monitor (found on the LAN, or by address) with PIN pairing, the activity of all monitors, and the
// listener's settings. Alerts are alerts.js's, for alerts of any monitor.
//
// The page is the streams' receiver: the monitor's offer, its candidates and the end arrive on api/events as
// `event: stream`; the page answers (POST api/streams/{id}/answer) and the media goes straight from the monitor to
// this page over WebRTC (DTLS-SRTP on the LAN). Contract: ../README.md, "The listener's API".
"use strict";

const CONNECTION_WORDS = {
    connected: "Connected",
    connecting: "Connecting…",
    link_lost: "Link lost — reconnecting…",
    unauthorized: "This listener was unpaired on the monitor",
};

/** The monitor called `monitorId` in the state, or a stand-in. */
function monitorName(state, monitorId) {
    const m = ((state && state.monitors) || []).find((x) => x.monitorId === monitorId);
    return m ? m.name : "the monitor";
}

/** An id usable in element ids ("mc-…"): monitor ids are UUIDs, but nothing is assumed. */
function domId(text) {
    return String(text).replace(/[^A-Za-z0-9_-]/g, "_");
}

/** "01:05" from seconds. */
function clock(sec) {
    const s = Math.max(0, Math.floor(sec));
    return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The stream players

const Players = (() => {
    const players = new Map(); // sessionId → Player
    const requested = new Map(); // sessionId → monitorId: streams this page asked for
    const done = new Set(); // sessions this page has finished with (ended, or another page plays them)
    const early = new Map(); // sessionId → candidates that came before the offer
    const pinned = new Set();
    const QUIET_BELOW = 40; // the level under which the meter says "Quiet" (the test tone reads 50)

    class Player {
        constructor(sessionId, mediaType) {
            this.sessionId = sessionId;
            this.mediaType = mediaType === "audio" ? "audio" : "audio_video";
            this.monitorId = requested.get(sessionId) || null;
            this.receiver = new RTC.Receiver();
            this.stream = new MediaStream();
            this.audioTrack = null;
            this.videoTrack = null;
            this.state = "connecting"; // connecting | playing | failed
            this.flowingSent = false;
            this.answered = false; // cribcall took this page's answer
            this.audioBlocked = false;
            this.audioPlaying = false;
            this.videoPlaying = false;
            this.playingSince = null;
            this.endingWarned = false; // "ends in N s" was said
            this.meter = null;
            this.level = 0;
            this.statsTimer = null;
            this.build();
            this.receiver.pc.addEventListener("track", (e) => this.onTrack(e.track));
            this.receiver.pc.addEventListener("connectionstatechange", () => this.onConnectionState());
        }

        build() {
            const video = this.mediaType === "audio_video";
            this.video = video ? h("video", {
                class: "player-video", muted: true, autoplay: true, playsinline: true,
                "aria-label": "Live video",
            }) : null;
            if (this.video) {
                this.video.muted = true; // the sound plays from the audio element, which may need a tap
                this.video.addEventListener("playing", () => this.onVideoPlaying());
            }
            this.audio = h("audio", { autoplay: true });
            this.audio.addEventListener("playing", () => this.onAudioPlaying());
            this.timeEl = h("span", { text: "Connecting…" });
            this.badge = h("span", { class: "badge badge-dark player-badge" },
                h("span", { class: "dot dot-red", "aria-hidden": "true" }), this.timeEl);
            this.fill = h("span", { class: "meter-fill" });
            this.meterEl = h("div", {
                class: "meter", role: "meter", "aria-label": "Sound level", "aria-valuemin": "0",
                "aria-valuemax": "100", "aria-valuenow": "0", "aria-valuetext": "waiting for sound",
            }, this.fill);
            this.word = h("span", { class: "muted level-word", text: "Waiting" });
            this.mute = h("button", {
                type: "button", class: "icon-btn mute-btn", "aria-label": "Mute", "aria-pressed": "false",
                onclick: () => this.toggleMute(),
            }, icon("volume"));
            this.hear = h("button", {
                type: "button", class: "btn btn-primary tap-to-hear", hidden: true,
                onclick: () => this.tapToHear(),
            }, icon("volume"), "Tap to hear");
            this.status = h("p", { class: "player-status small", text: "Connecting to the monitor…" });
            // its own buttons while it is not in a monitor's card (whose buttons act on it there)
            this.controls = h("div", { class: "mc-actions player-controls" },
                h("button", {
                    type: "button", class: "btn btn-secondary", dataset: { action: "keep", session: this.sessionId },
                }, icon("pin"), "Keep live"),
                h("button", {
                    type: "button", class: "btn btn-danger", dataset: { action: "end", session: this.sessionId },
                }, icon("square"), "End"));
            const media = h("div", { class: `player-media${video ? "" : " audio-only"}` },
                this.video || h("div", { class: "player-art", "aria-hidden": "true" }, icon("headphones")),
                this.badge);
            this.el = h("div", { class: "player", dataset: { session: this.sessionId } },
                media, this.audio,
                h("div", { class: "player-meter" }, this.mute, this.meterEl, this.word),
                this.hear, this.status, this.controls);
        }

        /** Names the player after its monitor (once known). */
        label(name) {
            const kind = this.mediaType === "audio" ? "sound" : "video";
            this.meterEl.setAttribute("aria-label", `Sound level from ${name}`);
            if (this.video) this.video.setAttribute("aria-label", `Live video from ${name}`);
            this.el.setAttribute("aria-label", `Live ${kind} from ${name}`);
            this.el.setAttribute("role", "group");
        }

        /** Answers the monitor's offer (first page to answer plays it; 409: another page did). */
        async answer(sdp) {
            let answer;
            try {
                answer = await this.receiver.answer(sdp, early.get(this.sessionId) || []);
                early.delete(this.sessionId);
            } catch (e) {
                this.fail(`This browser could not take the stream (${e.message || e}).`);
                return;
            }
            if (this.receiver.closed) return;
            try {
                await api(`api/streams/${encodeURIComponent(this.sessionId)}/answer`, { method: "POST", body: answer });
                this.answered = true;
                this.check();
            } catch (e) {
                if (e instanceof ApiError && (e.status === 409 || e.status === 404)) {
                    // another page of this app plays it (or it ended meanwhile): nothing to show here
                    remove(this.sessionId);
                    return;
                }
                this.fail(`The stream could not start: ${e.message}`);
            }
        }

        onTrack(track) {
            this.stream.addTrack(track);
            if (track.kind === "video") {
                this.videoTrack = track;
                if (this.video) this.video.srcObject = new MediaStream([track]);
            } else if (track.kind === "audio") {
                this.audioTrack = track;
                this.audio.srcObject = new MediaStream([track]);
                this.playAudio();
                // a remote track is muted until its first packets arrive
                track.addEventListener("unmute", () => this.check());
            }
            Alerts.redraw();
        }

        async playAudio() {
            try {
                await this.audio.play();
                this.audioBlocked = false;
                this.hear.hidden = true;
            } catch (e) {
                if (e && e.name === "AbortError") return; // a new source: its own play() follows
                this.audioBlocked = true;
                this.hear.hidden = false;
                this.showStatus();
                this.check();
            }
        }

        async tapToHear() {
            await this.playAudio();
            if (!this.audioBlocked) {
                this.startMeter();
                announce("Sound on.");
                this.showStatus();
            }
        }

        /** Mute here only (the meter goes on showing the sound that arrives). */
        toggleMute() {
            this.audio.muted = !this.audio.muted;
            this.mute.setAttribute("aria-pressed", String(this.audio.muted));
            setIcon($("svg", this.mute), this.audio.muted ? "volume-off" : "volume");
            announce(this.audio.muted ? "Sound muted on this device." : "Sound on.");
        }

        onVideoPlaying() {
            if (!this.video.videoWidth) return;
            this.videoPlaying = true;
            this.check();
        }

        onAudioPlaying() {
            this.audioPlaying = true;
            this.startMeter();
            this.check();
        }

        /**
         * Does media play? A video stream once its picture does (frames decoded); a sound stream once its packets
         * arrive (the track unmutes) and the audio element plays them — or the browser holds the sound back until a
         * tap (the stream is live all the same). An <audio> element "plays" a remote track before any packet came,
         * so that alone says nothing. Only then, and once cribcall took the answer, is the stream flowing.
         */
        check() {
            if (!this.answered || this.state === "failed") return;
            const audioArrives = !!this.audioTrack && !this.audioTrack.muted
                && (this.audioPlaying || this.audioBlocked);
            const plays = this.mediaType === "audio" ? audioArrives : this.videoPlaying;
            if (plays) this.started();
        }

        started() {
            if (this.state !== "playing") {
                this.state = "playing";
                this.playingSince = Date.now();
                this.tick();
                this.showStatus();
            }
            this.flowing();
        }

        /** Tells cribcall (and so the monitor) that the media plays: once. */
        flowing() {
            if (this.flowingSent) return;
            this.flowingSent = true;
            api(`api/streams/${encodeURIComponent(this.sessionId)}/flowing`, { method: "POST" }).catch(() => {
                this.flowingSent = false; // the next event tries again
            });
        }

        async startMeter() {
            if (this.meter || this.meterStarting || !this.audioTrack) return;
            const meter = new SoundMeter(this.audioTrack, (level) => this.showLevel(level));
            this.meterStarting = true;
            const started = await meter.start();
            this.meterStarting = false;
            if (this.receiver.closed) {
                meter.stop();
                return;
            }
            if (started) {
                this.meter = meter;
                clearInterval(this.statsTimer); // WebAudio measures from now on
                this.statsTimer = null;
                return;
            }
            // no WebAudio yet (no tap): the browser's own measure of the received sound, twice a second
            if (!this.statsTimer) {
                this.statsTimer = setInterval(async () => {
                    const stats = await RTC.inboundStats(this.receiver.pc).catch(() => null);
                    const a = stats && stats.audio;
                    if (!a) return;
                    const db = a.audioLevel > 0 ? 20 * Math.log10(a.audioLevel) : -90;
                    this.showLevel(Math.round(Math.min(100, Math.max(0, (db + 90) * 100 / 90))));
                }, 500);
            }
        }

        showLevel(level) {
            this.level = level;
            const loud = level >= QUIET_BELOW;
            this.fill.style.width = `${level}%`;
            this.meterEl.setAttribute("aria-valuenow", String(level));
            this.meterEl.setAttribute("aria-valuetext", `${level} of 100, ${loud ? "sound" : "quiet"}`);
            setText(this.word, loud ? "Sound" : "Quiet");
        }

        onConnectionState() {
            const state = this.receiver.pc.connectionState;
            if (state === "failed") this.fail("The connection to the monitor failed. Press End, then try again.");
            else if (state === "disconnected") setText(this.status, "The connection wavers… waiting for it.");
            else if (state === "connected") this.showStatus();
        }

        fail(words) {
            this.state = "failed";
            this.status.classList.add("error");
            setText(this.status, words);
            announce(words, { bad: true });
        }

        showStatus() {
            if (this.state === "failed") return;
            if (this.audioBlocked) setText(this.status, "The browser holds the sound back: tap to hear it.");
            else if (this.state === "playing") {
                setText(this.status, "Local connection — nothing leaves your home network.");
            } else setText(this.status, "Connecting to the monitor…");
        }

        /**
         * Once a second: the "Live • 00:23" badge, and while the monitor is about to stop the stream by itself
         * (the state's endsAt), how long is left and what keeps it going (said once).
         */
        tick() {
            if (this.state !== "playing" || !this.playingSince) return;
            const live = `Live • ${clock((Date.now() - this.playingSince) / 1000)}`;
            const entry = ((Live.state && Live.state.streams) || []).find((s) => s.sessionId === this.sessionId);
            const endsAt = entry && !pinned.has(this.sessionId) ? entry.endsAt : null;
            if (!endsAt) {
                setText(this.timeEl, live);
                if (this.endingWarned) {
                    this.endingWarned = false;
                    this.showStatus();
                }
                return;
            }
            const left = Math.max(0, Math.ceil((endsAt - Date.now()) / 1000));
            setText(this.timeEl, `${live} • ends in ${left} s`);
            setText(this.status, `The monitor ends this stream in ${left} s. "Keep live" keeps it going.`);
            if (!this.endingWarned) {
                this.endingWarned = true;
                announce(`The stream from ${monitorName(Live.state, monitorOf(this))} ends in ${left} seconds. `
                    + `"Keep live" keeps it going.`);
            }
        }

        close() {
            this.receiver.close();
            if (this.meter) this.meter.stop();
            clearInterval(this.statsTimer);
            for (const el of [this.audio, this.video]) {
                if (el) {
                    el.pause();
                    el.srcObject = null;
                }
            }
            this.el.remove();
        }
    }

    // ------------------------------------------------------------------------------------------- signaling

    function onSignal(signal) {
        if (!Live.state || Live.state.role !== "listener") return;
        const id = signal.sessionId;
        if (signal.type === "offer") {
            // a page that opens later gets the offer again: a stream already handled here is not answered twice
            if (players.has(id) || done.has(id) || typeof signal.sdp !== "string") return;
            const player = new Player(id, signal.mediaType);
            players.set(id, player);
            place();
            player.answer(signal.sdp);
            const name = monitorName(Live.state, monitorOf(player));
            if (!requested.has(id)) announce(`${name} started a live stream.`);
        } else if (signal.type === "candidate") {
            const player = players.get(id);
            if (player) player.receiver.addCandidate(signal.candidate);
            else if (!done.has(id)) {
                if (!early.has(id)) early.set(id, []);
                early.get(id).push(signal.candidate);
            }
        } else if (signal.type === "end") {
            const player = players.get(id);
            if (player && !player.endedHere) {
                const name = monitorName(Live.state, monitorOf(player));
                // why it ended comes with the next state (endedStreams), a moment later
                setTimeout(() => announce(endWords(id, name)), 400);
            }
            remove(id);
        }
    }

    /** Why a stream ended, in words (endedStreams' reason: ended_by_monitor, link_lost, media_failed: …). */
    function endWords(sessionId, name) {
        const ended = ((Live.state && Live.state.endedStreams) || []).find((e) => e.sessionId === sessionId);
        const reason = ended ? String(ended.reason || "") : "";
        if (reason === "ended_by_monitor") {
            return `${name} ended the stream: its time was up. "Keep live" keeps one going.`;
        }
        if (reason === "link_lost") return `The stream from ${name} stopped: the link to it was lost.`;
        if (reason.startsWith("media_failed")) return `The stream from ${name} stopped: its sound or video failed.`;
        return `The stream from ${name} ended.`;
    }

    function remove(id) {
        done.add(id);
        early.delete(id);
        const player = players.get(id);
        players.delete(id);
        requested.delete(id);
        pinned.delete(id);
        if (player) player.close();
        render();
    }

    // ------------------------------------------------------------------------------------------- actions

    /**
     * The monitor a player belongs to: asked for here, or as the state says (a monitor's automatic stream gets its
     * monitor there only once it plays); until then, the only paired monitor if there is just one.
     */
    function monitorOf(player) {
        if (player.monitorId) return player.monitorId;
        const entry = ((Live.state && Live.state.streams) || []).find((s) => s.sessionId === player.sessionId);
        if (entry && entry.monitorId) player.monitorId = entry.monitorId;
        const monitors = (Live.state && Live.state.monitors) || [];
        return player.monitorId || (monitors.length === 1 ? monitors[0].monitorId : null);
    }

    /** Asks `monitorId` for a stream (Listen: "audio", Video: "audio_video"); it plays here when it comes. */
    async function watch(monitorId, mediaType) {
        const running = sessionOf(monitorId);
        if (running && !(mediaType === "audio_video" && mediaTypeOf(running) === "audio")) {
            Router.go("/monitors");
            focusCard(monitorId);
            return true;
        }
        // the picture is wanted, and only sound plays: the sound stream makes way for a video one
        if (running) await end(running, { quiet: true });
        let sessionId = null;
        const ok = await attempt(async () => {
            const answer = await api("api/streams", { method: "POST", body: { monitorId, mediaType } });
            sessionId = answer.sessionId;
        });
        if (!ok || !sessionId) return false;
        requested.set(sessionId, monitorId);
        const player = players.get(sessionId);
        if (player) player.monitorId = monitorId;
        Router.go("/monitors");
        render();
        focusCard(monitorId);
        const name = monitorName(Live.state, monitorId);
        announce(mediaType === "audio" ? `Listening to ${name}…` : `Opening the video of ${name}…`);
        return true;
    }

    function focusCard(monitorId) {
        const card = $(`#mc-${domId(monitorId)}`);
        if (card) card.scrollIntoView({ block: "start" });
    }

    async function end(sessionId, { quiet = false } = {}) {
        const player = players.get(sessionId);
        if (player) player.endedHere = true;
        const ok = await attempt(() => api(`api/streams/${encodeURIComponent(sessionId)}/end`, { method: "POST" }));
        if (ok) {
            remove(sessionId);
            if (!quiet) announce("Stream ended.");
        }
        return ok;
    }

    /** "audio" or "audio_video": how a running stream was opened. */
    function mediaTypeOf(sessionId) {
        const player = players.get(sessionId);
        if (player) return player.mediaType;
        const entry = ((Live.state && Live.state.streams) || []).find((s) => s.sessionId === sessionId);
        return entry ? entry.mediaType : null;
    }

    async function pin(sessionId) {
        const ok = await attempt(() => api(`api/streams/${encodeURIComponent(sessionId)}/pin`, { method: "POST" }));
        if (ok) {
            pinned.add(sessionId);
            announce("Kept live: the stream goes on until you end it.");
            render();
        }
        return ok;
    }

    /** The stream of `monitorId` that runs (played here, or as the state says), or null. */
    function sessionOf(monitorId) {
        for (const player of players.values()) if (monitorOf(player) === monitorId) return player.sessionId;
        const entry = ((Live.state && Live.state.streams) || []).find((s) => s.monitorId === monitorId
            && !done.has(s.sessionId));
        return entry ? entry.sessionId : null;
    }

    /** Puts each player into its monitor's card (or the list of streams of unknown monitors). */
    function place() {
        for (const player of players.values()) {
            const monitorId = monitorOf(player);
            const slot = monitorId ? $(`#mc-${domId(monitorId)} .mc-player`) : null;
            const target = slot || $("#players-other");
            if (player.el.parentElement !== target) target.append(player.el);
            player.controls.hidden = !!slot;
            const keep = $('[data-action="keep"]', player.controls);
            keep.disabled = pinned.has(player.sessionId);
            setText(keep.lastChild, pinned.has(player.sessionId) ? "Kept live" : "Keep live");
            player.label(monitorId ? monitorName(Live.state, monitorId) : "a monitor");
            player.tick(); // an end in sight (or kept live) shows at once
        }
    }

    function render() {
        if (Live.state && Live.state.role === "listener") {
            place();
            MonitorCards.update(Live.state);
            Alerts.redraw();
        }
    }

    Live.onStream(onSignal);
    // A stream that ended while this page missed its "end" (the event stream reconnected) is in endedStreams.
    Live.onState((state) => {
        if (state.role !== "listener") return;
        for (const ended of state.endedStreams || []) {
            if (players.has(ended.sessionId)) onSignal({ type: "end", sessionId: ended.sessionId, reason: "" });
        }
    });
    setInterval(() => { for (const p of players.values()) p.tick(); }, 1000);

    return Object.freeze({
        watch,
        end,
        pin,
        place,
        sessionOf,
        isPinned: (sessionId) => pinned.has(sessionId),
        /** The received video track of `monitorId` while it plays here (for the alert's preview), or null. */
        videoOf(monitorId) {
            for (const p of players.values()) {
                const live = p.videoTrack && p.videoTrack.readyState === "live";
                if (live && monitorOf(p) === monitorId) return p.videoTrack;
            }
            return null;
        },
        /** For the test hook. */
        list() {
            return [...players.values()].map((p) => ({
                sessionId: p.sessionId, monitorId: monitorOf(p), mediaType: p.mediaType, state: p.state,
                flowing: p.flowingSent, audioBlocked: p.audioBlocked, audioPlaying: p.audioPlaying,
                muted: p.audio.muted,
                videoPlaying: p.videoPlaying, level: p.level, pinned: pinned.has(p.sessionId),
                videoWidth: p.video ? p.video.videoWidth : 0, videoHeight: p.video ? p.video.videoHeight : 0,
            }));
        },
        async stats() {
            const out = {};
            for (const p of players.values()) out[p.sessionId] = await RTC.inboundStats(p.receiver.pc);
            return out;
        },
    });
})();

// ---------------------------------------------------------------------------------------------------------------
// Monitors (home tab): one card per paired monitor, built once and updated in place, so that a stream playing in
// a card is never rebuilt.

const MonitorCards = (() => {
    const cards = new Map(); // monitorId → {el, parts}
    let confirming = null; // the monitor whose "Forget" waits for a second press

    function build(m) {
        const id = domId(m.monitorId);
        const parts = {
            name: h("h2", { class: "mc-name", id: `mc-name-${id}` }),
            dot: h("span", { class: "dot dot-grey", "aria-hidden": "true" }),
            conn: h("span", { class: "mc-conn-text" }),
            reason: h("p", { class: "mc-reason small", hidden: true }),
            alert: h("p", { class: "mc-alert", hidden: true }),
            safety: h("p", { class: "mc-safety" }),
            noise: h("p", { class: "mc-noise small muted" }),
            chips: h("ul", { class: "mc-chips", "aria-label": "Movement and position", hidden: true }),
            player: h("div", { class: "mc-player" }),
            actions: h("div", { class: "mc-actions" }),
            error: h("p", { class: "error", hidden: true }),
        };
        parts.icon = h("span", { class: "mc-icon", "aria-hidden": "true" }, icon("video"));
        const el = h("article", {
            class: "card monitor-card", id: `mc-${id}`, "aria-labelledby": `mc-name-${id}`,
            dataset: { monitor: m.monitorId },
        },
        h("div", { class: "mc-head" }, parts.icon,
            h("div", { class: "mc-title" }, parts.name, h("p", { class: "mc-conn" }, parts.dot, parts.conn))),
        parts.reason, parts.alert, parts.noise, parts.safety, parts.chips, parts.player, parts.actions, parts.error);
        return { el, parts, lastNoiseAt: null };
    }

    /** "Last sound 3 min ago (21:04)", kept current by the screen's tick. */
    function drawNoise(card) {
        const at = card.lastNoiseAt;
        setText(card.parts.noise, at ? `Last sound ${ago(at)} (${formatTime(at)})` : "No sound noticed yet");
    }

    /** Refreshes the "Last sound … ago" lines (every second, from the screen's tick; the text changes by minutes). */
    function tick() {
        for (const card of cards.values()) drawNoise(card);
    }

    function update(state) {
        const monitors = state.monitors || [];
        const list = $("#monitor-cards");
        const ids = new Set(monitors.map((m) => m.monitorId));
        for (const [monitorId, card] of cards) {
            if (!ids.has(monitorId)) {
                card.el.remove();
                cards.delete(monitorId);
            }
        }
        monitors.forEach((m, index) => {
            let card = cards.get(m.monitorId);
            if (!card) {
                card = build(m);
                cards.set(m.monitorId, card);
            }
            if (list.children[index] !== card.el) list.insertBefore(card.el, list.children[index] || null);
            draw(card, m, state);
        });
        $("#monitors-empty").hidden = monitors.length > 0;
        const connected = monitors.filter((m) => m.connection === "connected").length;
        setText($("#monitors-line"), monitors.length === 0 ? "Nothing paired yet"
            : `${monitors.length} paired · ${connected} connected`);
        Players.place();
    }

    function draw(card, m, state) {
        const p = card.parts;
        card.lastNoiseAt = typeof m.lastNoiseAt === "number" ? m.lastNoiseAt : null;
        drawNoise(card);
        const connection = CONNECTION_WORDS[m.connection] ? m.connection : "connecting";
        // switched off at the monitor (its Stop monitoring): connected, but nothing can come from it
        const off = connection === "connected" && m.monitoring === "off";
        setText(p.name, m.name || "Monitor");
        setText(p.conn, off ? "Connected · Monitoring: OFF" : CONNECTION_WORDS[connection]);
        p.dot.className = `dot ${off ? "dot-amber"
            : { connected: "dot-green", link_lost: "dot-amber", unauthorized: "dot-red" }[connection] || "dot-grey"}`;
        card.el.classList.toggle("offline", connection !== "connected");
        card.el.classList.toggle("switched-off", off);
        const reason = off ? "Someone stopped monitoring there: no sound or safety alert can reach you until it is "
                + "started again."
            : connection === "link_lost" && m.reason ? sentence(m.reason)
            : connection === "unauthorized" ? "Forget it here, then pair again to hear it." : "";
        p.reason.hidden = !reason;
        setText(p.reason, reason);

        const alert = (state.alerts || []).find((a) => a.monitorId === m.monitorId && a.state === "open");
        p.alert.hidden = !alert;
        setText(p.alert, alert ? `${alert.title} Noticed at ${formatTime(alert.detectedAt)}.` : "");
        card.el.classList.toggle("attention", !!alert);

        // a monitor that is not connected has no current status (what came last may be old)
        const safety = connection === "connected" ? m.safety : null;
        let line;
        if (safety && safety.line) line = safety.line;
        else if (connection === "connected") line = "Safety detection is off on this monitor, or no status came yet.";
        else line = "Its safety status shows once it is connected.";
        setText(p.safety, line);
        p.safety.classList.toggle("muted", !safety);
        p.safety.hidden = off; // the reason above says it all
        const active = !!safety && safety.monitoring === "active";
        p.chips.hidden = !active;
        if (active) {
            const movement = (MOVEMENT_WORDS[safety.movement] || MOVEMENT_WORDS.unknown)[0];
            const position = (POSITION_WORDS[safety.position] || POSITION_WORDS.unknown)[0];
            const chips = [["Movement", movement, false], ["Position", position, safety.position === "on_stomach"]];
            renderList(p.chips, chips,
                ([label, value, attention]) => h("li", { class: attention ? "attention" : null },
                    h("span", { class: "chip-label", text: `${label}: ` }), value));
        }
        actions(card, m, connection);
    }

    function actions(card, m, connection) {
        const sessionId = Players.sessionOf(m.monitorId);
        const pinned = sessionId ? Players.isPinned(sessionId) : false;
        // nothing to listen to while monitoring is switched off there (the monitor refuses streams)
        const connected = connection === "connected" && m.monitoring !== "off";
        const name = m.name || "Monitor";
        const confirm = confirming === m.monitorId;
        const spec = { sessionId, pinned, connected, confirm };
        const items = [];
        if (confirm) {
            items.push({ kind: "confirm" });
        } else if (sessionId) {
            items.push({ kind: "btn", action: "keep", label: pinned ? "Kept live" : "Keep live", icon: "pin",
                cls: "btn btn-secondary", pressed: pinned, disabled: pinned });
            items.push({ kind: "btn", action: "end", label: "End", icon: "square", cls: "btn btn-danger" });
        } else {
            items.push({ kind: "btn", action: "listen", label: "Listen", icon: "headphones", cls: "btn btn-secondary",
                disabled: !connected });
            items.push({ kind: "btn", action: "video", label: "Video", icon: "video", cls: "btn btn-primary",
                disabled: !connected });
        }
        if (!confirm) items.push({ kind: "forget" });
        const focusHere = card.parts.actions.contains(document.activeElement);
        const changed = renderList(card.parts.actions, items, (item) => {
            const data = { monitor: m.monitorId, session: sessionId || "" };
            if (item.kind === "confirm") {
                return h("div", { class: "mc-confirm" },
                    h("p", { text: `Forget ${name}? This listener stops hearing it and getting its alerts, and has `
                        + "to pair again to use it." }),
                    h("button", {
                        type: "button", class: "btn btn-danger btn-small", text: "Yes, forget",
                        "aria-label": `Yes, forget ${name}`,
                        dataset: { ...data, action: "forget-confirm", key: "forget-confirm" },
                    }),
                    h("button", {
                        type: "button", class: "btn btn-secondary btn-small", text: "Cancel",
                        dataset: { ...data, action: "forget-cancel", key: "forget-cancel" },
                    }));
            }
            if (item.kind === "forget") {
                return h("button", {
                    type: "button", class: "text-btn mc-forget", text: "Forget",
                    "aria-label": `Forget ${name}`, dataset: { ...data, action: "forget", key: "forget" },
                });
            }
            return h("button", {
                type: "button", class: item.cls, disabled: item.disabled,
                "aria-pressed": item.action === "keep" ? String(!!item.pressed) : null,
                dataset: { ...data, action: item.action, key: item.action },
            }, icon(item.icon), item.label);
        }, JSON.stringify(spec));
        if (changed && confirm) {
            const yes = $('[data-action="forget-confirm"]', card.parts.actions);
            if (yes) yes.focus();
        } else if (changed && focusHere && !card.parts.actions.contains(document.activeElement)) {
            // the pressed button was replaced (Video → Keep live, End): the focus stays in the card
            const first = $("button:not(:disabled)", card.parts.actions);
            if (first) first.focus({ preventScroll: true });
        }
    }

    return Object.freeze({
        update,
        tick,
        get confirming() { return confirming; },
        set confirming(value) { confirming = value; },
        error(monitorId, words) {
            const card = cards.get(monitorId);
            if (!card) return;
            card.parts.error.hidden = !words;
            setText(card.parts.error, words || "");
        },
    });
})();

/**
 * Whether alerts can reach the parent while the tab is in the background: asks once (the browser's prompt needs a
 * click), and says what to do when the browser blocks notifications.
 */
function drawNotifyCard() {
    const card = $("#notify-card");
    const permission = "Notification" in window ? Notification.permission : "unsupported";
    const paired = ((Live.state && Live.state.monitors) || []).length > 0;
    card.hidden = !paired || permission === "granted";
    $("#notify-allow").hidden = permission !== "default";
    setText($("#notify-line"), permission === "default"
        ? "Allow notifications, so that alerts reach you while this tab is in the background."
        : permission === "denied"
            ? "Notifications are blocked for this page: alerts sound only while it is open. Allow them in the "
                + "browser's site settings."
            : "This browser cannot show notifications: keep this page open and the sound on to hear alerts.");
}

defineScreen("monitors", {
    path: "/monitors",
    role: "listener",
    tab: "monitors",
    title: "Monitors",

    update(state) {
        MonitorCards.update(state);
        drawNotifyCard();
    },

    tick() {
        MonitorCards.tick();
    },

    actions: {
        async "allow-notify"() {
            if ("Notification" in window) await Notification.requestPermission().catch(() => "default");
            drawNotifyCard();
            if ("Notification" in window && Notification.permission === "granted") {
                announce("Alerts will also reach you while this tab is in the background.");
            }
        },
        async listen(button) {
            button.disabled = true;
            if (!(await Players.watch(button.dataset.monitor, "audio"))) button.disabled = false;
        },
        async video(button) {
            button.disabled = true;
            if (!(await Players.watch(button.dataset.monitor, "audio_video"))) button.disabled = false;
        },
        async keep(button) {
            button.disabled = true;
            if (!(await Players.pin(button.dataset.session))) button.disabled = false;
        },
        async end(button) {
            button.disabled = true;
            if (!(await Players.end(button.dataset.session))) button.disabled = false;
        },
        forget(button) {
            MonitorCards.confirming = button.dataset.monitor;
            MonitorCards.update(Live.state);
        },
        "forget-cancel"(button) {
            const monitorId = button.dataset.monitor;
            MonitorCards.confirming = null;
            MonitorCards.update(Live.state);
            const again = $(`#mc-${domId(monitorId)} [data-action="forget"]`);
            if (again) again.focus();
        },
        async "forget-confirm"(button) {
            const monitorId = button.dataset.monitor;
            const name = monitorName(Live.state, monitorId);
            button.disabled = true;
            const sessionId = Players.sessionOf(monitorId);
            if (sessionId) await Players.end(sessionId);
            const ok = await attempt(async () => Live.apply(
                await api(`api/monitors/${encodeURIComponent(monitorId)}/forget`, { method: "POST" })));
            MonitorCards.confirming = null;
            MonitorCards.update(Live.state);
            if (ok) announce(`${name} was forgotten.`);
            $("#monitors-title").focus();
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Add a monitor: the monitors found on the LAN (POST api/scan), or one by its address; both start PIN pairing.

/** What the page last asked to pair with (for "Try again"). */
let lastPairing = null;

async function startPairing(target, errorEl, path = "api/pair") {
    lastPairing = { target, path };
    const ok = await attempt(async () => Live.apply(await api(path, { method: "POST", body: target })), errorEl);
    if (ok) Router.go("/monitors/pair");
    return ok;
}

/** Reads a pairing QR code with this device's camera, where the browser can (BarcodeDetector). */
const CodeCamera = (() => {
    let stream = null;
    let timer = null;
    const available = () => "BarcodeDetector" in window && !!(navigator.mediaDevices
        && navigator.mediaDevices.getUserMedia);

    async function start(found) {
        stop();
        const video = $("#code-video");
        stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false });
        video.srcObject = stream;
        video.hidden = false;
        await video.play();
        const detector = new window.BarcodeDetector({ formats: ["qr_code"] });
        timer = setInterval(async () => {
            try {
                const codes = await detector.detect(video);
                const text = codes.map((c) => c.rawValue).find((t) => t && t.trim().startsWith("{"));
                if (text) {
                    stop();
                    found(text);
                }
            } catch (_) {
                // a frame that could not be read: the next one may
            }
        }, 300);
    }

    function stop() {
        clearInterval(timer);
        timer = null;
        if (stream) stream.getTracks().forEach((t) => t.stop());
        stream = null;
        const video = $("#code-video");
        video.srcObject = null;
        video.hidden = true;
    }

    return Object.freeze({ available, start, stop });
})();

defineScreen("add-monitor", {
    path: "/monitors/add",
    role: "listener",
    title: "Add a monitor",
    scanned: false,

    init() {
        $("#address-form").addEventListener("submit", (event) => {
            event.preventDefault();
            this.submit();
        });
        $("#code-form").addEventListener("submit", (event) => {
            event.preventDefault();
            this.submitCode();
        });
        $("#code-text").addEventListener("input", () => {
            $("#code-text").removeAttribute("aria-invalid");
            $("#code-error").hidden = true;
        });
        $("#code-scan").hidden = !CodeCamera.available();
        for (const input of $$("#address-form input")) {
            input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
        }
    },

    enter() {
        $("#address-error").hidden = true;
        $("#scan-error").hidden = true;
    },

    update(state) {
        const scanning = !!state.scanning;
        const button = $("#scan-button");
        button.disabled = scanning;
        setText($("span", button), scanning ? "Looking…" : this.scanned ? "Look again" : "Look for monitors");
        const found = state.discovered || [];
        const list = $("#found-list");
        list.hidden = found.length === 0;
        renderList(list, found, (f) => {
            const name = f.name || "Monitor";
            const where = `${f.host || "?"}:${f.port} · ID ${shortId(f.fingerprint)}`;
            return h("li", {},
                h("div", { class: "who" }, h("span", { class: "name", text: name }),
                    h("span", { class: "meta", text: where })),
                f.paired
                    ? h("span", { class: "tag tag-green", text: "Paired" })
                    : h("button", {
                        type: "button", class: "btn btn-primary btn-small", text: "Pair",
                        "aria-label": `Pair with ${name}`,
                        dataset: { action: "pair-found", id: f.monitorId, key: f.monitorId },
                    }));
        });
        let words = "";
        if (scanning) words = "Looking for monitors on this network for a few seconds…";
        else if (this.scanned) {
            words = found.length ? `${found.length} found.` : "No monitor was found. Is it on the same Wi-Fi? You can "
                + "also add it by address.";
        } else words = "Finds the CribCall monitors that announce themselves on this network.";
        setText($("#scan-status"), words);
    },

    async submit() {
        const error = $("#address-error");
        const host = $("#address-host").value.trim();
        const portText = $("#address-port").value.trim();
        const fingerprint = $("#address-fingerprint").value.replace(/[\s:]/g, "").toLowerCase();
        const name = $("#address-name").value.trim();
        const bad = (id, words) => {
            $(id).setAttribute("aria-invalid", "true");
            error.textContent = words;
            error.hidden = false;
            $(id).focus();
            return false;
        };
        error.hidden = true;
        if (!host) return bad("#address-host", "Please enter the monitor's address (its IP address on your network).");
        const port = Number(portText);
        if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) {
            return bad("#address-port", "The port is a number from 1 to 65535: the monitor shows it.");
        }
        if (!/^[0-9a-f]{64}$/.test(fingerprint)) {
            return bad("#address-fingerprint",
                `The fingerprint is 64 letters (a–f) and digits; this one has ${fingerprint.length}. `
                    + "The monitor shows it.");
        }
        const button = $("#address-pair");
        button.disabled = true;
        const ok = await startPairing({ host, port, fingerprint, name: name || `Monitor at ${host}` }, error);
        button.disabled = false;
        return ok;
    },

    /** Pairs with the pasted (or scanned) pairing code; the server checks it and says what is wrong. */
    async submitCode() {
        const error = $("#code-error");
        const qr = $("#code-text").value.trim();
        const address = $("#code-address").value.trim();
        error.hidden = true;
        if (!qr) {
            $("#code-text").setAttribute("aria-invalid", "true");
            error.textContent = "Please paste the pairing code: on the monitor, press Show pairing code, then Copy code.";
            error.hidden = false;
            $("#code-text").focus();
            return false;
        }
        const button = $("#code-pair");
        button.disabled = true;
        const ok = await startPairing(address ? { qr, address } : { qr }, error, "api/pair/qr");
        button.disabled = false;
        if (ok) $("#code-text").value = "";
        return ok;
    },

    leave() {
        CodeCamera.stop();
    },

    actions: {
        async "scan-code"(button) {
            button.disabled = true;
            $("#code-error").hidden = true;
            try {
                await CodeCamera.start((text) => {
                    $("#code-text").value = text;
                    announce("Pairing code read.");
                    this.submitCode();
                });
                announce("Point the camera at the monitor's pairing code.");
            } catch (e) {
                const error = $("#code-error");
                error.textContent = `The camera could not be opened (${e && e.name ? e.name : e}). `
                    + "Paste the code instead: press Copy code on the monitor.";
                error.hidden = false;
            } finally {
                button.disabled = false;
            }
        },
        async scan(button) {
            button.disabled = true;
            $("#scan-error").hidden = true;
            const ok = await attempt(async () => Live.apply(await api("api/scan", { method: "POST" })),
                $("#scan-error"));
            this.scanned = true;
            if (ok) {
                const n = (Live.state.discovered || []).length;
                announce(n ? `${n} monitor${n === 1 ? "" : "s"} found.` : "No monitor was found.");
            }
            this.update(Live.state);
        },
        async "pair-found"(button) {
            const found = (Live.state.discovered || []).find((f) => f.monitorId === button.dataset.id);
            if (!found) return;
            button.disabled = true;
            const ok = await startPairing({
                host: found.host, port: found.port, fingerprint: found.fingerprint, name: found.name,
            }, $("#scan-error"));
            if (!ok) button.disabled = false;
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// PIN pairing: state.pairing drives it — connecting → enter_pin → checking → paired | failed.

defineScreen("pair", {
    path: "/monitors/pair",
    role: "listener",
    title: "Pair a monitor",
    shownState: null, // the pairing state drawn last, to notice what changed
    attempts: null,
    returnTimer: null,

    init() {
        const input = $("#pin-input");
        input.addEventListener("input", () => {
            const digits = input.value.replace(/\D/g, "").slice(0, 6);
            if (digits !== input.value) input.value = digits;
            $("#pin-submit").disabled = digits.length !== 6;
            $("#pin-error").hidden = true;
            input.removeAttribute("aria-invalid");
        });
        $("#pin-form").addEventListener("submit", (event) => {
            event.preventDefault();
            this.submit();
        });
    },

    enter() {
        this.shownState = null;
        this.attempts = null;
        $("#pin-input").value = "";
        $("#pin-submit").disabled = true;
        $("#pin-error").hidden = true;
    },

    leave() {
        clearTimeout(this.returnTimer);
        this.returnTimer = null;
        // a finished pairing is cleared, so that the next one starts afresh
        const pairing = Live.state && Live.state.pairing;
        if (pairing && (pairing.state === "paired" || pairing.state === "failed")) {
            api("api/pair/cancel", { method: "POST" }).then((s) => Live.apply(s), () => {});
        }
    },

    update(state) {
        const pairing = state.pairing;
        if (!pairing) return;
        const name = pairing.name || "the monitor";
        const step = pairing.state;
        const changed = step !== this.shownState;
        const input = $("#pin-input");

        $("#pair-spinner").hidden = !(step === "connecting" || step === "checking");
        $("#pin-form").hidden = !(step === "enter_pin" || step === "checking");
        input.disabled = step === "checking";
        $("#pair-done").hidden = step !== "paired";
        $("#pair-failed").hidden = step !== "failed";
        $("#pair-done-button").hidden = step !== "paired";
        $("#pair-retry").hidden = step !== "failed";
        $("#pair-cancel").hidden = step === "paired";
        setText($("#pair-cancel"), step === "failed" ? "Back" : "Cancel");

        const titles = {
            connecting: `Connecting to ${name}…`,
            enter_pin: "Enter the PIN",
            checking: "Checking the PIN…",
            paired: `Paired with ${name}`,
            failed: "Pairing did not work",
        };
        const leads = {
            connecting: "Checking that it is the monitor you chose (its fingerprint).",
            enter_pin: `Enter PIN shown on monitor. ${name} shows 6 digits now.`,
            checking: "Making sure the PIN matches, without sending it anywhere.",
            paired: "You are back on your monitors in a moment.",
            failed: "Nothing was changed. Check the address and the PIN, then try again.",
        };
        setText($("#pair-title"), titles[step] || "Pairing…");
        setText($("#pair-lead"), leads[step] || "");
        setText($("#pair-done-title"), `Paired with ${name}`);
        setText($("#pair-error"), sentence(pairing.error) || "The monitor did not accept the pairing.");

        const attempts = pairing.attemptsRemaining;
        if (step === "enter_pin") {
            const wrong = this.attempts !== null && attempts !== null && attempts < this.attempts;
            const known = attempts !== null && attempts !== undefined;
            setText($("#pin-attempts"), known ? `Attempts left: ${attempts}` : "");
            if (wrong) {
                const words = "That PIN did not match. Check the digits on the monitor and try again.";
                $("#pin-error").textContent = words;
                $("#pin-error").hidden = false;
                input.setAttribute("aria-invalid", "true");
                input.value = "";
                $("#pin-submit").disabled = true;
                announce(words, { bad: true });
            }
            this.attempts = attempts;
            if (changed) input.focus();
        }
        if (changed) {
            const icons = { paired: "check-circle", failed: "alert-triangle" };
            setIcon($("#pair-icon svg"), icons[step] || "lock");
            const tint = { paired: "hero-green", failed: "" }[step];
            $("#pair-icon").className = `hero-icon ${tint === undefined ? "hero-blue" : tint}`;
            if (step === "paired") {
                announce(`Paired with ${name}. It is on your Monitors now.`);
                clearTimeout(this.returnTimer);
                this.returnTimer = setTimeout(() => Router.go("/monitors"), 2500);
                $("#pair-done-button").focus();
            } else if (step === "failed") {
                announce(`Pairing did not work: ${pairing.error || "the monitor did not accept it"}`, { bad: true });
                $("#pair-retry").focus();
            } else if (step === "enter_pin") {
                announce(`Enter the PIN that ${name} shows.`);
            }
        }
        this.shownState = step;
    },

    async submit() {
        const pin = $("#pin-input").value.replace(/\D/g, "");
        if (pin.length !== 6) {
            $("#pin-error").textContent = "The PIN has 6 digits.";
            $("#pin-error").hidden = false;
            return;
        }
        $("#pin-submit").disabled = true;
        const ok = await attempt(async () => Live.apply(await api("api/pair/pin", { method: "POST", body: { pin } })),
            $("#pin-error"));
        if (!ok) $("#pin-submit").disabled = false;
    },

    actions: {
        done: () => Router.go("/monitors"),
        async retry(button) {
            if (!lastPairing) {
                Router.go("/monitors/add");
                return;
            }
            button.disabled = true;
            this.shownState = null;
            this.attempts = null;
            $("#pin-input").value = "";
            await startPairing(lastPairing.target, $("#pair-error"), lastPairing.path);
            button.disabled = false;
        },
        async cancel() {
            const ok = await attempt(async () => Live.apply(await api("api/pair/cancel", { method: "POST" })));
            if (ok) {
                announce("Pairing stopped.");
                Router.go("/monitors/add");
            }
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Activity: this run's events of every monitor, told calmly in the past tense with the monitor's name.

defineScreen("activity", {
    path: "/activity",
    role: "listener",
    tab: "activity",
    title: "Activity",

    update(state) {
        const items = state.activity || [];
        const list = $("#activity-list");
        list.hidden = items.length === 0;
        $("#activity-empty").hidden = items.length > 0;
        renderList(list, items, (e) => {
            const tone = TONE_ICONS[e.tone] ? e.tone : "info";
            const detail = detailOf(e);
            return h("li", {},
                h("span", { class: `t-icon tone-${tone}` }, icon(TONE_ICONS[tone])),
                h("div", {},
                    h("p", { class: "t-title", text: e.title }),
                    detail ? h("p", { class: "t-detail", text: detail }) : null),
                h("time", {
                    class: "t-time", datetime: new Date(e.timestamp).toISOString(), text: formatTime(e.timestamp),
                }));
        });
    },
});

// ---------------------------------------------------------------------------------------------------------------
// The listener's Settings: alert sound and vibration (Alert Preferences, shared with the monitor), what a noise
// does (api/settings {"onNoise"}), Privacy, Help, version.

defineScreen("listener-settings", {
    path: "/settings",
    role: "listener",
    tab: "settings",
    title: "Settings",

    init() {
        for (const radio of $$('input[name="onNoise"]')) {
            radio.addEventListener("change", async () => {
                const words = radio.value === "open" ? "A noise now opens the stream." : "A noise now notifies you.";
                for (const r of $$('input[name="onNoise"]')) r.disabled = true;
                const ok = await attempt(async () => Live.apply(await api("api/settings", {
                    method: "POST", body: { onNoise: radio.value },
                })));
                for (const r of $$('input[name="onNoise"]')) r.disabled = false;
                if (ok) announce(`${words} Saved.`);
                else this.update(Live.state);
            });
        }
    },

    update(state) {
        const onNoise = (state.settings && state.settings.onNoise) || "notify";
        for (const radio of $$('input[name="onNoise"]')) {
            if (!radio.disabled) radio.checked = radio.value === onNoise;
        }
        const monitors = state.monitors || [];
        const sound = { "calm-chime": "Calm Chime", "soft-melody": "Soft Melody", "clear-pulse": "Clear Pulse" }[
            state.app && state.app.alertSound] || "Calm Chime";
        setText($("#lsettings-line"), `${monitors.length} monitor${monitors.length === 1 ? "" : "s"} paired · `
            + `Alert sound: ${sound}`);
        setText($("#lsettings-version"), `CribCall version ${state.version || "unknown"}`);
    },
});
