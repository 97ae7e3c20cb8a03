// CribAlert web app: the alert sounds, synthesised with WebAudio (no audio files), and vibration patterns.
//
// Browsers only let a page make sound after the person has interacted with it (a click, a key). Before that,
// nothing is attempted: creating an AudioContext too early only earns a console warning and a silent context.
"use strict";

const Sounds = (() => {
    /** Each sound is a few notes: start (s), frequency (Hz), length (s), waveform, loudness, bell overtone. */
    const SOUNDS = Object.freeze({
        // two soft bell tones, falling: calm, and distinct from anything a phone usually plays
        "calm-chime": [
            { at: 0.0, f: 783.99, d: 1.6, type: "sine", g: 0.8, bell: true },
            { at: 0.45, f: 659.25, d: 2.0, type: "sine", g: 0.7, bell: true },
        ],
        // a rising four-note arpeggio (C E G E), gentle triangle tones
        "soft-melody": [
            { at: 0.0, f: 523.25, d: 0.5, type: "triangle", g: 0.6 },
            { at: 0.28, f: 659.25, d: 0.5, type: "triangle", g: 0.6 },
            { at: 0.56, f: 783.99, d: 0.5, type: "triangle", g: 0.6 },
            { at: 0.84, f: 659.25, d: 0.9, type: "triangle", g: 0.55 },
        ],
        // three short, clear pulses: the easiest to hear through a closed door
        "clear-pulse": [
            { at: 0.0, f: 880, d: 0.16, type: "sine", g: 0.9 },
            { at: 0.28, f: 880, d: 0.16, type: "sine", g: 0.9 },
            { at: 0.56, f: 880, d: 0.16, type: "sine", g: 0.9 },
        ],
    });

    /** Vibration patterns (ms on, off, on, …) for navigator.vibrate. */
    const VIBRATIONS = Object.freeze({
        heartbeat: [120, 120, 120, 700, 120, 120, 120],
        sos: [100, 100, 100, 100, 100, 300, 300, 100, 300, 100, 300, 300, 100, 100, 100, 100, 100],
        continuous: [1000, 200, 1000, 200, 1000],
    });

    let ctx = null;

    /** Whether the person has interacted with the page, so that sound and vibration are allowed. */
    function activated() {
        const ua = navigator.userActivation;
        return ua ? ua.hasBeenActive : true;
    }

    /** A running AudioContext, or null when the browser has none or does not allow sound yet. */
    async function context() {
        if (!activated()) return null;
        const AudioContextClass = window.AudioContext || window.webkitAudioContext;
        if (!AudioContextClass) return null;
        if (!ctx) ctx = new AudioContextClass();
        if (ctx.state !== "running") {
            // resume() may stay pending for ever when not allowed: do not wait more than a moment
            await Promise.race([ctx.resume().catch(() => {}), new Promise((r) => setTimeout(r, 300))]);
        }
        return ctx.state === "running" ? ctx : null;
    }

    /** Loudness from the 0–100 volume setting: squared, since hearing is closer to logarithmic than linear. */
    function gainFor(volume) {
        const v = Math.max(0, Math.min(100, Number(volume) || 0)) / 100;
        return v * v * 0.6;
    }

    function note(ac, out, n, t0) {
        const start = t0 + n.at;
        const env = ac.createGain();
        env.gain.setValueAtTime(0.0001, start);
        env.gain.exponentialRampToValueAtTime(n.g, start + 0.02);
        env.gain.exponentialRampToValueAtTime(0.0001, start + n.d);
        env.connect(out);
        const partials = n.bell ? [[1, 1], [2.01, 0.25], [3.0, 0.08]] : [[1, 1]];
        for (const [ratio, level] of partials) {
            const osc = ac.createOscillator();
            const g = ac.createGain();
            osc.type = n.type;
            osc.frequency.value = n.f * ratio;
            g.gain.value = level;
            osc.connect(g).connect(env);
            osc.start(start);
            osc.stop(start + n.d + 0.05);
        }
    }

    /**
     * Plays the sound `name` at `volume` (0–100). Resolves true when it plays, false when the browser does not
     * allow sound yet (never rejects: an alert must not fail because its sound could not play).
     */
    async function play(name, volume) {
        try {
            const ac = await context();
            if (!ac) return false;
            const notes = SOUNDS[name] || SOUNDS["calm-chime"];
            const out = ac.createGain();
            out.gain.value = gainFor(volume);
            out.connect(ac.destination);
            const t0 = ac.currentTime + 0.03;
            for (const n of notes) note(ac, out, n, t0);
            const end = Math.max(...notes.map((n) => n.at + n.d)) + 0.2;
            setTimeout(() => out.disconnect(), end * 1000 + 100);
            return true;
        } catch (_) {
            return false;
        }
    }

    /** Whether this device can vibrate at all (phones; desktops usually cannot). */
    function canVibrate() {
        return typeof navigator.vibrate === "function" && matchMedia("(pointer: coarse)").matches;
    }

    /** Vibrates in `pattern` where possible; silently nothing elsewhere. */
    function vibrate(pattern) {
        if (!canVibrate() || !activated()) return false;
        try {
            return navigator.vibrate(VIBRATIONS[pattern] || VIBRATIONS.heartbeat);
        } catch (_) {
            return false;
        }
    }

    return Object.freeze({
        play,
        vibrate,
        canVibrate,
        /** The page's running AudioContext (also for sound meters), or null while sound is not allowed yet. */
        audioContext: context,
        names: Object.keys(SOUNDS),
    });
})();
