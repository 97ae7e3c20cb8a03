// CribAlert web app: the Monitor tab — how things stand now (seed 003 §4–5: active, paused), the live preview,
// movement and position, Safety Alerts, recent activity; and CribCall's own monitor screen (seed 000 §3.2): the
// sound level, pairing a listener by QR code or PIN, and the paired listeners.
"use strict";

const MOVEMENT_WORDS = {
    still: ["Still", "Looks normal"],
    moving: ["Moving", "Movement noticed"],
    unknown: ["Unknown", "Not judged yet"],
};
const POSITION_WORDS = {
    on_back: ["On Back", "Recommended sleep position"],
    on_stomach: ["On Stomach", "Please check your baby"],
    unknown: ["Unknown", "Not seen clearly yet"],
};

/** The newest alert someone should look at (open), or null. */
function openAlert(state) {
    const alerts = (state && state.alerts) || [];
    return alerts.find((a) => a.state === "open") || null;
}

/** "Camera disconnected" from "camera disconnected": the server's reason as a sentence start. */
function sentence(text) {
    const t = String(text || "").trim();
    if (!t) return "";
    const s = t[0].toUpperCase() + t.slice(1);
    return /[.!?]$/.test(s) ? s : `${s}.`;
}

/** "ab12cd34ef56…" → "ab12 cd34 ef56 …": hex in groups of four, easier to read out and compare. */
function groupHex(hex) {
    return String(hex || "").replace(/[^0-9a-f]/gi, "").replace(/(.{4})(?=.)/g, "$1 ");
}

/** "ab12cd34…" → "AB12 CD34": a short ID to compare with the listener's screen. */
function shortId(fingerprint) {
    const hex = String(fingerprint || "").replace(/[^0-9a-f]/gi, "").slice(0, 8).toUpperCase();
    return hex.length === 8 ? `${hex.slice(0, 4)} ${hex.slice(4)}` : hex;
}

defineScreen("monitor", {
    path: "/monitor",
    role: "monitor",
    tab: "monitor",
    title: "Monitor",
    confirming: null, // the listener whose revocation waits for a second press
    stopping: false, // "Stop monitoring?" is asked
    qrShown: "", // the QR code's text drawn now, so the SVG is only replaced when it changes

    init() {
        Live.onLevel((level) => this.showLevel(level));
    },

    enter() {
        LiveView.want("monitor", true);
    },

    leave() {
        LiveView.want("monitor", false);
    },

    update(state) {
        const monitoring = Live.connected ? monitoringOf(state) : "disconnected";
        this.header(state, monitoring);
        this.monitoringSwitch(state);
        this.statusCard(state, monitoring);
        this.preview(monitoring);
        this.tiles(state, monitoring);
        this.activity(state);
        this.pairing(state);
        this.listeners(state);
        $("#level-mark").style.left = `${clamp(Number(state.settings && state.settings.threshold) || 60, 0, 100)}%`;
    },

    tick() {
        if (Live.state) this.pairing(Live.state);
    },

    header(state, monitoring) {
        setText($(".baby-room", Router.section("monitor")), `${possessive(babyName(state))} Room`);
        setText($("#monitor-name"), (state.monitor && state.monitor.name) || "this monitor");
        const live = monitoring === "active" || monitoring === "off";
        const pill = $("#monitor-live");
        pill.classList.toggle("offline", !live);
        setText($("span:last-child", pill), live ? "Live" : monitoring === "switched_off" ? "Off" : "Offline");
    },

    /** "Monitoring: ON/OFF" with Start/Stop monitoring (seed 000 §3.2, Monitor Home). */
    monitoringSwitch(state) {
        const on = !(state.settings && state.settings.monitoring === false);
        const card = $("#monitoring-card");
        card.classList.toggle("off", !on);
        setText($("#monitoring-word"), on ? "ON" : "OFF");
        setText($("#monitoring-detail"), on
            ? "Sounds and safety alerts go to your paired devices."
            : "Nothing is sent: no alert, no live sound or video. Your paired devices know it is off.");
        const button = $("#monitoring-button");
        button.dataset.action = on ? "monitoring-stop" : "monitoring-start";
        button.className = `btn ${on ? "btn-secondary" : "btn-primary"} btn-small`;
        setText(button, on ? "Stop monitoring" : "Start monitoring");
        if (!on) this.stopping = false;
        $("#monitoring-confirm").hidden = !this.stopping;
    },

    statusCard(state, monitoring) {
        const name = babyName(state);
        const card = $("#monitor-status");
        const alert = openAlert(state);
        let kind = "ok";
        let title;
        let detail;
        if (monitoring === "disconnected") {
            kind = "paused";
            title = "Reconnecting to the monitor…";
            detail = "The picture and alerts come back by themselves once the connection is back.";
        } else if (monitoring === "switched_off") {
            kind = "paused";
            title = "Monitoring is off";
            detail = "No sound or safety alert goes to your paired devices until you start monitoring again.";
        } else if (monitoring === "off") {
            kind = "paused";
            title = "Safety detection is off";
            detail = ["This monitor was started without it, so the camera is not watched. To turn it on, start it "
                + "again with ", h("code", { text: "cribcall monitor --safety" }), "."];
        } else if (monitoring === "paused" || monitoring === "stale") {
            kind = "paused";
            title = "Monitoring paused";
            detail = sentence(state.safety.reason) || "The camera is not connected right now.";
        } else if (alert) {
            kind = "attention";
            title = `Please check on ${name}`;
            detail = `${alert.title} Noticed at ${formatTime(alert.detectedAt)}.`;
        } else {
            title = `${possessive(name)} sleep looks normal`;
            detail = state.safety.line || "Monitoring active.";
        }
        if (monitoring === "active" && state.settings && state.settings.safetyAlerts === false) {
            detail += " Safety Alerts are off.";
        }
        const detailEl = $("#monitor-status-detail");
        if (Array.isArray(detail)) {
            // words with a command in them: rebuilt only when they change
            if (detailEl.dataset.key !== monitoring) detailEl.replaceChildren(...detail);
            detailEl.dataset.key = monitoring;
        } else {
            detailEl.dataset.key = "";
            setText(detailEl, detail);
        }
        card.className = `status-card ${kind}`;
        const iconName = kind === "ok" ? "check-circle" : kind === "attention" ? "alert-triangle" : "info";
        const svg = $(".status-icon svg", card);
        if (svg.getAttribute("data-icon") !== iconName) setIcon(svg, iconName);
        setText($("#monitor-status-title"), title);
        $("#monitor-paused").hidden = !(monitoring === "paused" || monitoring === "stale");
    },

    preview(monitoring) {
        const preview = $("#monitor-preview");
        // stale: the picture arrives but cannot be judged (too dark…): show it, greyed
        preview.classList.toggle("greyed", monitoring === "stale");
        $("#monitor-stale").hidden = monitoring !== "stale";
        const badge = $("#monitor-preview-badge");
        $(".dot", badge).className = `dot ${monitoring === "active" ? "dot-green" : "dot-grey"}`;
    },

    tiles(state, monitoring) {
        const active = monitoring === "active";
        // paused: no picture comes; stale: pictures come but cannot be judged (too dark, nothing in the area)
        const waiting = {
            off: "Safety detection is off", stale: "Waiting for a clear picture", switched_off: "Monitoring is off",
        }[monitoring]
            || "Waiting for connection";
        const safety = state.safety || {};
        const movement = active ? MOVEMENT_WORDS[safety.movement] || MOVEMENT_WORDS.unknown : ["--", waiting];
        const position = active ? POSITION_WORDS[safety.position] || POSITION_WORDS.unknown : ["--", waiting];
        this.tile("movement", movement, !active, false);
        this.tile("position", position, !active, active && safety.position === "on_stomach");
    },

    tile(which, [value, detail], waiting, attention) {
        const tile = $(`#tile-${which}`);
        tile.classList.toggle("waiting", waiting);
        tile.classList.toggle("attention", attention);
        setText($(`#${which}-value`), value);
        setText($(`#${which}-detail`), detail);
    },

    activity(state) {
        const items = ((state.activity) || []).slice(0, 3);
        const list = $("#monitor-activity");
        if (items.length === 0) {
            renderList(list, [{ empty: true }], () => h("li", { class: "empty-item", text: "Nothing noticed yet." }));
            return;
        }
        renderList(list, items, (a) => h("li", {},
            h("span", { class: "when", text: formatTime(a.timestamp) }),
            h("span", { class: "what" }, a.title, a.detail ? h("span", { class: "detail", text: a.detail }) : null)));
    },

    showLevel(level) {
        if (Router.current !== "monitor" || !Live.state) return;
        const value = Math.round(clamp(level, 0, 100));
        const threshold = Number(Live.state.settings && Live.state.settings.threshold) || 60;
        const loud = value >= threshold;
        const meter = $("#level-meter");
        meter.setAttribute("aria-valuenow", String(value));
        meter.setAttribute("aria-valuetext", `${value} of 100, ${loud ? "noise" : "quiet"}`);
        const fill = $("#level-fill");
        fill.style.width = `${value}%`;
        fill.classList.toggle("loud", loud);
        setText($("#level-word"), loud ? "Noise" : "Quiet");
    },

    pairing(state) {
        const now = Date.now();
        const pairing = state.pairing || {};
        const pin = pairing.pin && pairing.pin.expiresAt > now ? pairing.pin : null;
        const qr = pairing.qr && pairing.qr.expiresAt > now ? pairing.qr : null;

        $("#pair-pin").hidden = !pin;
        if (pin) {
            const digits = String(pin.pin);
            setText($("#pair-pin-digits"), digits.length === 6 ? `${digits.slice(0, 3)} ${digits.slice(3)}` : digits);
            // read digit by digit, not as "four hundred eighty-two thousand…"
            setText($("#pair-pin-spoken"), `PIN ${digits.split("").join(" ")}`);
            const tries = Number(pin.attemptsRemaining);
            const left = tries >= 0 ? ` · ${tries} ${tries === 1 ? "try" : "tries"} left` : "";
            setText($("#pair-pin-countdown"), `Expires in ${formatCountdown(pin.expiresAt - now)}${left}`);
        }

        $("#pair-qr").hidden = !qr;
        if (qr) {
            if (this.qrShown !== qr.text) {
                // The SVG is made by the monitor itself (README: pairing.qr.svg), not by anyone else: trusted markup.
                $("#pair-qr-svg").innerHTML = qr.svg;
                this.qrShown = qr.text;
            }
            const monitor = state.monitor || {};
            setText($("#pair-qr-info"), `${monitor.name || "Monitor"} · ID ${shortId(monitor.fingerprint)}`);
            setText($("#pair-qr-countdown"), `Expires in ${formatCountdown(qr.expiresAt - now)}`);
        } else if (this.qrShown) {
            $("#pair-qr-svg").replaceChildren();
            this.qrShown = "";
        }
        setText($("#pair-show"), qr ? "Show a new code" : "Show pairing code");
        $("#pair-intro").hidden = !!(qr || pin);

        // pairing by address: the control channel's port and the full fingerprint (a listener types them in)
        const monitor = state.monitor || {};
        setText($("#pair-port"), monitor.port ? String(monitor.port) : "not known yet");
        const hosts = Array.isArray(monitor.addresses) ? monitor.addresses : [];
        setText($("#pair-address-hosts"), hosts.length ? hosts.join(" or ") : "no network address yet (is this device on Wi-Fi?)");
        const hex = String(monitor.fingerprint || "").toLowerCase();
        setText($("#pair-fp-short"), hex ? `${groupHex(hex.slice(0, 8))} …` : "not known yet");
        setText($("#pair-fp-full"), groupHex(hex));
    },

    listeners(state) {
        const listeners = state.listeners || [];
        $("#listener-none").hidden = listeners.length > 0;
        const confirming = listeners.some((l) => l.listenerId === this.confirming) ? this.confirming : null;
        this.confirming = confirming;
        const changed = renderList($("#listener-list"), listeners, (l) => this.listenerItem(l), confirming || "");
        if (changed && confirming) {
            const yes = $(`#listener-list [data-action="revoke-confirm"]`);
            if (yes) yes.focus();
        }
    },

    listenerItem(l) {
        const name = l.name || "Listener";
        const paired = l.pairedAt ? ` · paired ${new Date(l.pairedAt).toLocaleDateString()}` : "";
        const item = h("li", {},
            h("div", { class: "who" },
                h("span", { class: "name", text: name }),
                h("span", { class: "meta" },
                    h("span", { class: `dot ${l.connected ? "dot-green" : "dot-grey"}`, "aria-hidden": "true" }),
                    `${l.connected ? "Connected" : "Not connected"}${paired}`)),
            h("button", {
                type: "button", class: "btn btn-secondary btn-small", text: "Revoke",
                "aria-label": `Revoke ${name}`,
                dataset: { action: "revoke", id: l.listenerId, key: `revoke-${l.listenerId}` },
            }));
        if (this.confirming === l.listenerId) {
            item.append(h("div", { class: "confirm" },
                h("p", {
                    text: `Unpair ${name}? It will have to pair again to hear, see or get alerts from this monitor.`,
                }),
                h("button", {
                    type: "button", class: "btn btn-danger btn-small", text: "Yes, revoke",
                    "aria-label": `Yes, revoke ${name}`,
                    dataset: { action: "revoke-confirm", id: l.listenerId, key: "confirm" },
                }),
                h("button", {
                    type: "button", class: "btn btn-secondary btn-small", text: "Cancel",
                    dataset: { action: "revoke-cancel", id: l.listenerId, key: "cancel" },
                })));
        }
        return item;
    },

    actions: {
        "monitoring-stop"() {
            this.stopping = true;
            this.monitoringSwitch(Live.state);
            $("#monitoring-confirm [data-action='monitoring-cancel']").focus();
        },
        "monitoring-cancel"() {
            this.stopping = false;
            this.monitoringSwitch(Live.state);
            $("#monitoring-button").focus();
        },
        async "monitoring-confirm"(button) {
            button.disabled = true;
            const ok = await attempt(() => saveSettings({ monitoring: false }));
            button.disabled = false;
            this.stopping = false;
            this.monitoringSwitch(Live.state);
            $("#monitoring-button").focus();
            if (ok) announce("Monitoring is off. Your paired devices were told.");
        },
        async "monitoring-start"(button) {
            button.disabled = true;
            const ok = await attempt(() => saveSettings({ monitoring: true }));
            button.disabled = false;
            if (ok) announce("Monitoring is on.");
        },
        async reconnect(button) {
            button.disabled = true;
            announce("Checking the camera again…");
            // The monitor tries its camera now instead of at its next retry; then the state and picture follow.
            const ok = await attempt(() => api("api/camera/reconnect", { method: "POST", body: {} }))
                && await attempt(() => Live.refresh());
            CameraFeed.retry();
            button.disabled = false;
            if (ok) {
                const monitoring = monitoringOf(Live.state);
                announce(monitoring === "active" ? "Monitoring is back."
                    : `The camera is still not connected. ${sentence(Live.state.safety && Live.state.safety.reason)}`);
            }
        },
        "show-fingerprint"(button) {
            const open = toggleDisclosure(button);
            setText(button, open ? "Hide the full fingerprint" : "Show the full fingerprint");
        },
        async "copy-fingerprint"() {
            const hex = String((Live.state.monitor || {}).fingerprint || "");
            if (!hex) return;
            try {
                await navigator.clipboard.writeText(hex);
                announce("Fingerprint copied. Paste it into the listener's Add by address.");
            } catch (_) {
                // no clipboard here: select the digits so that they can be copied by hand
                const range = document.createRange();
                range.selectNodeContents($("#pair-fp-full"));
                const selection = getSelection();
                selection.removeAllRanges();
                selection.addRange(range);
                announce("The fingerprint is selected: copy it with your keyboard or menu.");
            }
        },
        fullscreen() {
            const preview = $("#monitor-preview");
            const unavailable = () => announce("Full screen is not available here.");
            if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
            else if (preview.requestFullscreen) preview.requestFullscreen().catch(unavailable);
            else unavailable();
        },
        async "copy-qr"() {
            const qr = Live.state && Live.state.pairing && Live.state.pairing.qr;
            if (!qr) return;
            if (await copyText(qr.text)) announce("Pairing code copied: paste it in the listener's Add a monitor screen.");
            else announce("The code could not be copied here: scan it with the listener's camera instead.", { bad: true });
        },
        async "show-qr"(button) {
            button.disabled = true;
            const ok = await attempt(async () => Live.apply(await api("api/pairing/qr", { method: "POST" })));
            button.disabled = false;
            if (ok) announce("Pairing code shown. It works for 5 minutes.");
        },
        revoke(button) {
            this.confirming = button.dataset.id;
            this.listeners(Live.state);
        },
        "revoke-cancel"(button) {
            const id = button.dataset.id;
            this.confirming = null;
            this.listeners(Live.state);
            const again = $$("#listener-list [data-action='revoke']").find((b) => b.dataset.id === id);
            if (again) again.focus();
        },
        async "revoke-confirm"(button) {
            const id = button.dataset.id;
            const listener = (Live.state.listeners || []).find((l) => l.listenerId === id);
            button.disabled = true;
            const ok = await attempt(async () => Live.apply(
                await api(`api/listeners/${encodeURIComponent(id)}/revoke`, { method: "POST" })));
            this.confirming = null;
            this.listeners(Live.state);
            if (ok) announce(`${listener ? listener.name : "The listener"} was unpaired.`);
            $("#monitor-title").focus();
        },
    },
});
