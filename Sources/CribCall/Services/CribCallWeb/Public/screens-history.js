// CribAlert web app: the History tab (seed 003 §7): one night at a time — tonight, last night, or a night picked
// from a calendar — with a calm summary and the night's events, told as resolved and without any score. A listener
// shows the same screen (from its Activity tab) for what it heard from every monitor, each event with its monitor.
"use strict";

const TONE_ICONS = { ok: "check", info: "info", attention: "activity" };
const MONTHS = new Intl.DateTimeFormat("en-US", { month: "long", year: "numeric" });
const LONG_DAY = new Intl.DateTimeFormat("en-US", { weekday: "long", month: "long", day: "numeric" });
const HISTORY_REFRESH_MS = 800; // new activity while the tab is open: reload, at most this often

/** An event's detail, after its monitor's name on a listener ("Nursery · Marked as okay by Mum."). */
function detailOf(e) {
    return [e.monitorName, e.detail].filter(Boolean).join(" · ");
}

/** "2026-11-25" for a local date. */
function isoDay(date) {
    const m = String(date.getMonth() + 1).padStart(2, "0");
    const d = String(date.getDate()).padStart(2, "0");
    return `${date.getFullYear()}-${m}-${d}`;
}

/** The local date of "2026-11-25" (not UTC midnight, which is the day before west of Greenwich). */
function dayDate(day) {
    const [y, m, d] = day.split("-").map(Number);
    return new Date(y, m - 1, d);
}

defineScreen("history", {
    path: "/history",
    role: null,
    tab: { monitor: "history", listener: "activity" },
    title: "History",
    range: "tonight", // "tonight" | "last-night" | "calendar"
    day: null, // the night picked in the calendar ("YYYY-MM-DD")
    days: [], // nights with monitoring (from the last answer)
    month: null, // the calendar's month (a Date on its first day)
    request: 0,
    newestActivity: null,
    refreshTimer: null,

    enter(_el, state) {
        this.newestActivity = this.latestActivity(state);
        this.showRange();
        this.load();
    },

    leave() {
        clearTimeout(this.refreshTimer);
    },

    update(state) {
        const live = Live.connected && !["paused", "stale", "switched_off"].includes(monitoringOf(state));
        const pill = $("#history-live");
        pill.classList.toggle("offline", !live);
        setText($("span:last-child", pill), live ? "Live" : "Offline");
        // something new happened: the night on screen may have changed
        const newest = this.latestActivity(state);
        if (newest !== this.newestActivity) {
            this.newestActivity = newest;
            clearTimeout(this.refreshTimer);
            this.refreshTimer = setTimeout(() => this.load(), HISTORY_REFRESH_MS);
        }
    },

    latestActivity(state) {
        const a = state && state.activity && state.activity[0];
        return a ? `${a.timestamp}:${a.title}` : null;
    },

    /** The pills and the calendar's visibility follow `range`. */
    showRange() {
        for (const pill of $$(".pill", Router.section("history"))) {
            pill.setAttribute("aria-pressed", String(pill.dataset.range === this.range));
        }
        const calendarPill = $('.pill[data-range="calendar"]');
        calendarPill.setAttribute("aria-expanded", String(this.range === "calendar"));
        $("#history-calendar").hidden = this.range !== "calendar";
        if (this.range === "calendar") this.drawCalendar();
    },

    /** GET api/history for the range shown; older answers that arrive late are dropped. */
    async load() {
        const range = this.range === "calendar" ? this.day || "tonight" : this.range;
        const request = ++this.request;
        $("#history-loading").hidden = false;
        $("#history-error").hidden = true;
        try {
            const history = await api(`api/history?range=${encodeURIComponent(range)}`);
            if (request !== this.request) return;
            this.show(history, range);
        } catch (e) {
            if (request !== this.request) return;
            setText($("#history-error"), e.message);
            $("#history-error").hidden = false;
        } finally {
            if (request === this.request) $("#history-loading").hidden = true;
        }
    },

    show(history, range) {
        this.days = Array.isArray(history.days) ? [...history.days].sort() : []; // ISO dates sort as text
        const summary = history.summary || {};
        const sessions = history.sessions || [];
        const events = [...(history.events || [])].sort((a, b) => b.timestamp - a.timestamp);

        setText($("#summary-duration"), formatDuration(summary.durationSec));
        setText($("#summary-text"), summary.text || (sessions.length ? "Monitoring stayed normal" : "No monitoring"));
        setText($("#summary-range"), range === "tonight" ? "Tonight" : range === "last-night" ? "Last night"
            : `Night of ${LONG_DAY.format(dayDate(range))}`);

        renderList($("#history-timeline"), events, (e) => {
            const tone = TONE_ICONS[e.tone] ? e.tone : "info";
            return h("li", {},
                h("span", { class: `t-icon tone-${tone}` }, icon(TONE_ICONS[tone])),
                h("div", {},
                    h("p", { class: "t-title", text: e.title }),
                    detailOf(e) ? h("p", { class: "t-detail", text: detailOf(e) }) : null),
                h("time", {
                    class: "t-time", datetime: new Date(e.timestamp).toISOString(), text: formatTime(e.timestamp),
                }));
        });
        $("#history-timeline").hidden = events.length === 0;
        $("#history-footer").hidden = events.length === 0;
        const empty = $("#history-empty");
        empty.hidden = events.length > 0;
        setText(empty, sessions.length === 0 ? "No monitoring on this night." : "Nothing was noticed this night.");
        if (this.range === "calendar") this.drawCalendar();
    },

    drawCalendar() {
        if (!this.month) {
            const latest = this.day || this.days[this.days.length - 1];
            const base = latest ? dayDate(latest) : new Date();
            this.month = new Date(base.getFullYear(), base.getMonth(), 1);
        }
        const month = this.month;
        setText($("#cal-title"), MONTHS.format(month));
        const available = new Set(this.days);
        const cells = ["Su", "Mo", "Tu", "We", "Th", "Fr", "Sa"].map((d) => ({ dow: d }));
        for (let i = 0; i < month.getDay(); i += 1) cells.push({ blank: i });
        const count = new Date(month.getFullYear(), month.getMonth() + 1, 0).getDate();
        for (let d = 1; d <= count; d += 1) {
            const day = isoDay(new Date(month.getFullYear(), month.getMonth(), d));
            cells.push({ day, n: d, on: available.has(day), picked: day === this.day });
        }
        renderList($("#cal-grid"), cells, (c) => {
            if (c.dow) return h("span", { class: "dow", "aria-hidden": "true", text: c.dow });
            if (c.blank !== undefined) return h("span", { "aria-hidden": "true" });
            return h("button", {
                type: "button", text: String(c.n), disabled: !c.on,
                "aria-label": `${LONG_DAY.format(dayDate(c.day))}${c.on ? "" : ", no monitoring"}`,
                "aria-pressed": String(c.picked),
                dataset: { action: "day", day: c.day, key: c.day },
            });
        });
    },

    actions: {
        range(button) {
            this.range = button.dataset.range;
            // the calendar opens on the latest night with monitoring (the nights come with every answer)
            if (this.range === "calendar" && !this.day) this.day = this.days[this.days.length - 1] || null;
            this.showRange();
            this.load();
        },
        day(button) {
            this.day = button.dataset.day;
            this.drawCalendar();
            this.load();
        },
        "cal-prev"() {
            this.month = new Date(this.month.getFullYear(), this.month.getMonth() - 1, 1);
            this.drawCalendar();
        },
        "cal-next"() {
            this.month = new Date(this.month.getFullYear(), this.month.getMonth() + 1, 1);
            this.drawCalendar();
        },
    },
});
