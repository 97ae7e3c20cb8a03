// CribAlert web app: first launch — the welcome with its safety disclaimer and the four setup steps (seed 003
// §2–3): the baby's name, mounting the camera, the sleep area, and the final setup check.
"use strict";

// ---------------------------------------------------------------------------------------------------------------
// Welcome and safety disclaimer (page 1 of 4)

defineScreen("welcome", {
    path: "/welcome",
    role: null, // the listener shows the same disclaimer; only the monitor goes on to the baby's setup
    title: "Welcome",

    init() {
        $("#welcome-accept").addEventListener("change", () => this.sync());
    },

    enter(_el, state) {
        $("#welcome-accept").checked = !!(state && state.app && state.app.disclaimerAccepted);
        setText($("#welcome-start"), state && state.role === "listener" ? "Continue" : "Start Setup");
        this.sync();
    },

    /** "Start Setup" stays disabled until the box is ticked. */
    sync() {
        const accepted = $("#welcome-accept").checked;
        $("#welcome-start").disabled = !accepted;
        $("#welcome-gate").hidden = accepted;
    },

    actions: {
        async start(button) {
            button.disabled = true;
            const ok = await attempt(() => saveApp({ disclaimerAccepted: true }));
            this.sync();
            if (ok) Router.go(Live.state.role === "listener" ? "/monitors" : "/setup/name");
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
/** "Step N of M" in a setup screen's head and progress bar: four steps with a camera, two without (a monitor that
 *  only listens has no camera to place and no sleep area: its name, then the check). */
function setupStep(screen, state, step) {
    const camera = !(state && state.camera && state.camera.watched === false);
    const [n, total] = camera ? [step, 4] : [step === 1 ? 1 : 2, 2];
    const words = `Step ${n} of ${total}`;
    const section = Router.section(screen);
    setText($(".step", section), words);
    const bar = $(".progress", section);
    const percent = Math.round((n / total) * 100);
    bar.setAttribute("aria-valuenow", String(percent));
    bar.setAttribute("aria-valuetext", words);
    $(".progress-bar", bar).className = `progress-bar w-${percent}`;
}

// Step 1 of 4: the baby's name

defineScreen("setup-name", {
    path: "/setup/name",
    role: "monitor",
    title: "Step 1 of 4",

    init() {
        const input = $("#setup-name-input");
        input.addEventListener("input", () => this.sync());
        $("#setup-name-form").addEventListener("submit", (event) => {
            event.preventDefault();
            this.submit();
        });
    },

    enter(_el, state) {
        setupStep("setup-name", state, 1);
        $("#setup-name-input").value = (state && state.app && state.app.babyName) || "";
        $("#setup-name-error").hidden = true;
        this.sync();
    },

    /** "Continue" is disabled while the name is empty or only spaces. */
    sync() {
        const input = $("#setup-name-input");
        const blank = input.value.trim() === "";
        $("#setup-name-continue").disabled = blank;
        if (!blank) {
            input.removeAttribute("aria-invalid");
            $("#setup-name-error").hidden = true;
        }
    },

    async submit() {
        const input = $("#setup-name-input");
        const name = input.value.trim();
        const error = $("#setup-name-error");
        if (name === "") {
            input.setAttribute("aria-invalid", "true");
            error.textContent = "Please enter the name you call your baby.";
            error.hidden = false;
            input.focus();
            return;
        }
        const button = $("#setup-name-continue");
        button.disabled = true;
        const ok = await attempt(() => saveApp({ babyName: name }), error);
        this.sync();
        // an audio-only monitor has no camera to place nor a sleep area to draw: on to the final check
        if (ok) Router.go(cameraWatched() ? "/setup/placement" : "/setup/check");
    },

    actions: {
        back() {
            const state = Live.state;
            Router.go(state && state.app.setupComplete ? "/settings" : "/welcome");
        },
    },
});

/** Whether this monitor watches a camera (`--safety`); without one, setup is the name and the sound check. */
function cameraWatched() {
    return !!(Live.state && Live.state.camera && Live.state.camera.watched);
}

// ---------------------------------------------------------------------------------------------------------------
// Step 2 of 4: mount the device

defineScreen("setup-placement", {
    path: "/setup/placement",
    role: "monitor",
    title: "Step 2 of 4",

    actions: {
        back: () => Router.go("/setup/name"),
        skip: () => Router.go("/setup/area"),
        next: () => Router.go("/setup/area"),
        "mount-tip": (button) => toggleDisclosure(button),
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Step 3 of 4: define the sleep area — a rectangle over the live picture with four corner handles, moved by
// pointer (mouse, touch, pen) or by the arrow keys. Kept as edges {l, t, r, b} in 0…1 of the picture.

const AREA_MIN_SIDE = 0.05; // README: each side at least 0.05
const AREA_KEY_STEP = 0.01;
const AREA_KEY_STEP_BIG = 0.05;

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const round4 = (v) => Math.round(v * 10000) / 10000;

function edgesOf(area) {
    const a = area || { x: 0, y: 0, w: 1, h: 1 };
    return { l: a.x, t: a.y, r: a.x + a.w, b: a.y + a.h };
}

function areaOf(edges) {
    return { x: round4(edges.l), y: round4(edges.t), w: round4(edges.r - edges.l), h: round4(edges.b - edges.t) };
}

/** The edges with one corner ("tl", "tr", "bl", "br") moved to (x, y), keeping every side at least the minimum. */
function moveCorner(edges, corner, x, y) {
    const e = { ...edges };
    if (corner[1] === "l") e.l = clamp(x, 0, e.r - AREA_MIN_SIDE);
    else e.r = clamp(x, e.l + AREA_MIN_SIDE, 1);
    if (corner[0] === "t") e.t = clamp(y, 0, e.b - AREA_MIN_SIDE);
    else e.b = clamp(y, e.t + AREA_MIN_SIDE, 1);
    return e;
}

/** Positions an element over a preview at `edges` (percentages of the picture). */
function placeOnPicture(el, edges) {
    el.style.left = `${edges.l * 100}%`;
    el.style.top = `${edges.t * 100}%`;
    el.style.width = `${(edges.r - edges.l) * 100}%`;
    el.style.height = `${(edges.b - edges.t) * 100}%`;
}

const percent = (v) => `${Math.round(v * 100)}%`;

defineScreen("setup-area", {
    path: "/setup/area",
    role: "monitor",
    title: "Step 3 of 4",
    edges: edgesOf(null),
    touched: false, // the person moved a corner: state updates no longer replace the rectangle
    drag: null,
    announceTimer: null,

    init() {
        for (const handle of $$(".handle", $("#area-frame"))) {
            handle.addEventListener("pointerdown", (e) => this.startDrag(handle, e));
            handle.addEventListener("pointermove", (e) => this.moveDrag(e));
            handle.addEventListener("pointerup", (e) => this.endDrag(e));
            handle.addEventListener("pointercancel", (e) => this.endDrag(e));
            handle.addEventListener("keydown", (e) => this.onKey(handle, e));
        }
    },

    enter(_el, state) {
        this.touched = false;
        this.edges = edgesOf(state && state.settings && state.settings.sleepArea);
        $("#area-error").hidden = true;
        this.draw();
    },

    update(state) {
        if (!this.touched && !this.drag) {
            this.edges = edgesOf(state.settings && state.settings.sleepArea);
            this.draw();
        }
    },

    draw() {
        placeOnPicture($("#area-rect"), this.edges);
        placeOnPicture($("#area-handles"), this.edges);
        const e = this.edges;
        setText($("#area-readout"),
            `Sleep area: from ${percent(e.l)} to ${percent(e.r)} across and ${percent(e.t)} to ${percent(e.b)} down.`);
    },

    /** Pointer position as a fraction of the picture. */
    pointerXY(event) {
        const box = $("#area-frame").getBoundingClientRect();
        return { x: (event.clientX - box.left) / box.width, y: (event.clientY - box.top) / box.height };
    },

    startDrag(handle, event) {
        if (event.button !== 0 || this.drag) return;
        event.preventDefault();
        handle.setPointerCapture(event.pointerId);
        handle.classList.add("dragging");
        handle.focus({ preventScroll: true });
        const corner = handle.dataset.corner;
        const p = this.pointerXY(event);
        const cx = corner[1] === "l" ? this.edges.l : this.edges.r;
        const cy = corner[0] === "t" ? this.edges.t : this.edges.b;
        // keep the grab offset, so the corner does not jump under the finger
        this.drag = { id: event.pointerId, handle, corner, dx: cx - p.x, dy: cy - p.y };
    },

    moveDrag(event) {
        const d = this.drag;
        if (!d || d.id !== event.pointerId) return;
        const p = this.pointerXY(event);
        this.edges = moveCorner(this.edges, d.corner, p.x + d.dx, p.y + d.dy);
        this.touched = true;
        this.draw();
    },

    endDrag(event) {
        const d = this.drag;
        if (!d || d.id !== event.pointerId) return;
        d.handle.classList.remove("dragging");
        this.drag = null;
    },

    onKey(handle, event) {
        const step = event.shiftKey ? AREA_KEY_STEP_BIG : AREA_KEY_STEP;
        const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
        const move = moves[event.key];
        if (!move) return;
        event.preventDefault();
        const corner = handle.dataset.corner;
        const x = (corner[1] === "l" ? this.edges.l : this.edges.r) + move[0];
        const y = (corner[0] === "t" ? this.edges.t : this.edges.b) + move[1];
        this.edges = moveCorner(this.edges, corner, x, y);
        this.touched = true;
        this.draw();
        // say where it is once the keys rest, not on every step
        clearTimeout(this.announceTimer);
        this.announceTimer = setTimeout(() => announce($("#area-readout").textContent), 600);
    },

    actions: {
        back: () => Router.go("/setup/placement"),
        skip: () => Router.go("/setup/check"),
        async confirm(button) {
            button.disabled = true;
            const sleepArea = areaOf(this.edges);
            const ok = await attempt(() => saveSettings({ sleepArea }), $("#area-error"));
            button.disabled = false;
            if (ok) {
                announce("Sleep area saved.");
                Router.go("/setup/check");
            }
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Step 4 of 4: the final setup check (POST api/calibration, then GET it every 500 ms until done)

const CHECK_POLL_MS = 500;
const CHECK_NAMES = { camera: "Camera", light: "Lighting", placement: "Sleep area", noise: "Room noise" };
const CHECK_ICONS = { passed: "check", failed: "alert-triangle", checking: "refresh", pending: "clock" };
const CHECK_WORDS = { passed: "passed", failed: "needs attention", checking: "checking", pending: "waiting" };

defineScreen("setup-check", {
    path: "/setup/check",
    role: "monitor",
    title: "Step 4 of 4",
    pollTimer: null,
    run: 0, // a new check (or leaving the screen) makes older answers stale
    calibration: null,

    enter(_el, state) {
        this.update(state);
        this.runCheck();
    },

    leave() {
        this.run += 1;
        clearTimeout(this.pollTimer);
    },

    update(state) {
        setupStep("setup-check", state, 4);
        const box = $("#check-box");
        placeOnPicture(box, edgesOf(state.settings && state.settings.sleepArea));
    },

    /** Starts (or restarts) the check and follows it to the end. */
    async runCheck() {
        const run = ++this.run;
        clearTimeout(this.pollTimer);
        this.show(null);
        try {
            const calibration = await api("api/calibration", { method: "POST" });
            if (run !== this.run) return;
            this.show(calibration);
            this.poll(run);
        } catch (e) {
            if (run !== this.run) return;
            this.showFailure(e.message);
        }
    },

    poll(run) {
        if (this.calibration && this.calibration.done) return this.finished();
        this.pollTimer = setTimeout(async () => {
            try {
                const calibration = await api("api/calibration");
                if (run !== this.run) return;
                this.show(calibration);
            } catch (e) {
                if (run !== this.run) return;
                // one failed poll is not the end of the check: try again
            }
            if (run === this.run) this.poll(run);
        }, CHECK_POLL_MS);
        return undefined;
    },

    show(calibration) {
        this.calibration = calibration;
        const c = calibration || { progress: 0, done: false, ok: false, checks: [] };
        const progress = clamp(Math.round(Number(c.progress) || 0), 0, 100);
        setText($("#check-percent"), `${progress}%`);
        const phase = c.ok ? "All checks passed" : "Some checks need attention";
        setText($("#check-phase"), c.done ? phase : "Setting up...");
        const bar = $("#check-bar");
        bar.setAttribute("aria-valuenow", String(progress));
        $("#check-bar-fill").style.width = `${progress}%`;
        $("#check-start").disabled = !(c.ok && progress === 100);
        $("#check-again").hidden = !(c.done && !c.ok);
        setText($("#check-status"), c.done
            ? (c.ok ? "Everything looks ready. You can start monitoring."
                : "Please look at the note below, adjust, and check again.")
            : cameraWatched() ? "Checking camera placement and lighting to help reduce false alerts."
                : "Listening to the room's sound level to help reduce false alerts.");
        renderList($("#check-list"), c.checks || [], (check) => {
            const state = CHECK_ICONS[check.state] ? check.state : "pending";
            const name = check.label || CHECK_NAMES[check.id] || check.id;
            return h("li", { class: state },
                h("span", { class: "check-icon" }, icon(CHECK_ICONS[state])),
                h("div", {},
                    h("span", { class: "check-name", text: `${name}: ` }),
                    h("span", { class: "visually-hidden", text: `${CHECK_WORDS[state]}. ` }),
                    h("span", { class: "check-detail", text: check.detail || CHECK_WORDS[state] })));
        });
    },

    finished() {
        const c = this.calibration;
        if (c.ok) {
            announce("Setup check complete. You can start monitoring.");
        } else {
            const failed = (c.checks || []).filter((x) => x.state === "failed");
            const words = failed.map((x) => `${x.label || CHECK_NAMES[x.id] || x.id}: ${x.detail}`).join(" ");
            announce(`A check needs attention. ${words}`, { bad: true });
        }
    },

    showFailure(message) {
        this.show({ progress: 0, done: true, ok: false, checks: [] });
        setText($("#check-status"), message);
        announce(message, { bad: true });
    },

    actions: {
        back: () => Router.go(cameraWatched() ? "/setup/area" : "/setup/name"),
        again() {
            this.runCheck();
        },
        async start(button) {
            button.disabled = true;
            const state = Live.state;
            const ok = state && state.app.setupComplete ? true : await attempt(() => saveApp({ setupComplete: true }));
            if (ok) {
                announce("Monitoring started.");
                Router.go("/monitor");
            } else {
                button.disabled = false;
            }
        },
    },
});
