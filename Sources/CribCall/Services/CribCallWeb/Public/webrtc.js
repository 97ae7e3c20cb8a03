// CribAlert web app: live video and sound over WebRTC — the helpers both roles share (answering an offer, ICE
// candidates, statistics, a sound meter) and the monitor's own live view (api/live), which falls back to the
// camera's pictures (api/camera.jpg) when WebRTC is not available.
//
// Everything stays on the LAN: peer connections have no STUN or TURN server (iceServers: []), and the media is
// encrypted by DTLS-SRTP between the monitor and this page.
"use strict";

const RTC = (() => {
    const GATHER_MS = 2000; // the page's candidates: at most this long (on a LAN, host candidates come at once)

    /** A candidate from the server ({candidate, sdpMid, sdpMLineIndex}) as RTCIceCandidateInit; null: the end. */
    function candidateInit(c) {
        if (!c || typeof c.candidate !== "string" || c.candidate.trim() === "") return null;
        const init = { candidate: c.candidate.replace(/^a=/, "") };
        if (typeof c.sdpMid === "string") init.sdpMid = c.sdpMid;
        if (Number.isInteger(c.sdpMLineIndex)) init.sdpMLineIndex = c.sdpMLineIndex;
        // neither given: the first media line (the offers are bundled on one transport)
        if (init.sdpMid === undefined && init.sdpMLineIndex === undefined) init.sdpMLineIndex = 0;
        return init;
    }

    /** A gathered candidate as the server reads it. */
    function candidateJSON(c) {
        return { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex };
    }

    /**
     * A peer connection that receives one offer. Remote candidates that come before the offer is set wait for it;
     * the page's own candidates are gathered (at most 2 s) and handed over with the answer, not trickled.
     */
    class Receiver {
        constructor() {
            this.pc = new RTCPeerConnection({ iceServers: [] });
            this.queued = [];
            this.remoteSet = false;
            this.gathered = [];
            this.closed = false;
            this.pc.addEventListener("icecandidate", (e) => {
                if (e.candidate && e.candidate.candidate) this.gathered.push(candidateJSON(e.candidate));
            });
        }

        /** Adds a remote candidate now, or once the offer is set; an empty one (the end of them) is ignored. */
        async addCandidate(c) {
            const init = candidateInit(c);
            if (!init || this.closed) return;
            if (!this.remoteSet) {
                this.queued.push(init);
                return;
            }
            try {
                await this.pc.addIceCandidate(init);
            } catch (_) {
                // a candidate this browser cannot use (another address family, a stale media line): others may do
            }
        }

        /** Sets the offer, adds `candidates` and the queued ones, answers. Resolves {sdp, candidates}. */
        async answer(offerSdp, candidates = []) {
            await this.pc.setRemoteDescription({ type: "offer", sdp: offerSdp });
            this.remoteSet = true;
            const waiting = this.queued.splice(0);
            for (const c of candidates) {
                const init = candidateInit(c);
                if (init) waiting.push(init);
            }
            for (const init of waiting) {
                try {
                    await this.pc.addIceCandidate(init);
                } catch (_) {
                    // as in addCandidate
                }
            }
            await this.pc.setLocalDescription(await this.pc.createAnswer());
            await this.gathering();
            return { sdp: this.pc.localDescription.sdp, candidates: this.gathered.slice() };
        }

        /** Resolves when the page's ICE gathering is complete, or after GATHER_MS. */
        gathering() {
            const pc = this.pc;
            if (pc.iceGatheringState === "complete") return Promise.resolve();
            return new Promise((resolve) => {
                const done = () => {
                    clearTimeout(timer);
                    pc.removeEventListener("icegatheringstatechange", check);
                    resolve();
                };
                const check = () => { if (pc.iceGatheringState === "complete") done(); };
                const timer = setTimeout(done, GATHER_MS);
                pc.addEventListener("icegatheringstatechange", check);
            });
        }

        close() {
            if (this.closed) return;
            this.closed = true;
            try {
                this.pc.close();
            } catch (_) {
                // already closed
            }
        }
    }

    /**
     * What arrives, from pc.getStats(): per kind the inbound RTP figures and the codec, and the ICE pair in use.
     * {video: {framesDecoded, framesReceived, frameWidth, frameHeight, packetsReceived, packetsLost, codec,
     * decoder}, audio: {packetsReceived, packetsLost, totalAudioEnergy, audioLevel, codec}, transport: {…}}
     */
    async function inboundStats(pc) {
        const report = await pc.getStats();
        const codecs = new Map();
        const out = { video: null, audio: null, transport: null };
        report.forEach((s) => { if (s.type === "codec") codecs.set(s.id, s); });
        report.forEach((s) => {
            if (s.type === "inbound-rtp" && (s.kind === "video" || s.kind === "audio")) {
                const codec = codecs.get(s.codecId);
                const figures = {
                    packetsReceived: s.packetsReceived || 0,
                    packetsLost: s.packetsLost || 0,
                    bytesReceived: s.bytesReceived || 0,
                    codec: codec ? `${codec.mimeType}${codec.sdpFmtpLine ? ` (${codec.sdpFmtpLine})` : ""}` : null,
                };
                if (s.kind === "video") {
                    Object.assign(figures, {
                        framesDecoded: s.framesDecoded || 0,
                        framesReceived: s.framesReceived || 0,
                        framesDropped: s.framesDropped || 0,
                        keyFramesDecoded: s.keyFramesDecoded || 0,
                        frameWidth: s.frameWidth || 0,
                        frameHeight: s.frameHeight || 0,
                        decoder: s.decoderImplementation || null,
                        pliCount: s.pliCount || 0,
                    });
                } else {
                    Object.assign(figures, {
                        totalAudioEnergy: s.totalAudioEnergy || 0,
                        audioLevel: s.audioLevel || 0,
                        totalSamplesReceived: s.totalSamplesReceived || 0,
                        concealedSamples: s.concealedSamples || 0,
                    });
                }
                out[s.kind] = figures;
            }
            if (s.type === "candidate-pair" && s.state === "succeeded" && s.nominated) {
                const local = report.get(s.localCandidateId);
                const remote = report.get(s.remoteCandidateId);
                out.transport = {
                    local: local ? `${local.candidateType} ${local.address || ""}:${local.port}` : null,
                    remote: remote ? `${remote.candidateType} ${remote.address || ""}:${remote.port}` : null,
                    roundTripMs: s.currentRoundTripTime ? Math.round(s.currentRoundTripTime * 1000) : null,
                };
            }
        });
        return out;
    }

    return Object.freeze({ Receiver, inboundStats, candidateInit });
})();

// ---------------------------------------------------------------------------------------------------------------
// A sound meter on a received stream: WebAudio's AnalyserNode (not connected to the speakers: the page's <audio>
// element plays the sound). The level is the monitor's own scale: dBFS + 90, times 100/90 (−45 dBFS → 50).

class SoundMeter {
    /** `onLevel(level 0…100)` about ten times a second while the stream has sound. */
    constructor(track, onLevel) {
        this.track = track;
        this.onLevel = onLevel;
        this.timer = null;
        this.source = null;
        this.analyser = null;
        this.level = 0;
    }

    /** Starts measuring; resolves false when the browser does not let the page use WebAudio yet. */
    async start() {
        if (this.analyser) return true;
        const ctx = await Sounds.audioContext();
        if (!ctx || !this.track || this.track.readyState === "ended") return false;
        this.source = ctx.createMediaStreamSource(new MediaStream([this.track]));
        this.analyser = ctx.createAnalyser();
        this.analyser.fftSize = 2048;
        this.source.connect(this.analyser);
        const samples = new Float32Array(this.analyser.fftSize);
        this.timer = setInterval(() => {
            this.analyser.getFloatTimeDomainData(samples);
            let sum = 0;
            for (const v of samples) sum += v * v;
            const rms = Math.sqrt(sum / samples.length);
            const db = rms > 0 ? 20 * Math.log10(rms) : -90;
            this.level = Math.round(Math.min(100, Math.max(0, (db + 90) * 100 / 90)));
            this.onLevel(this.level);
        }, 100);
        return true;
    }

    stop() {
        clearInterval(this.timer);
        this.timer = null;
        try {
            if (this.source) this.source.disconnect();
        } catch (_) {
            // the context closed first
        }
        this.source = null;
        this.analyser = null;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The monitor's live view: one WebRTC session from the monitor's own pipeline (POST api/live), shown in every
// visible <video data-live> (the Monitor tab's preview, the alert's preview). Muted: the nursery device must not
// play its own microphone. When WebRTC is not available (503: no plugins, no camera) or does not connect within
// 8 s, the previews show the camera's pictures instead (CameraFeed), and say so quietly.

const LiveView = (() => {
    const CONNECT_MS = 8000;
    const END_GRACE_MS = 1500; // leaving one preview for another (the alert's "View live camera") keeps the view
    const RETRY_AFTER_MS = 60000; // after a failure, pictures for a while before WebRTC is tried again

    const wants = new Set(); // who wants the live view now ("monitor", "alert")
    let allowed = false; // the camera is there (monitoring active or stale)
    let mode = "idle"; // idle | connecting | webrtc | pictures
    let reason = ""; // why pictures
    let failedAt = 0;
    let session = null; // {id, receiver, stream, timer}
    let run = 0; // a newer start (or an end) makes an older one's answers stale
    let endTimer = null;
    let connectedAt = null;
    let startedAt = null;

    function videos() {
        return $$("video[data-live]");
    }

    /**
     * Shows the video or the pictures in every preview that has a live view. While connecting, the video lies
     * over the picture (a video element is transparent until its first frame); once frames come, the picture is
     * hidden and no longer fetched.
     */
    function draw() {
        const attached = !!session && (mode === "connecting" || mode === "webrtc");
        const framed = attached && mode === "webrtc";
        for (const video of videos()) {
            const preview = video.closest(".preview");
            const img = $("img[data-camera]", preview);
            const note = $(".preview-note", preview);
            if (attached) {
                if (video.srcObject !== session.stream) video.srcObject = session.stream;
                video.hidden = false;
            } else {
                if (video.srcObject) video.srcObject = null;
                video.hidden = true;
            }
            if (img) img.hidden = framed;
            const missing = $(".preview-missing", preview);
            if (framed) {
                fitToVideo(video, preview);
                preview.classList.remove("unavailable");
                if (missing) missing.hidden = true;
            } else if (!allowed) {
                // The camera went away while the video showed: say so, as the pictures do.
                preview.classList.add("unavailable");
                if (missing) missing.hidden = false;
            }
            preview.classList.toggle("webrtc", framed);
            if (note) {
                const words = mode === "pictures" && allowed ? `Still pictures: ${reason}.` : "";
                note.hidden = !words;
                setText(note, words);
            }
        }
        if (!framed) CameraFeed.retry();
    }

    /** The preview takes the video's proportions (as CameraFeed gives it the picture's, which come back with it). */
    function fitToVideo(video, preview) {
        if (!video.videoWidth || !video.videoHeight) return;
        const ratio = `${video.videoWidth} / ${video.videoHeight}`;
        if (preview.style.aspectRatio === ratio) return;
        preview.style.aspectRatio = ratio;
        preview.parentElement.style.setProperty("--ratio", String(video.videoWidth / video.videoHeight));
    }

    /** Someone shows (or stops showing) a preview with a live view. */
    function want(who, on) {
        if (on) wants.add(who);
        else wants.delete(who);
        settle();
    }

    /** Whether the camera is there at all (paused monitoring: no live view, no pictures). */
    function setAllowed(value) {
        if (allowed === value) return;
        allowed = value;
        settle();
    }

    function settle() {
        const needed = allowed && wants.size > 0;
        if (needed) {
            clearTimeout(endTimer);
            endTimer = null;
            if (mode === "idle" || (mode === "pictures" && Date.now() - failedAt > RETRY_AFTER_MS)) start();
            else draw();
        } else if (session || mode === "connecting") {
            if (!endTimer) endTimer = setTimeout(() => { endTimer = null; stop("idle"); }, allowed ? END_GRACE_MS : 0);
            draw();
        } else {
            if (!allowed && mode === "pictures") mode = "idle"; // the camera is back later: try WebRTC again
            draw();
        }
    }

    async function start() {
        if (typeof RTCPeerConnection !== "function") return fallBack("this browser has no WebRTC");
        const mine = ++run;
        mode = "connecting";
        startedAt = Date.now();
        connectedAt = null;
        draw();
        let offer;
        try {
            offer = await api("api/live", { method: "POST", body: { mediaType: "audio_video" } });
        } catch (e) {
            if (mine !== run) return undefined;
            const refused = e instanceof ApiError && e.status === 503;
            return fallBack(refused ? e.message : `the live video did not start (${e.message})`);
        }
        if (mine !== run) {
            endOnServer(offer.sessionId);
            return undefined;
        }
        const receiver = new RTC.Receiver();
        session = { id: offer.sessionId, receiver, stream: new MediaStream(), timer: null };
        const current = session;
        receiver.pc.addEventListener("track", (e) => {
            current.stream.addTrack(e.track);
            draw();
        });
        receiver.pc.addEventListener("connectionstatechange", () => {
            const state = receiver.pc.connectionState;
            if (current !== session) return;
            if (state === "failed") fallBack("the live video's connection failed");
        });
        current.timer = setTimeout(() => {
            if (current === session && mode !== "webrtc") fallBack("the live video did not arrive in time");
        }, CONNECT_MS);
        try {
            const answer = await receiver.answer(offer.sdp, offer.candidates || []);
            if (current !== session) return undefined;
            const reply = await api(`api/live/${encodeURIComponent(offer.sessionId)}/answer`, {
                method: "POST", body: answer,
            });
            // the monitor's own candidates, should it give them with its reply
            if (reply && Array.isArray(reply.candidates)) {
                for (const c of reply.candidates) await receiver.addCandidate(c);
            }
        } catch (e) {
            if (current === session) fallBack(`the live video could not be answered (${e.message})`);
            return undefined;
        }
        return undefined;
    }

    /** The first frame has arrived in a preview: the live video is shown from now on. */
    function watchFirstFrame() {
        if (!session || mode !== "connecting") return;
        const shown = videos().some((v) => v.srcObject === session.stream && v.videoWidth > 0);
        if (!shown) {
            for (const v of videos()) if (v.srcObject === session.stream && v.paused) v.play().catch(() => {});
            return;
        }
        clearTimeout(session.timer);
        connectedAt = Date.now();
        mode = "webrtc";
        draw();
    }

    function fallBack(why) {
        reason = why;
        failedAt = Date.now();
        stop("pictures");
    }

    function stop(next) {
        run += 1;
        if (session) {
            clearTimeout(session.timer);
            session.receiver.close();
            endOnServer(session.id);
            session = null;
        }
        mode = next;
        draw();
    }

    function endOnServer(id) {
        if (!id) return;
        // best effort: the monitor also ends views whose page went away
        api(`api/live/${encodeURIComponent(id)}/end`, { method: "POST" }).catch(() => {});
    }

    // While connecting: has a frame arrived? (cheap: one property per preview, five times a second)
    setInterval(watchFirstFrame, 200);
    // the monitor may change the video's size (480p on a weak link): the preview follows
    for (const video of videos()) video.addEventListener("resize", () => { if (mode === "webrtc") draw(); });

    // The page goes away: its view ends now (a beacon still leaves while the page unloads; the monitor also ends
    // the views of pages that are gone).
    window.addEventListener("pagehide", () => {
        if (!session) return;
        const id = session.id;
        session.receiver.close();
        session = null;
        mode = "idle";
        if (!navigator.sendBeacon || !navigator.sendBeacon(`api/live/${encodeURIComponent(id)}/end`)) endOnServer(id);
    });

    return Object.freeze({
        want,
        setAllowed,
        get mode() { return mode; },
        get reason() { return reason; },
        get sessionId() { return session ? session.id : null; },
        /** For the test hook: what is shown and how long it took. */
        status() {
            return {
                mode, reason: mode === "pictures" ? reason : null, sessionId: session ? session.id : null,
                connectMs: connectedAt && startedAt ? connectedAt - startedAt : null,
            };
        },
        async stats() {
            return session ? RTC.inboundStats(session.receiver.pc) : null;
        },
    });
})();
