// CribAlert web app: full-screen alerts (seed 003 §6.1–6.2), on the monitor and on a listener.
//
// Of the alerts still open and not dismissed on this page, the most severe (high before the rest), and of those
// the newest, is shown full screen as an alertdialog. Its texts and buttons come from the monitor. "I am checking", "Mark as okay" and "Mute for 5
// minutes" act for everyone (the monitor: POST api/alerts/{id}/action; a listener: POST
// api/alerts/{monitorId}/{id}/action, over its link to that monitor); "Dismiss", the close button and Escape only
// close it here. When another device acts, the dialog says so (and closes for okay and mute). On a listener the
// alert names its monitor, and "View live camera" opens a video stream of it.
"use strict";

const Alerts = (() => {
    const known = new Map(); // alertId → the latest alert object seen (state events and API answers)
    const dismissed = new Set(); // closed on this page
    const heard = new Set(); // alerts whose sound has played
    const mine = new Map(); // alertId → the state our own last action asked for
    let shown = null; // alertId on screen
    let shownAt = 0;
    let returnFocus = null;

    const layer = () => $("#alert-layer");
    const dialog = () => $("#alert-dialog");

    const ACTION_STATES = { checking: "checking", okay: "okay", mute: "muted" };
    const DEFAULT_BUTTONS = {
        crying: [{ action: "view", label: "Open live view" }, { action: "mute", label: "Mute for 5 minutes" }],
        other: [{ action: "view", label: "View live camera" }, { action: "checking", label: "I am checking" },
            { action: "okay", label: "Mark as okay" }],
    };

    function variant(alert) {
        if (alert.kind === "crying") return "crying";
        return alert.severity === "high" ? "high" : "medium";
    }

    function defaultTag(alert) {
        if (alert.severity === "high") return "SAFETY ALERT";
        return alert.kind === "crying" ? "Listening for sounds" : "Monitoring movement";
    }

    /** What someone else did, in a calm sentence ("Mum's laptop marked it as okay."). */
    function otherDid(alert) {
        const by = alert.by || "Someone";
        if (alert.state === "checking") return `${by} is checking.`;
        if (alert.state === "okay") return `${by} marked it as okay.`;
        if (alert.state === "muted") return `${by} muted these alerts for 5 minutes.`;
        return "";
    }

    // ------------------------------------------------------------------------------------------- what is known

    /** Takes in one alert (from a state event or an API answer). */
    function learn(alert) {
        if (!alert || !alert.alertId) return;
        const before = known.get(alert.alertId);
        known.set(alert.alertId, alert);
        if (before && before.state !== alert.state) changed(alert);
        if (alert.state === "open" && !heard.has(alert.alertId)) {
            heard.add(alert.alertId);
            // the parent is listening to that monitor in this page already: a word, not an alarm over its sound
            if (listening(alert)) announce(alert.title, { quiet: false });
            else ring(alert);
        }
    }

    /**
     * Forgets what the page knew of alerts the state no longer lists (it lists the newest ones; an alert that left
     * it does not come back), unless one is on screen or still open: a page kept open all night would otherwise
     * hold every alert of the night, pictures included (measured by make soak: +37 MiB of JS heap per night).
     * `heard` keeps only ids (so an alert never rings twice), the newest HEARD_KEPT of them.
     */
    function forget(listed) {
        const keep = new Set(listed.map((a) => a.alertId));
        for (const [id, alert] of known) {
            if (keep.has(id) || id === shown || alert.state === "open") continue;
            known.delete(id);
            dismissed.delete(id);
            mine.delete(id);
            notified.delete(id);
        }
        for (const id of heard) {
            if (heard.size <= HEARD_KEPT) break;
            if (!keep.has(id) && !known.has(id)) heard.delete(id); // the oldest first: a Set keeps insertion order
        }
    }

    const HEARD_KEPT = 2000;

    /** An alert's state changed: say so when it was not this page's own doing. */
    function changed(alert) {
        // a notice of this listener's own (a noise, a lost link) says itself what closed it, or nothing
        if (alert.local) {
            if (alert.note) announce(alert.note);
            if (alert.note && notified.has(alert.alertId)) notified.get(alert.alertId).close();
            return;
        }
        const ours = mine.get(alert.alertId) === alert.state;
        if (!ours && alert.state !== "open") announce(`${alert.title}: ${otherDid(alert)}`);
    }

    /**
     * The alert sound and vibration the person chose (silently nothing when the browser does not allow it), and,
     * while the page is not in front of the person, a system notification (when allowed).
     */
    function ring(alert) {
        sound();
        if (document.visibilityState !== "visible" || !document.hasFocus()) notify(alert);
        if (insistent()) keepRinging(alert.alertId);
    }

    function sound() {
        const app = (Live.state && Live.state.app) || {};
        Sounds.play(app.alertSound || "calm-chime", app.volume === undefined ? 75 : app.volume);
        Sounds.vibrate(app.vibration || "heartbeat");
    }

    /** "Override Silent Mode" (on by default): alarms ring until answered, their notifications stay. */
    const insistent = () => ((Live.state && Live.state.app) || {}).overrideSilentMode !== false;

    const RING_AGAIN_MS = 15000;
    const RING_AT_MOST_MS = 5 * 60 * 1000;
    let ringing = null; // { id, timer }: the alarm that rings again until answered (the newest one)

    /** Rings `alertId` again every 15 s while it is open and not dismissed here (for 5 minutes at most). */
    function keepRinging(alertId) {
        if (ringing) clearInterval(ringing.timer);
        const started = Date.now();
        const timer = setInterval(() => {
            const alert = known.get(alertId);
            const answered = !alert || alert.state !== "open" || dismissed.has(alertId) || listening(alert);
            if (answered || !insistent() || Date.now() - started > RING_AT_MOST_MS) {
                clearInterval(timer);
                if (ringing && ringing.timer === timer) ringing = null;
                return;
            }
            sound();
        }, RING_AGAIN_MS);
        ringing = { id: alertId, timer };
    }

    const notified = new Map(); // alertId → the system notification shown for it

    /** A system notification for an alert; a click brings the page (and its dialog) to the front. */
    function notify(alert) {
        if (!("Notification" in window) || Notification.permission !== "granted") return;
        if (((Live.state && Live.state.app) || {}).notifications === false) return; // turned off in Alert Preferences
        try {
            const from = alert.monitorName && !alert.local ? ` (${alert.monitorName})` : "";
            const shown = new Notification(`${alert.title || "Something was noticed"}${from}`, {
                body: alert.body || "", tag: alert.alertId, requireInteraction: alert.severity === "high" || insistent(),
                icon: "icon.svg",
            });
            shown.onclick = () => {
                window.focus();
                shown.close();
            };
            notified.set(alert.alertId, shown);
        } catch (_) {
            // a browser that only notifies from a service worker: the sound and the dialog remain
        }
    }

    /** A noise from a monitor whose stream plays in this page (the parent hears it already). */
    function listening(alert) {
        return alert.kind === "noise" && isListener() && !!Players.sessionOf(alert.monitorId);
    }

    /** High first (a face that may be covered, a baby on its stomach), then the rest. */
    const rank = (alert) => (alert.severity === "high" ? 1 : 0);

    /** Whether `a` goes in front of `b`: the more severe one, and of two as severe the newer one. */
    const before = (a, b) => rank(a) > rank(b) || (rank(a) === rank(b) && (a.detectedAt || 0) > (b.detectedAt || 0));

    /**
     * The alert to show: of the open ones not dismissed here, the most severe, and of those the newest; the one on
     * screen stays while still relevant unless one goes in front of it. A noise never covers a high alert (make
     * soak saw "Baby's face may be covered" replaced by "A sound in Nursery" 2.4 s after it came up, and never back
     * while sounds went on).
     */
    function choose() {
        let best = null;
        for (const a of known.values()) {
            if (a.state !== "open" || dismissed.has(a.alertId) || listening(a)) continue;
            if (!best || before(a, best)) best = a;
        }
        const current = shown && known.get(shown);
        const currentStays = current && !dismissed.has(current.alertId)
            && (current.state === "open" || current.state === "checking");
        if (best && (!currentStays || before(best, current))) return best;
        return currentStays ? current : null;
    }

    function refresh() {
        const alert = choose();
        if (!alert) {
            if (shown) close();
            return;
        }
        if (shown !== alert.alertId) open(alert);
        draw(alert);
    }

    // ------------------------------------------------------------------------------------------- the dialog

    const isListener = () => !!Live.state && Live.state.role === "listener";

    function open(alert) {
        const first = !shown;
        shown = alert.alertId;
        shownAt = performance.now();
        if (first) returnFocus = document.activeElement;
        layer().hidden = false;
        document.body.classList.add("alert-open");
        // everything behind the dialog is out of reach (keyboard, pointer, screen reader) while it is open
        $("#main").inert = true;
        $("#tabbar").inert = true;
        $("#alert-error").hidden = true;
        $("#alert-actions").dataset.signature = "";
        draw(alert);
        const primary = $("#alert-actions button");
        (primary || $("#alert-title")).focus();
        if (!isListener()) LiveView.want("alert", true);
        CameraFeed.retry();
    }

    function close() {
        shown = null;
        LiveView.want("alert", false);
        layer().hidden = true;
        document.body.classList.remove("alert-open");
        $("#main").inert = false;
        $("#tabbar").inert = false;
        const back = returnFocus;
        returnFocus = null;
        if (back && back.isConnected && back.offsetParent !== null) back.focus();
        else {
            const heading = $("section[data-screen]:not([hidden]) h1[tabindex]");
            if (heading) heading.focus();
        }
    }

    function buttonsOf(alert) {
        const given = Array.isArray(alert.buttons) && alert.buttons.length ? alert.buttons
            : DEFAULT_BUTTONS[alert.kind === "crying" ? "crying" : "other"];
        // once someone is checking, "I am checking" has been said
        const list = given.filter((b) => !(b.action === "checking" && alert.state === "checking"));
        // without "Mark as okay" (crying), "Dismiss" closes it here (when the monitor did not list it already)
        const closes = list.some((b) => b.action === "okay" || b.action === "dismiss");
        if (!closes) list.push({ action: "dismiss", label: "Dismiss" });
        return list;
    }

    const BUTTON_CLASS = { view: "btn btn-dark", listen: "btn btn-dark", checking: "btn btn-secondary", mute: "btn btn-secondary" };

    function draw(alert) {
        const box = dialog();
        box.className = `alert ${variant(alert)}`;
        setText($("#alert-tag"), alert.tag || defaultTag(alert));
        setText($("#alert-title"), alert.title || "Something was noticed");
        setText($("#alert-body"), alert.body || "Please take a moment to check your baby.");
        const by = $("#alert-by");
        const ours = mine.get(alert.alertId) === alert.state;
        by.hidden = alert.state !== "checking";
        const byWords = ours ? "You are checking." : `Checked by ${alert.by || "someone"}`;
        setText(by, alert.state === "checking" ? byWords : "");
        const buttons = buttonsOf(alert);
        // a lone button (a lost link's "OK") is a full one, easy to hit half asleep
        renderList($("#alert-actions"), buttons, (b) => h("button", {
            type: "button", class: buttons.length === 1 ? "btn btn-dark" : BUTTON_CLASS[b.action] || "text-btn",
            text: b.label,
            dataset: { alert: b.action, key: b.action },
        }), alert.alertId);
        const from = $("#alert-from");
        from.hidden = !alert.monitorName;
        setText(from, alert.monitorName ? `From ${alert.monitorName}` : "");
        if (isListener()) drawStreamPreview(alert);
    }

    /**
     * A listener has no camera picture of its own: the preview shows the video of the alert's monitor while a
     * video stream of it plays in this page, and is hidden otherwise.
     */
    function drawStreamPreview(alert) {
        const preview = $("#alert-preview");
        const track = Players.videoOf(alert.monitorId);
        const video = $("#alert-stream");
        preview.hidden = !track;
        for (const el of $$("img[data-camera], video[data-live], .preview-missing", preview)) el.hidden = true;
        if (track) {
            const shown = video.srcObject ? video.srcObject.getVideoTracks()[0] : null;
            if (shown !== track) video.srcObject = new MediaStream([track]);
            video.hidden = false;
        } else if (video.srcObject) {
            video.srcObject = null;
            video.hidden = true;
        }
    }

    // ------------------------------------------------------------------------------------------- acting

    async function act(action) {
        const alert = shown && known.get(shown);
        if (!alert) return;
        if (action === "view" && isListener()) {
            dismissed.add(alert.alertId);
            refresh();
            Players.watch(alert.monitorId, "audio_video");
            return;
        }
        if (action === "view") {
            dismissed.add(alert.alertId);
            refresh();
            Router.go("/monitor");
            // the monitor tab's live preview, in view, with the focus on its full-screen button
            $("#monitor-preview").scrollIntoView({ block: "center" });
            $('#monitor-preview [data-action="fullscreen"]').focus({ preventScroll: true });
            return;
        }
        if (action === "listen" && isListener()) {
            dismissed.add(alert.alertId);
            refresh();
            closeNotice(alert);
            Players.watch(alert.monitorId, "audio");
            return;
        }
        if (action === "dismiss" || action === "close") {
            dismissed.add(alert.alertId);
            refresh();
            closeNotice(alert);
            return;
        }
        const target = ACTION_STATES[action];
        if (!target) return;
        mine.set(alert.alertId, target);
        const error = $("#alert-error");
        const ok = await attempt(async () => {
            if (isListener()) {
                // over the listener's link to the monitor; the monitor's ALERT_UPDATED comes back in the state
                await api(`api/alerts/${encodeURIComponent(alert.monitorId)}/${encodeURIComponent(alert.alertId)}`
                    + "/action", { method: "POST", body: { action } });
                learn({ ...alert, state: target });
            } else {
                learn(await api(`api/alerts/${encodeURIComponent(alert.alertId)}/action`, {
                    method: "POST", body: { action },
                }));
            }
        }, error);
        if (!ok) {
            mine.delete(alert.alertId);
            return;
        }
        if (target === "checking") announce("You are checking. Everyone else sees it too.");
        if (target === "okay") announce("Marked as okay for everyone.");
        if (target === "muted") announce("These alerts are muted for 5 minutes, for everyone.");
        refresh();
        if (target === "checking") {
            const next = $("#alert-actions button");
            if (next) next.focus();
        }
    }

    /** A notice of the app's own is closed on every page of it (and its notification here). */
    function closeNotice(alert) {
        if (notified.has(alert.alertId)) notified.get(alert.alertId).close();
        if (!alert.local) return;
        const path = isListener() ? `${encodeURIComponent(alert.monitorId)}/${encodeURIComponent(alert.alertId)}`
            : encodeURIComponent(alert.alertId);
        api(`api/alerts/${path}/action`, { method: "POST", body: { action: "okay" } }).catch(() => {});
    }

    function init() {
        dialog().addEventListener("click", (event) => {
            const button = event.target.closest("[data-alert]");
            if (button) act(button.dataset.alert);
        });
        document.addEventListener("keydown", (event) => {
            if (!shown) return;
            if (event.key === "Escape") {
                event.preventDefault();
                act("dismiss");
            } else if (event.key === "Tab") {
                trapFocus(event);
            }
        });
    }

    /** Keeps Tab and Shift+Tab inside the dialog. */
    function trapFocus(event) {
        const focusable = $$("button, [href], input, [tabindex]:not([tabindex='-1'])", dialog())
            .filter((e) => !e.disabled && e.offsetParent !== null);
        if (focusable.length === 0) return;
        const first = focusable[0];
        const last = focusable[focusable.length - 1];
        if (event.shiftKey && (document.activeElement === first || !dialog().contains(document.activeElement))) {
            event.preventDefault();
            last.focus();
        } else if (!event.shiftKey && (document.activeElement === last || !dialog().contains(document.activeElement))) {
            event.preventDefault();
            first.focus();
        }
    }

    return Object.freeze({
        init,
        /** A new state: learn its alerts, then show what should be shown. */
        update(state) {
            // nothing covers the welcome: a monitor raises nothing before its setup is done (the server holds its
            // alerts too); a listener shows what is still open once its disclaimer is accepted
            const app = state.app || {};
            if (!(state.role === "monitor" ? app.setupComplete : app.disclaimerAccepted)) return;
            for (const a of (state.alerts || [])) learn(a);
            forget(state.alerts || []);
            refresh();
        },
        /** A stream started or ended: a listener's alert preview follows it. */
        redraw() {
            const alert = shown && known.get(shown);
            if (alert) draw(alert);
        },
        /** One alert from an API answer (a test trigger): shown at once. */
        receive(alert) {
            learn(alert);
            refresh();
        },
        get shown() { return shown; },
        get shownAt() { return shownAt; },
    });
})();
