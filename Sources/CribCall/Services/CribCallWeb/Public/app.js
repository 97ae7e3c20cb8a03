// CribAlert web app: start-up. The screens are defined in screens-*.js (one module per area, keyed by name, with
// a path for the router) and drawn from the latest state cribcall sent (a monitor's or a listener's); see core.js
// for the shared parts, webrtc.js for live video and sound.
//
// Test hook: window.cribalert is a frozen, read-only view of what the page shows (see `snapshot()` below) and of
// what its streams receive (`stats()`). It holds no secret and no address.
"use strict";

// Screens shown before (or instead of) a role's own screens.
defineScreen("loading", { title: "Connecting" });
defineScreen("unsupported", { title: "Not supported" });

// ---------------------------------------------------------------------------------------------------------------
// What does not belong to one screen

/** Every Safety Alerts switch (Monitor tab, Settings) shows settings.safetyAlerts and changes it at once. */
function initSettingSwitches() {
    for (const input of $$("input[data-setting]")) {
        input.addEventListener("change", async () => {
            const key = input.dataset.setting;
            const on = input.checked;
            input.disabled = true;
            const ok = await attempt(() => saveSettings({ [key]: on }));
            input.disabled = false;
            if (ok) announce(`Safety Alerts ${on ? "on" : "off"}.`);
            else input.checked = !on;
        });
    }
}

function syncSettingSwitches(state) {
    for (const input of $$("input[data-setting]")) {
        if (input.disabled) continue; // a change is being saved
        input.checked = !!(state.settings && state.settings[input.dataset.setting]);
    }
}

/** Says out loud when monitoring pauses or resumes, whatever screen is shown. */
let monitoringChangedAt = null; // when the page last saw monitoring change (Date.now(), for the test hook)
const MonitoringNews = (() => {
    let last = null;
    return (state) => {
        const now = monitoringOf(state);
        if (now !== last) monitoringChangedAt = Date.now();
        if (last !== null && now !== last) {
            if (now === "switched_off") announce("Monitoring is off.");
            else if (last === "switched_off") announce("Monitoring is on.");
            else if (now === "active" && last !== "off") announce("Monitoring resumed.");
            else if (now === "paused" || now === "stale") {
                const reason = state.safety && state.safety.reason;
                announce(`Monitoring paused: ${reason || "the camera is not connected"}.`);
            }
        }
        last = now;
    };
})();

function render(state) {
    // Pictures only while the camera is watched and there: without --safety ("off") the monitor does not open it,
    // and while paused it is gone; each request then would only fail. (Decided before a screen asks for one.)
    // A listener has no camera of its own: its live video comes in its streams.
    const monitoring = monitoringOf(state);
    const cameraThere = !!state && state.role === "monitor" && Live.connected
        && (monitoring === "active" || monitoring === "stale");
    if (state && document.body.dataset.role !== state.role) document.body.dataset.role = state.role;
    CameraFeed.setWanted(cameraThere);
    LiveView.setAllowed(cameraThere);
    Router.render(state);
    if (!state) return;
    syncSettingSwitches(state);
    SoundBanner.update(state);
    StoreBanner(state);
    MonitoringNews(state);
    Alerts.update(state);
}

/**
 * "Tap here to turn the alarm sound on", on a parent's device (the listener's app) while the browser does not let
 * the page make sound: after a reload nobody has touched it yet, and an alarm would show without a sound. Any tap or
 * key on the page allows sound; the banner goes once the tap is over (going at once would move the page under the
 * finger), saying so. Not on the welcome screen, whose own "Continue" is that first tap.
 */
const SoundBanner = (() => {
    let allowed = false;
    let shown = false; // the banner was shown: its going is said out loud

    async function allow() {
        if (!allowed) allowed = !!(await Sounds.audioContext());
    }

    function sync() {
        const state = Live.state;
        const wanted = !allowed && !!state && state.role === "listener" && Router.current !== "welcome";
        $("#sound-banner").hidden = !wanted;
        if (wanted) shown = true;
        if (allowed && shown) {
            shown = false;
            announce("The alarm sound is on.");
        }
    }

    return {
        init() {
            for (const type of ["pointerdown", "keydown"]) {
                document.addEventListener(type, () => { allow(); }, { capture: true });
            }
            // after the tap or key is handled where it landed
            for (const type of ["click", "keyup", "pointercancel"]) {
                document.addEventListener(type, () => setTimeout(() => allow().then(sync), 0), { capture: true });
            }
            const ua = navigator.userActivation;
            if (!ua || ua.hasBeenActive) allow();
        },
        update() { sync(); },
        get allowed() { return allowed; },
    };
})();

/** The app could not read or save its data (`storeProblem`): said on every screen until it can again. */
function StoreBanner(state) {
    const problem = state.storeProblem || "";
    const banner = $("#store-banner");
    if (problem && $("#store-text").textContent !== problem) setText($("#store-text"), problem);
    banner.hidden = !problem;
}

/** The "Reconnecting to the monitor…" banner; it appears only after a short grace, not on a brief hiccup. */
const ConnectionBanner = (() => {
    let timer = null;
    let shown = false;
    // a listener's page talks to cribcall listen on this computer, not to a monitor
    const what = () => (Live.state && Live.state.role === "listener" ? "CribCall" : "the monitor");
    return (connected) => {
        clearTimeout(timer);
        if (connected) {
            if (shown) announce(`Connected to ${what()} again.`);
            shown = false;
            $("#offline-banner").hidden = true;
        } else {
            timer = setTimeout(() => {
                shown = true;
                const words = Live.linkRefused
                    ? `This link no longer opens ${what()}: it was restarted. Run cribcall open for the new link.`
                    : `Reconnecting to ${what()}…`;
                setText($("#offline-text"), words);
                $("#offline-banner").hidden = false;
                announce(words, { bad: true });
            }, 1500);
        }
        render(Live.state);
    };
})();

// ---------------------------------------------------------------------------------------------------------------
// Test hook

function snapshot() {
    const state = Live.state;
    return JSON.parse(JSON.stringify({
        screen: Router.current,
        connected: Live.connected,
        role: state ? state.role : null,
        monitoring: state ? monitoringOf(state) : null,
        monitoringChangedAt, // with safetyUpdatedAt (the monitor's clock, the same machine): how late the page was
        safetyUpdatedAt: state && state.safety ? state.safety.updatedAt : null,
        babyName: state ? state.app.babyName : null,
        alertShown: Alerts.shown,
        alertShownAt: Alerts.shown ? Alerts.shownAt : null, // performance.now() when it appeared
        status: Status.text,
        soundAllowed: SoundBanner.allowed,
        cameraAvailable: CameraFeed.available,
        live: LiveView.status(), // the monitor's own live view: {mode: idle|connecting|webrtc|pictures, reason, …}
        players: Players.list(), // a listener's streams playing in this page
    }));
}

/** What the page's WebRTC connections receive (inbound RTP figures and codecs), by session. */
async function stats() {
    const out = { players: await Players.stats(), live: await LiveView.stats() };
    return JSON.parse(JSON.stringify(out));
}

Object.defineProperty(window, "cribalert", {
    value: Object.freeze({ snapshot, stats }),
    writable: false,
    configurable: false,
    enumerable: true,
});

// ---------------------------------------------------------------------------------------------------------------
// Start

/** "Skip to content" moves focus to the screen's heading (a "#main" address would be taken for a route). */
function initSkipLink() {
    $(".skip-link").addEventListener("click", (event) => {
        event.preventDefault();
        const heading = $("section[data-screen]:not([hidden]) h1[tabindex]");
        (heading || $("#main")).focus();
    });
}

fillIcons();
initSkipLink();
initScreens();
initSettingSwitches();
SoundBanner.init();
Alerts.init();
Live.onState(render);
Live.onConnection(ConnectionBanner);
render(null);
Live.start();
