// CribAlert web app: what every screen shares — DOM helpers, the API client, the live state from cribcall
// (Server-Sent Events), the status region, the router and the camera preview. The same page serves both roles:
// `cribcall monitor --web` (state.role "monitor") and `cribcall listen --web` (state.role "listener").
//
// Contract: ../README.md (paths, JSON shapes). The page lives under /s/<secret>/, so every address here is
// relative ("api/state", never "/api/state").
"use strict";

// ---------------------------------------------------------------------------------------------------------------
// DOM helpers

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/**
 * Creates an element: h("li", {class: "row", text: "Hello", "aria-label": "…"}, child, …). `text` sets the text
 * content (never HTML), `on<event>` adds a listener, `dataset` copies data-* values; null/false props are skipped.
 */
function h(tag, props = {}, ...children) {
    const el = tag === "svg"
        ? document.createElementNS("http://www.w3.org/2000/svg", tag)
        : document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
        if (value === null || value === undefined || value === false) continue;
        if (key === "class") el.setAttribute("class", value);
        else if (key === "text") el.textContent = value;
        else if (key === "dataset") Object.assign(el.dataset, value);
        else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
        else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
        if (child !== null && child !== undefined && child !== false) el.append(child);
    }
    return el;
}

/**
 * Replaces the children of `container` with `build(item)` for each item — only when the items changed, so that
 * ten state updates a second do not rebuild lists (and lose keyboard focus) for nothing. Focus stays on the
 * element with the same data-key when it is rebuilt.
 */
function renderList(container, items, build, extra = "") {
    const signature = JSON.stringify(items) + "|" + extra;
    if (container.dataset.signature === signature) return false;
    container.dataset.signature = signature;
    const active = document.activeElement;
    const focusKey = active && container.contains(active) ? active.dataset.key : null;
    container.replaceChildren(...items.map(build));
    if (focusKey) {
        const again = $$("[data-key]", container).find((e) => e.dataset.key === focusKey);
        if (again) again.focus({ preventScroll: true });
    }
    return true;
}

/** Sets `text` only when it differs (no needless DOM mutations, no repeated screen-reader announcements). */
function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting (local time, the seed's "02:15 AM" style)

const TIME_FORMAT = new Intl.DateTimeFormat("en-US", { hour: "2-digit", minute: "2-digit", hour12: true });

function formatTime(ms) {
    return TIME_FORMAT.format(new Date(ms));
}

/**
 * The dark screen: on when the parent chose it on this device ("Dark screen", kept in localStorage), or when the
 * device itself is in dark mode. Sets html[data-theme]; style.css does the rest.
 */
const Theme = (() => {
    const KEY = "cribcall.darkScreen";
    const media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    const chosen = () => {
        try {
            return localStorage.getItem(KEY) === "on";
        } catch (_) {
            return false;
        }
    };
    function apply() {
        const dark = chosen() || (!!media && media.matches);
        document.documentElement.dataset.theme = dark ? "dark" : "light";
        const meta = document.querySelector('meta[name="theme-color"]');
        if (meta) meta.content = dark ? "#0B0F14" : "#F9FAFB";
    }
    if (media && media.addEventListener) media.addEventListener("change", apply);
    apply();
    return Object.freeze({
        apply,
        get chosen() { return chosen(); },
        choose(on) {
            try {
                if (on) localStorage.setItem(KEY, "on");
                else localStorage.removeItem(KEY);
            } catch (_) {
                // storage refused (a private window): this page still follows the switch until it reloads
            }
            apply();
            if (on && !chosen()) document.documentElement.dataset.theme = "dark";
        },
    });
})();

/** How long ago `ms` was, in calm words: "just now", "3 min ago", "2 h 5 min ago". */
function ago(ms, now = Date.now()) {
    const minutes = Math.max(0, Math.floor((now - ms) / 60000));
    if (minutes < 1) return "just now";
    if (minutes < 60) return `${minutes} min ago`;
    return `${Math.floor(minutes / 60)} h ${minutes % 60} min ago`;
}

/** 19200 → "5h 20m"; 1200 → "20m". */
function formatDuration(sec) {
    const minutes = Math.max(0, Math.round((Number(sec) || 0) / 60));
    const hours = Math.floor(minutes / 60);
    return hours > 0 ? `${hours}h ${minutes % 60}m` : `${minutes}m`;
}

/** Milliseconds left → "4:07"; the words for screen readers → "4 minutes 7 seconds". */
function formatCountdown(msLeft) {
    const total = Math.max(0, Math.ceil(msLeft / 1000));
    return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

/** The baby's name for sentences, or a calm stand-in until one is set. */
function babyName(state) {
    const name = state && state.app && typeof state.app.babyName === "string" ? state.app.babyName.trim() : "";
    return name || "Baby";
}

/** "Liam's", and "James'" is avoided: English usage accepts "James's", which reads naturally aloud. */
function possessive(name) {
    return `${name}'s`;
}

// ---------------------------------------------------------------------------------------------------------------
// API client

class ApiError extends Error {
    constructor(status, message) {
        super(message);
        this.status = status;
    }
}

/** Calls cribcall's API; resolves with the JSON answer, rejects with an ApiError carrying the server's words. */
async function api(path, { method = "GET", body } = {}) {
    const init = { method, cache: "no-store", headers: {} };
    if (body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
    }
    let response;
    try {
        response = await fetch(path, init);
    } catch (_) {
        throw new ApiError(0, "CribCall on this computer cannot be reached. Is cribcall still running?");
    }
    let data = null;
    try {
        data = await response.json();
    } catch (_) {
        data = null;
    }
    if (!response.ok) {
        const said = data && typeof data.error === "string" ? data.error : null;
        throw new ApiError(response.status, said || `CribCall answered ${response.status}.`);
    }
    return data;
}

/** POST api/app with a partial `app` object; the answer is the new state. */
async function saveApp(partial) {
    Live.apply(await api("api/app", { method: "POST", body: partial }));
}

/** POST api/settings with a partial `settings` object; the answer is the new state. */
async function saveSettings(partial) {
    Live.apply(await api("api/settings", { method: "POST", body: partial }));
}

// ---------------------------------------------------------------------------------------------------------------
// Status region (aria-live) and toast

const Status = (() => {
    const region = () => $("#status");
    let fadeTimer = null;
    let last = "";

    /**
     * Shows `text` for a few seconds and has screen readers announce it; `quiet` only announces it (for words that
     * are on the screen already).
     */
    function announce(text, { bad = false, quiet = false } = {}) {
        const el = region();
        // The same words twice in a row are not announced again by screen readers: vary them invisibly.
        el.textContent = text === last ? text + "\u00a0" : text;
        last = el.textContent;
        el.classList.toggle("bad", bad);
        el.classList.toggle("quiet", quiet);
        el.classList.remove("faded");
        clearTimeout(fadeTimer);
        fadeTimer = setTimeout(() => el.classList.add("faded"), bad ? 8000 : 5000);
    }

    return Object.freeze({ announce, get text() { return region().textContent.trim(); } });
})();

function announce(text, options) {
    Status.announce(text, options);
}

/** Puts `text` on the clipboard (the Clipboard API, else a selected text area); true when it was copied. */
async function copyText(text) {
    try {
        await navigator.clipboard.writeText(text);
        return true;
    } catch (_) {
        const area = h("textarea", { class: "visually-hidden" });
        area.value = text;
        document.body.append(area);
        area.select();
        let copied = false;
        try {
            copied = document.execCommand("copy");
        } catch (_) {
            copied = false;
        }
        area.remove();
        return copied;
    }
}

/** Runs an API action; a refusal is said in the status region (and in `errorEl`, when given). */
async function attempt(action, errorEl = null) {
    if (errorEl) errorEl.hidden = true;
    try {
        await action();
        return true;
    } catch (e) {
        const message = e instanceof ApiError ? e.message : `Something went wrong: ${e && e.message ? e.message : e}`;
        if (errorEl) {
            errorEl.textContent = message;
            errorEl.hidden = false;
        }
        announce(message, { bad: true });
        return false;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Live state: GET api/state once, then Server-Sent Events on api/events: "state", "level" (the monitor's sound
// level) and "stream" (the listener's stream signaling: offers, candidates and ends for the page to act on)

const Live = (() => {
    const stateListeners = new Set();
    const levelListeners = new Set();
    const streamListeners = new Set();
    const connectionListeners = new Set();
    let state = null;
    let connected = false;
    let linkRefused = false; // the monitor refuses this page's secret (it restarted with a new one)
    let source = null;
    let restartTimer = null;

    function apply(next) {
        if (!next || typeof next !== "object") return;
        state = next;
        for (const fn of stateListeners) fn(state);
    }

    function setConnected(value, refused = false) {
        if (connected === value && linkRefused === refused) return;
        connected = value;
        linkRefused = refused;
        for (const fn of connectionListeners) fn(connected);
    }

    /** Why the stream was closed: a monitor that restarted has a new secret and refuses this page's (403). */
    async function diagnose() {
        let status = 0;
        try {
            status = (await fetch("api/state", { cache: "no-store" })).status;
        } catch (_) {
            status = 0;
        }
        setConnected(false, status === 403);
        // a refused link will not work again by itself: ask less often
        restartTimer = setTimeout(open, status === 403 ? 30000 : 5000);
    }

    function open() {
        clearTimeout(restartTimer);
        source = new EventSource("api/events");
        source.addEventListener("open", () => setConnected(true));
        source.addEventListener("state", (e) => {
            setConnected(true);
            try {
                apply(JSON.parse(e.data));
            } catch (_) {
                // a damaged event: the next one carries the whole state again
            }
        });
        source.addEventListener("level", (e) => {
            let level;
            try {
                level = Number(JSON.parse(e.data).level);
            } catch (_) {
                return;
            }
            if (Number.isFinite(level)) for (const fn of levelListeners) fn(level);
        });
        source.addEventListener("stream", (e) => {
            let signal;
            try {
                signal = JSON.parse(e.data);
            } catch (_) {
                return;
            }
            if (signal && typeof signal.sessionId === "string") for (const fn of streamListeners) fn(signal);
        });
        source.addEventListener("error", () => {
            setConnected(false);
            // EventSource retries by itself while CONNECTING; once CLOSED (an HTTP error) it never will: we do.
            if (source.readyState === EventSource.CLOSED) {
                source.close();
                diagnose();
            }
        });
    }

    async function start() {
        open();
        try {
            const first = await api("api/state");
            if (!state) {
                // the event stream may have been quicker; if not, the monitor answered, so it is reachable
                if (source.readyState !== EventSource.CLOSED) setConnected(true);
                apply(first);
            }
        } catch (_) {
            // the event stream reports the connection; its first event carries the state
        }
    }

    /** Fetches the whole state again now (after "Reconnect camera"). */
    async function refresh() {
        apply(await api("api/state"));
    }

    return Object.freeze({
        start,
        apply,
        refresh,
        get state() { return state; },
        get connected() { return connected; },
        get linkRefused() { return linkRefused; },
        onState: (fn) => stateListeners.add(fn),
        onLevel: (fn) => levelListeners.add(fn),
        onStream: (fn) => streamListeners.add(fn),
        onConnection: (fn) => connectionListeners.add(fn),
    });
})();

/** "active" | "paused" | "stale" | "off" (safety detection not running: no --safety). */
function monitoringOf(state) {
    // Start/Stop monitoring (the monitor's own switch) comes before what the camera can see.
    if (state && state.role === "monitor" && state.settings && state.settings.monitoring === false) return "switched_off";
    if (!state || !state.camera || state.camera.watched === false || !state.safety) return "off";
    return state.safety.monitoring || "paused";
}

// ---------------------------------------------------------------------------------------------------------------
// Camera preview: every visible <img data-camera> shows api/camera.jpg, refreshed about four times a second

const CameraFeed = (() => {
    const INTERVAL_MS = 250;
    const RETRY_MS = [2000, 5000, 10000, 30000];
    let wanted = false; // only while monitoring is active or stale: otherwise the camera is known to be away
    let failed = false; // the last picture did not load: wait for a retry
    let failures = 0;
    let inFlight = false;
    let retryTimer = null;
    let ok = false;

    function visibleImages() {
        return $$("img[data-camera]").filter((img) => img.offsetParent !== null);
    }

    function markPreviews(available) {
        ok = available;
        for (const img of $$("img[data-camera]")) {
            const preview = img.closest(".preview");
            preview.classList.toggle("unavailable", !available);
            const missing = $(".preview-missing", preview);
            if (missing) missing.hidden = available;
        }
    }

    /** Loads the next picture into the visible previews; the previous one stays until it has arrived. */
    function tick() {
        if (!wanted || failed || inFlight || document.hidden) return;
        const images = visibleImages();
        if (images.length === 0) return;
        // ?t= makes every request a new address: no cache may answer it with an old picture
        const url = `api/camera.jpg?t=${Date.now()}`;
        const [first, ...others] = images;
        inFlight = true;
        const done = (loaded) => {
            first.removeEventListener("load", onLoad);
            first.removeEventListener("error", onError);
            inFlight = false;
            if (loaded) {
                failures = 0;
                fitPreview(first);
                // the same address again is answered from the page's image memory, not the network
                for (const img of others) {
                    img.src = url;
                    fitPreview(img);
                }
                if (!ok) markPreviews(true);
            } else {
                onFailure();
            }
        };
        const onLoad = () => done(true);
        const onError = () => done(false);
        first.addEventListener("load", onLoad);
        first.addEventListener("error", onError);
        first.src = url;
    }

    /**
     * The preview takes the picture's own proportions, so that the sleep area maps onto the picture exactly;
     * --ratio (on the preview's parent, for the sleep-area editor's frame too) lets CSS limit its width.
     */
    function fitPreview(img) {
        if (!img.naturalWidth || !img.naturalHeight) return;
        const ratio = `${img.naturalWidth} / ${img.naturalHeight}`;
        const preview = img.closest(".preview");
        if (preview.style.aspectRatio === ratio) return;
        preview.style.aspectRatio = ratio;
        preview.parentElement.style.setProperty("--ratio", String(img.naturalWidth / img.naturalHeight));
    }

    function onFailure() {
        failed = true;
        markPreviews(false);
        // A missing picture is normal while the camera is away; try again later, less and less often, so the
        // browser's console does not fill with failed requests.
        clearTimeout(retryTimer);
        const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)];
        failures += 1;
        if (wanted) retryTimer = setTimeout(retry, delay);
    }

    /** Try again now (screen shown, "Reconnect camera", monitoring resumed). */
    function retry() {
        clearTimeout(retryTimer);
        failed = false;
        tick();
    }

    /** Whether pictures are expected at all (false while monitoring is paused: no request is made then). */
    function setWanted(value) {
        if (!value) {
            wanted = false;
            clearTimeout(retryTimer);
            if (ok || !$$(".preview.unavailable").length) markPreviews(false);
            return;
        }
        if (wanted) return;
        wanted = true;
        failures = 0;
        retry();
    }

    setInterval(tick, INTERVAL_MS);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) tick(); });

    return Object.freeze({ retry, setWanted, get available() { return ok && wanted; } });
})();

// ---------------------------------------------------------------------------------------------------------------
// Screens and the router (location.hash: "#/monitor", "#/settings/alerts", …)

/** Screens by name: { path, role, tab, title, init(section), enter(section, state), update(state), leave(), tick(),
 *  actions: { name(button, event) } } — every field but path optional. `tab` is the tab it belongs to (for a screen
 *  both roles share: {monitor: tab, listener: tab}). */
const Screens = new Map();

function defineScreen(name, def) {
    Screens.set(name, Object.assign({ name, role: null, tab: null, actions: {} }, def));
}

/**
 * What each role may see. `guard(name, state, initial)` answers the screen to show instead of `name`, or `name`
 * itself; `home` is the screen of an empty address. A screen whose `role` is null is shared by both roles.
 */
const Roles = {
    monitor: {
        home: "monitor",
        guard(name, state, initial) {
            const app = state.app || {};
            if (!app.disclaimerAccepted) return "welcome";
            // Once accepted the welcome is skipped at launch, but Back from the first setup step may show it.
            if (name === "welcome" && (initial || app.setupComplete)) {
                return app.setupComplete ? "monitor" : "setup-name";
            }
            const setup = name === "welcome" || name.startsWith("setup-");
            if (!app.setupComplete && !setup) return "setup-name";
            return name;
        },
    },
    listener: {
        home: "monitors",
        guard(name, state, initial) {
            const app = state.app || {};
            // the same app, the same disclaimer; the baby's setup belongs to the monitor
            if (!app.disclaimerAccepted) return "welcome";
            if (name === "welcome" && initial) return "monitors";
            const pairing = state.pairing;
            const pairingRuns = !!pairing && ["connecting", "enter_pin", "checking"].includes(pairing.state);
            if (name === "add-monitor" && pairingRuns) return "pair";
            if (name === "pair" && !pairing) return "add-monitor";
            return name;
        },
    },
};

const Router = (() => {
    let current = null; // the screen shown
    let resolvedOnce = false;

    /** The screen at `path` for `role` (the roles share some paths: "/settings" is each role's own). */
    function screenForPath(path, role) {
        for (const screen of Screens.values()) {
            if (screen.path === path && (!screen.role || screen.role === role)) return screen.name;
        }
        return null;
    }

    function section(name) {
        return $(`section[data-screen="${name}"]`);
    }

    /** The screen to show for the address bar and the state. */
    function target(state) {
        if (!state) return "loading";
        const role = Roles[state.role];
        if (!role) return "unsupported";
        const path = location.hash.replace(/^#/, "") || "/";
        let name = screenForPath(path, state.role) || role.home;
        const screen = Screens.get(name);
        if (screen.role && screen.role !== state.role) name = role.home;
        return role.guard(name, state, !resolvedOnce);
    }

    function show(name, state) {
        const previous = current;
        const screen = Screens.get(name);
        if (previous && previous.leave) previous.leave();
        for (const s of $$("section[data-screen]")) s.hidden = s.dataset.screen !== name;
        current = screen;
        const el = section(name);
        const product = state && state.role === "listener" ? "CribCall" : "CribAlert";
        if (screen.title) document.title = `${screen.title} · ${product}`;
        // keep the address bar on the screen actually shown (a redirect replaces, it does not add history)
        if (screen.path && location.hash !== "#" + screen.path) history.replaceState(null, "", "#" + screen.path);
        if (screen.enter) screen.enter(el, state);
        renderTabs(screen);
        window.scrollTo(0, 0);
        // move keyboard and screen-reader focus to the new screen's heading (not while an alert holds it)
        const heading = $("h1[tabindex]", el);
        if (heading && !document.body.classList.contains("alert-open")) heading.focus({ preventScroll: true });
        CameraFeed.retry();
    }

    /** The tab bar of the screen's role: each role has its own tabs (class only-monitor / only-listener). */
    function renderTabs(screen) {
        const tabbar = $("#tabbar");
        const role = Live.state ? Live.state.role : null;
        const tab = screen && screen.tab && typeof screen.tab === "object" ? screen.tab[role] : screen && screen.tab;
        tabbar.hidden = !tab;
        for (const a of $$("a[data-tab]", tabbar)) {
            if (a.dataset.tab === tab) a.setAttribute("aria-current", "page");
            else a.removeAttribute("aria-current");
        }
    }

    /** Shows the right screen for the address and the state, then lets it draw the state. */
    function render(state) {
        const name = target(state);
        if (!current || current.name !== name) show(name, state);
        resolvedOnce = resolvedOnce || !!state;
        if (current.update && state) current.update(state);
    }

    /** Navigates to `path` ("/monitor") at once (the hashchange that follows finds the screen already shown). */
    function go(path) {
        if (location.hash !== "#" + path) location.hash = path;
        render(Live.state);
    }

    window.addEventListener("hashchange", () => render(Live.state));

    // One click handler for every [data-action] button: the screen it is in handles it.
    document.addEventListener("click", (event) => {
        const button = event.target.closest("[data-action]");
        if (!button) return;
        const host = button.closest("section[data-screen]");
        const screen = host && Screens.get(host.dataset.screen);
        const action = screen && screen.actions[button.dataset.action];
        if (action) {
            event.preventDefault();
            action.call(screen, button, event);
        }
    });

    // A second's tick for countdowns.
    setInterval(() => { if (current && current.tick) current.tick(); }, 1000);

    return Object.freeze({
        render,
        go,
        section,
        get current() { return current ? current.name : null; },
    });
})();

/** Shows or hides a disclosure's panel (a button with aria-controls and aria-expanded). */
function toggleDisclosure(button, open = button.getAttribute("aria-expanded") !== "true") {
    button.setAttribute("aria-expanded", String(open));
    const panel = document.getElementById(button.getAttribute("aria-controls"));
    if (panel) panel.hidden = !open;
    return open;
}

// Initialisation order: every screen's init() runs once when app.js boots.
function initScreens() {
    for (const screen of Screens.values()) {
        if (screen.init) screen.init(Router.section(screen.name));
    }
}
