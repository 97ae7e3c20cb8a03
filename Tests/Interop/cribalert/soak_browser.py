#!/usr/bin/env python3
"""The listener's app (`cribcall listen --web`) kept open in a real browser for a whole soak, as a parent's phone is
all night: every full-screen alert it shows is recorded and answered, and the page's own growth is sampled.

    soak_browser.py --listener-url http://127.0.0.1:P/s/S/ [--monitor-name Nursery] [--artifacts DIR]
                    [--sample-seconds 60] [--launch-timeout 120] [--answer-after 1] [--safety-answer close|okay]
                    [--stuck-seconds 30] [--duration S]

The listener must already run, paired with one monitor. Nothing is started here but one headless Debian Chromium
(/usr/bin/chromium + /usr/bin/chromedriver, web_app.py's flags and --enable-precise-memory-info) at 390×844, set up
as listener_alarm.py does: the notification permission granted through DevTools, listener_alarm's OBSERVERS (the
alarm's WebAudio tones and the page's Notifications, counted) and SOAK_OBSERVERS below, both before the page's own
scripts: every `state` event of the page's EventSource is read for the alerts that newly became open (what the page
*received*), every alert the page puts into its dialog is noted (between polls too), and the page's uncaught
exceptions and unhandled rejections are kept. Then the welcome ("Continue") and Monitors, until the monitor's card
says "Connected" (listener_alarm's first step). The app makes no sound before the page has had a user activation
(sounds.js) and, past the welcome, nothing asks for one: when the welcome was not shown (a listener whose
disclaimer was accepted before), the parent touches the page once, on a heading (reported as active_at_start:
false). Then {"event": "ready"}.

Then, about every 0.5 s, one script reads the page: the alert on screen (its alertId from the app's test hook
window.cribalert.snapshot().alertShown, and the page's own time of showing it), the card's connection words, the
counters. Everything the loop runs in the page goes through DevTools' Runtime.evaluate, and taps through
Input.dispatchMouseEvent: under chromedriver 156 every WebDriver execute_script (and every element it hands back)
leaves memory in the page, which would read as the page's own growth.

What the app does with several alerts (alerts.js): the newest open alert not dismissed on this page is shown,
whatever its severity; a newer one takes the screen from the one shown, which comes back once the newer one is
answered if it is still open. The listener keeps one open notice per monitor and kind, so a new noise closes the
noise still open (quietly) and takes its place. So:
- `shown` has one entry per alertId found on screen by a poll. One that a newer alert replaced within the same poll
  (a noise and a crying alert from one cry, a burst after a lost link) is in `received_not_shown` (open in the
  page's state, never on screen at a poll), with "drawn": true when the page did put it in its dialog in between.
  `times_shown` > 1: it left the screen (replaced) and came back.
- An entry's `at` is the page's own time of showing it (unix ms), `closed_ms` the time from `at` to when a poll last
  saw it leave the screen, `closed_by` how: "answered" (tapped here since it appeared), "itself" (no longer open in
  the page's state: a lost link that is back, a noise replaced by the next), "replaced" (still open, another alert
  in front), "hidden" (still open, nothing on screen); null while on screen.
- Answering, --answer-after seconds after it appeared, as a parent would (a tap on the button, only while that alert
  is still the one shown and nothing covers the button): a noise ("A sound in …", "Missed: a sound in …") and a
  crying alert with "Dismiss"; the other safety alerts (no "Dismiss") with the × "Close alert" (both close it on
  this page only; --safety-answer okay taps "Mark as okay" instead, which acts for everyone). A "Lost the link to
  …" (and the listener's other notices: a monitor that refuses it, monitoring that cannot judge) is never answered:
  it must close by itself. A problem: one still on screen --stuck-seconds after the card says "Connected" again, an
  answered alert still on screen after three taps (5 s apart), the page loaded again.

Every --sample-seconds (after DevTools' HeapProfiler.collectGarbage, so that the heap figures are comparable over a
night) one line: {"event": "sample", "t": s since ready, "shown": {kind: count}, "tones": n, "notifications": n,
"js_heap_used": performance.memory.usedJSHeapSize, "dom_nodes": elements in the document, "console_errors": n,
"connection": the card's words ("Connected", "Link lost — reconnecting…"), "received": alerts the page's state
brought open, "state_events": n, "state_alerts": entries in the last state, "event_listeners" and
"nodes_incl_detached": DevTools' Performance.getMetrics JSEventListeners and Nodes, "on_screen": kind or null}.

It runs until SIGTERM or SIGINT, until its stdin reaches EOF (when stdin is a pipe, a socket or a terminal), or for
--duration seconds, then prints ONE JSON line: {"ok": true|false, "shown": [{"alertId", "kind", "title",
"severity", "at", "closed_ms", "closed_by", "times_shown", "answered", "buttons"}, …], "received_not_shown":
[{"alertId", "kind", "title", "at", "drawn"}, …], "tones": n, "notifications": n, "console_errors": [the first 20
SEVERE messages], "console_error_count": n, "page_errors": [the first 20], "problems": […], "samples": n,
"last_sample": {…}, "duration_s": s, "active_at_start": bool, "on_screen_at_end": alertId or null, "failure": "…"
(when not ok), …}. ok is false when the page threw (an uncaught exception or rejection, or a SEVERE console entry
that is not a network one: network ones are counted and listed, not failed on) or a problem above was seen.
Progress goes to stderr, one terse line per event. On a failure a screenshot and the console go to --artifacts
(failure.png, console.json, console-severe.json).

Alert ids: a monitor's safety alert keeps its alertId (the monitor's and the listener's `--json` safety_alert line);
a noise is "noise-<eventId>", the eventId of the monitor's `--json` noise line; a lost link "link-<n>-<random>".

Exit status: 0 passed, 1 a check failed (or the browser went away), 2 the environment is not usable, 3
--launch-timeout fired (or, with --duration, the run outlived it by 10 minutes).

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import stat
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import listener_alarm  # noqa: E402 - the observers, the dialog as shown, the first step
import web_app  # noqa: E402 - the shared helpers
from listener_app import Window  # noqa: E402
from web_app import Browser, CheckFailed, log, make_driver, selenium  # noqa: E402

if selenium is not None:
    from selenium.common.exceptions import WebDriverException
else:  # reported by check_environment
    WebDriverException = Exception

web_app.LOG_NAME[0] = "soak_browser"

POLL_S = 0.5
CONSOLE_EVERY_S = 5.0  # the browser's console is drained this often (chromedriver keeps it until read)
CLICK_AGAIN_S = 5.0  # an answered alert still on screen is clicked again after this long
CLICKS_AT_MOST = 3
NOT_ANSWERED = {"link_lost", "unauthorized", "cannot_judge"}  # the listener's notices that close by themselves
NO_TIMEOUT_S = 10 * 365 * 86400

# Beside listener_alarm.OBSERVERS: what the page's state brought (alerts newly open), and the page's own errors.
# Bounded: only the ids open in the last state are kept, and the lists are drained by every poll.
SOAK_OBSERVERS = r"""
(() => {
    const soak = { doc: Math.random().toString(36).slice(2), received: [], open: [], alerts: 0, stateEvents: 0,
                   errors: [], drawn: [] };
    Object.defineProperty(window, "__soak", { value: soak });
    const Real = window.EventSource;
    if (Real) {
        let open = new Set();
        window.EventSource = class extends Real {
            constructor(...args) {
                super(...args);
                this.addEventListener("state", (e) => {
                    let state;
                    try { state = JSON.parse(e.data); } catch (_) { return; }
                    const alerts = state && Array.isArray(state.alerts) ? state.alerts : [];
                    soak.stateEvents += 1;
                    soak.alerts = alerts.length;
                    const now = new Set();
                    for (const a of alerts) {
                        if (!a || !a.alertId || a.state !== "open") continue;
                        now.add(a.alertId);
                        if (!open.has(a.alertId) && soak.received.length < 1000) {
                            soak.received.push({ alertId: a.alertId, kind: a.kind, title: a.title,
                                severity: a.severity, local: !!a.local, at: Date.now() });
                        }
                    }
                    open = now;
                    soak.open = [...now];
                });
            }
        };
    }
    // Every alert the page puts in its dialog, between polls too (a mutation of the dialog, then the test hook's
    // alertShown): what a poll missed because a newer one took its place at once.
    document.addEventListener("DOMContentLoaded", () => {
        const layer = document.getElementById("alert-layer");
        if (!layer) return;
        let last = null;
        new MutationObserver(() => {
            const id = window.cribalert && !layer.hidden ? window.cribalert.snapshot().alertShown : null;
            if (id && id !== last && soak.drawn.length < 1000) soak.drawn.push(id);
            last = id;
        }).observe(layer, { attributes: true, childList: true, subtree: true, characterData: true });
    });
    const keep = (what) => { if (soak.errors.length < 100) soak.errors.push(String(what).slice(0, 500)); };
    window.addEventListener("error", (e) => keep(`${e.message} (${e.filename}:${e.lineno}:${e.colno})`));
    window.addEventListener("unhandledrejection",
        (e) => keep(`unhandled rejection: ${e.reason && e.reason.stack ? e.reason.stack : e.reason}`));
})();
"""

# One script a poll: everything the loop needs (with the growth figures when arguments[0] asks). Run by `Evaluated`
# (DevTools' Runtime.evaluate): WebDriver's execute_script leaves about 0.1–1 KB in the page's JS heap at every call
# under chromedriver 156 (1.6 KB/s for this script at two a second), Runtime.evaluate by value nothing.
POLL = r"""
const soak = window.__soak, alarm = window.__alarm;
const snap = window.cribalert ? window.cribalert.snapshot() : null;
const conn = document.querySelector("article.monitor-card .mc-conn-text");
const out = {
    doc: soak ? soak.doc : null,
    hook: !!snap,
    shown: snap ? snap.alertShown : null,
    shownAt: snap && snap.alertShownAt !== null ? Math.round(performance.timeOrigin + snap.alertShownAt) : null,
    connection: conn ? conn.textContent.trim() : null,
    tones: alarm ? alarm.tones : 0,
    notifications: alarm ? alarm.notifications.splice(0).length : 0,
    received: soak ? soak.received.splice(0) : [],
    drawn: soak ? soak.drawn.splice(0) : [],
    open: soak ? soak.open : [],
    errors: soak ? soak.errors.splice(0) : [],
    stateEvents: soak ? soak.stateEvents : 0,
    stateAlerts: soak ? soak.alerts : 0,
};
if (arguments[0]) {
    out.heap = performance.memory ? performance.memory.usedJSHeapSize : null;
    out.dom = document.getElementsByTagName("*").length;
}
return out;
"""

# Where to press on the alert `id` for `label`, if that alert is still the one on screen (the button brought into
# view; null when another element would take the press).
ANSWER_BUTTON = r"""
const [id, label] = arguments;
if (!window.cribalert || window.cribalert.snapshot().alertShown !== id) return null;
const b = [...document.querySelectorAll("#alert-dialog button")].find((e) => e.offsetParent !== null
    && (e.getAttribute("aria-label") || e.textContent.trim()) === label);
if (!b) return null;
b.scrollIntoView({ block: "center" });
const r = b.getBoundingClientRect();
const x = r.left + r.width / 2, y = r.top + r.height / 2;
const hit = document.elementFromPoint(x, y);
return { x, y, covered: !(hit && b.contains(hit)) };
"""


# Where a parent's first touch lands: a heading (the alert's title while one is shown), nothing that acts. The app
# makes no sound before the page has had a user activation (sounds.js), and past the welcome nothing asks for one.
FIRST_TOUCH = r"""
const layer = document.getElementById("alert-layer");
const target = layer && !layer.hidden ? document.getElementById("alert-title")
    : document.querySelector("section[data-screen]:not([hidden]) h1");
if (!target) return null;
const r = target.getBoundingClientRect();
return { x: r.left + Math.min(20, r.width / 2), y: r.top + r.height / 2,
         active: navigator.userActivation.hasBeenActive };
"""


def evaluate(driver, expression: str):
    """The value of `expression` in the page (DevTools' Runtime.evaluate, by value: nothing is kept in the page)."""
    answer = driver.execute_cdp_cmd("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    if "exceptionDetails" in answer:
        details = answer["exceptionDetails"]
        said = (details.get("exception") or {}).get("description") or details.get("text", "?")
        raise CheckFailed("page script", said)
    return answer["result"].get("value")


class Evaluated:
    """Stands for a Window where listener_alarm's helpers only run a script (`w.d.execute_script`): the script runs
    through `evaluate` instead, so that reusing them leaves nothing in the page either."""

    def __init__(self, driver):
        self.d = self
        self.driver = driver

    def execute_script(self, script: str, *args):
        return evaluate(self.driver, f"(function () {{{script}\n}}).apply(null, {json.dumps(list(args))})")


def press(driver, x: float, y: float) -> None:
    """A tap as the browser's input gets it (a trusted click: pressed and released at x, y of the viewport)."""
    for kind in ("mousePressed", "mouseReleased"):
        driver.execute_cdp_cmd("Input.dispatchMouseEvent",
                               {"type": kind, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1})


def emit(line: dict) -> None:
    print(json.dumps(line), flush=True)


class Soak:
    """The loop's memory: what was shown, answered and received, and the counters."""

    def __init__(self, lis: Window, args, result: dict):
        self.lis = lis
        self.page = Evaluated(lis.d)  # what the loop runs in the page goes through DevTools (see POLL)
        self.args = args
        self.result = result
        self.entries: dict[str, dict] = {}  # alertId → its entry in result["shown"]
        self.result["shown"] = self.shown = []
        self.received: dict[str, dict] = {}  # alertId → what the page's state said when it first came open
        self.drawn: set[str] = set()  # every alertId the page put in its dialog (between polls too)
        self.clicks: dict[str, list[float]] = {}  # alertId → when it was clicked (monotonic)
        self.current: str | None = None  # the alertId on screen at the last poll
        self.current_since = 0.0
        self.connected_since: float | None = None  # the card said "Connected" from then on
        self.doc = None
        self.base_tones = 0
        self.tones = 0
        self.last_tones = 0
        self.notifications = 0
        self.reloads = 0
        self.severe: list[dict] = []
        self.severe_count = 0
        self.page_errors: list[str] = []
        self.problems: list[str] = []
        self.last_poll: dict = {}

    # -- one poll ----------------------------------------------------------------------------------------------

    def poll(self, sample: bool = False) -> dict:
        p = self.page.execute_script(POLL, sample)
        now = time.monotonic()
        if p["doc"] != self.doc:
            if self.doc is not None:  # the page was loaded again: its counters started from 0
                self.reloads += 1
                self.base_tones += self.last_tones
                self.problem(f"the page was loaded again (document {p['doc']})")
            self.doc = p["doc"]
        self.last_tones = p["tones"]
        self.tones = self.base_tones + p["tones"]
        self.notifications += p["notifications"]
        for r in p["received"]:
            if r["alertId"] not in self.received:
                self.received[r["alertId"]] = r
                log("received", r["kind"], repr(r["title"]), r["alertId"])
        self.drawn.update(p["drawn"])
        for e in p["errors"]:
            if len(self.page_errors) < 20:
                self.page_errors.append(e)
            log("PAGE ERROR", e)
            self.problem(f"the page threw: {e[:200]}")
        if not p["hook"]:
            raise CheckFailed("page", "window.cribalert is missing: the app is not loaded")
        self.follow_connection(p, now)
        shown = p["shown"]
        if shown != self.current:
            if self.current:
                self.left(self.current, p)
            if shown:
                self.appeared(shown, p)
            self.current = shown
            self.current_since = now
        if shown:
            self.answer(shown, now)
            self.check_stuck(shown, now)
        self.result.update(tones=self.tones, notifications=self.notifications)
        self.last_poll = p
        return p

    def follow_connection(self, p: dict, now: float) -> None:
        connected = (p["connection"] or "").lower() == "connected"
        if connected and self.connected_since is None:
            self.connected_since = now
        elif not connected:
            self.connected_since = None
        before = (self.last_poll.get("connection") if self.last_poll else None)
        if p["connection"] != before:
            log("card:", p["connection"])

    def appeared(self, alert_id: str, p: dict) -> None:
        entry = self.entries.get(alert_id)
        if entry is not None:
            entry["times_shown"] += 1
            entry["closed_by"] = None
            log("shown again", entry["kind"], alert_id)
            return
        shown = listener_alarm.dialog(self.page) or {}
        info = self.received.get(alert_id) or self.from_api(alert_id)
        title = info.get("title") or shown.get("title")
        if shown.get("title") and title and shown["title"] != title:
            log("note: the dialog says", repr(shown["title"]), "for", alert_id, "titled", repr(title))
        kind = info.get("kind") or ("link_lost" if (title or "").startswith("Lost the link") else None)
        entry = {
            "alertId": alert_id, "kind": kind, "title": title,
            "severity": " ".join(c for c in shown.get("cls", "").split() if c != "alert") or info.get("severity"),
            "at": p["shownAt"] or round(time.time() * 1000), "closed_ms": None, "closed_by": None,
            "times_shown": 1, "answered": False, "buttons": shown.get("buttons", []),
        }
        self.entries[alert_id] = entry
        self.shown.append(entry)
        log("SHOWN", entry["kind"], repr(title), entry["severity"], alert_id)

    def from_api(self, alert_id: str) -> dict:
        """What the listener's api/state says of an alert the page's state events did not bring (a first state
        fetched before the event stream)."""
        try:
            return next((a for a in self.lis.api.state()["alerts"] if a.get("alertId") == alert_id), {})
        except Exception as e:  # noqa: BLE001 - only for naming it
            log("api/state unavailable:", e)
            return {}

    def left(self, alert_id: str, p: dict) -> None:
        entry = self.entries[alert_id]
        entry["closed_ms"] = round(time.time() * 1000) - entry["at"]
        still_open = alert_id in p["open"]
        if any(c >= self.current_since for c in self.clicks.get(alert_id, [])):
            how = "answered"  # clicked since it (last) appeared
        elif not still_open:
            how = "itself"
        else:
            how = "replaced" if p["shown"] else "hidden"
        entry["closed_by"] = how
        log("closed", entry["kind"], alert_id, how, f"after {entry['closed_ms']} ms")

    def answer(self, alert_id: str, now: float) -> None:
        """Answers the alert on screen as a parent would (see the module's docstring); a lost link is left alone."""
        entry = self.entries[alert_id]
        if entry["kind"] in NOT_ANSWERED or now - self.current_since < self.args.answer_after:
            return
        clicks = self.clicks.setdefault(alert_id, [])
        if clicks and now - clicks[-1] < CLICK_AGAIN_S:
            return
        if len(clicks) >= CLICKS_AT_MOST:
            if len(clicks) == CLICKS_AT_MOST:
                clicks.append(now)
                self.problem(f"{entry['kind']} {alert_id} stays on screen after {CLICKS_AT_MOST} clicks")
            return
        label = self.label_for(entry)
        clicks.append(now)
        at = self.page.execute_script(ANSWER_BUTTON, alert_id, label)
        if at is None or at["covered"]:  # replaced or covered meanwhile: again at the next try
            log("no", repr(label), "to press on", alert_id, "(covered)" if at else "(replaced meanwhile?)")
            return
        press(self.lis.d, at["x"], at["y"])
        entry["answered"] = True
        log("answered", entry["kind"], alert_id, "with", repr(label))

    def label_for(self, entry: dict) -> str:
        buttons = entry["buttons"]
        if entry["kind"] != "noise" and self.args.safety_answer == "okay" and "Mark as okay" in buttons:
            return "Mark as okay"
        return "Dismiss" if "Dismiss" in buttons else "Close alert"

    def check_stuck(self, alert_id: str, now: float) -> None:
        entry = self.entries[alert_id]
        if entry["kind"] != "link_lost" or self.connected_since is None or entry.get("stuck"):
            return
        if now - max(self.connected_since, self.current_since) > self.args.stuck_seconds:
            entry["stuck"] = True
            self.problem(f"the lost-link dialog {alert_id} is still up {self.args.stuck_seconds:.0f} s after the card "
                         "said Connected")

    def problem(self, what: str) -> None:
        log("PROBLEM", what)
        if len(self.problems) < 50:
            self.problems.append(what)

    # -- the console and the samples -----------------------------------------------------------------------------

    def drain_console(self) -> None:
        """SEVERE entries are kept (the first 20); a non-network one (the page's own error) is a problem."""
        try:
            entries = self.lis.d.get_log("browser")
        except WebDriverException as e:
            log("console unavailable:", e)
            return
        for e in entries:
            if e.get("level") != "SEVERE":
                continue
            self.severe_count += 1
            if len(self.severe) < 20:
                self.severe.append(e)
            log("console SEVERE", e.get("source"), e.get("message", "")[:200])
            if e.get("source") != "network":
                self.problem(f"console: {e.get('message', '')[:200]}")
        self.result.update(console_errors=[e.get("message", "") for e in self.severe],
                           console_error_count=self.severe_count)

    def sample(self, t: float) -> dict:
        d = self.lis.d
        try:
            d.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
        except WebDriverException as e:
            log("collectGarbage failed:", e)
        p = self.poll(sample=True)
        metrics = {}
        try:
            metrics = {m["name"]: m["value"] for m in d.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
        except WebDriverException as e:
            log("Performance.getMetrics failed:", e)
        self.drain_console()
        line = {
            "event": "sample", "t": round(t, 1), "shown": self.counts(), "tones": self.tones,
            "notifications": self.notifications, "js_heap_used": p.get("heap"), "dom_nodes": p.get("dom"),
            "console_errors": self.severe_count, "connection": p["connection"], "received": len(self.received),
            "state_events": p["stateEvents"], "state_alerts": p["stateAlerts"],
            "event_listeners": metrics.get("JSEventListeners"), "nodes_incl_detached": metrics.get("Nodes"),
            "on_screen": self.entries[p["shown"]]["kind"] if p["shown"] in self.entries else None,
        }
        self.result["samples"] = self.result.get("samples", 0) + 1
        self.result["last_sample"] = line
        return line

    def counts(self) -> dict:
        out: dict[str, int] = {}
        for entry in self.shown:
            key = entry["kind"] or entry["title"] or "?"
            out[key] = out.get(key, 0) + 1
        return out

    def finish(self, started: float) -> None:
        self.result.update(
            received_not_shown=[{**{k: r.get(k) for k in ("alertId", "kind", "title", "at")},
                                 "drawn": alert_id in self.drawn}
                                for alert_id, r in self.received.items() if alert_id not in self.entries],
            tones=self.tones, notifications=self.notifications, page_errors=self.page_errors,
            problems=self.problems, duration_s=round(time.monotonic() - started, 1), page_reloads=self.reloads,
            on_screen_at_end=self.current)


# ----------------------------------------------------------------------------------------------------------------
# The run


def watch_stdin(stop: threading.Event) -> None:
    """Sets `stop` when stdin reaches EOF (the harness keeps a pipe open; closing it ends the soak). Only a pipe, a
    socket or a terminal is watched: /dev/null or a file would end the soak at once."""
    try:
        mode = os.fstat(0).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0)):
            log("stdin is no pipe: not watched (only a signal or --duration ends the soak)")
            return
        while os.read(0, 4096):
            pass
    except OSError as e:  # no stdin at all: only a signal or --duration ends the soak
        log("stdin unreadable, not watched:", e)
        return
    log("stdin closed: stopping")
    stop.set()


def start_browser(args, browser: Browser, lis_api, result: dict) -> Window:
    web_app.CHROMIUM_FLAGS.append("--enable-precise-memory-info")  # else performance.memory changes every 20 min
    driver = make_driver(args, browser)
    origin = re.match(r"https?://[^/]+", args.listener_url).group(0)
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]})
    for source in (listener_alarm.OBSERVERS, SOAK_OBSERVERS):
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})
    driver.execute_cdp_cmd("Performance.enable", {})
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    log("browser up", result["browser"])
    return Window(driver, args, lis_api, result, driver.current_window_handle, "S")


def touch_once(page: Evaluated, driver, result: dict) -> None:
    """The parent touches the page once (when the welcome's "Continue" was not needed): sound is allowed from then
    on. Reported as active_at_start (false when the welcome was skipped: the page had not been touched)."""
    at = page.execute_script(FIRST_TOUCH)
    if at is None:
        raise CheckFailed("first touch", "no heading to touch on the page")
    result["active_at_start"] = at["active"]
    if not at["active"]:
        press(driver, at["x"], at["y"])
        log("touched the page once (no welcome: the app makes no sound before a touch)")
    if not page.execute_script("return navigator.userActivation.hasBeenActive"):
        raise CheckFailed("first touch", "the page does not count the touch as a user activation")


def run(args, browser: Browser, result: dict, on_ready) -> None:
    lis_api = listener_alarm.check_environment(args)
    lis = start_browser(args, browser, lis_api, result)
    listener_alarm.walk_start(lis, lis_api, args, result)
    soak = Soak(lis, args, result)
    touch_once(soak.page, lis.d, result)
    soak.poll()
    soak.drain_console()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda n, _f: (log("signal", n, ": stopping"), stop.set()))
    threading.Thread(target=watch_stdin, args=(stop,), daemon=True).start()
    on_ready()
    started = time.monotonic()
    next_sample = started + args.sample_seconds
    next_console = started + CONSOLE_EVERY_S
    try:
        while not stop.is_set():
            now = time.monotonic()
            if args.duration and now - started >= args.duration:
                log("--duration reached: stopping")
                break
            if now >= next_sample:
                emit(soak.sample(now - started))
                next_sample += args.sample_seconds * max(1, int((now - next_sample) // args.sample_seconds) + 1)
                next_console = now + CONSOLE_EVERY_S
            else:
                soak.poll()
                if now >= next_console:
                    soak.drain_console()
                    next_console = now + CONSOLE_EVERY_S
            stop.wait(POLL_S)
        soak.poll()
        soak.drain_console()
    finally:
        soak.finish(started)
    log("done:", json.dumps(soak.counts()), "tones", soak.tones, "notifications", soak.notifications,
        "severe", soak.severe_count, "problems", len(soak.problems))
    if soak.problems:
        result["failure"] = "; ".join(soak.problems[:5]) + (f" (+{len(soak.problems) - 5} more)"
                                                            if len(soak.problems) > 5 else "")
        raise CheckFailed("soak", result["failure"])


def save_failure(args, browser: Browser, result: dict) -> None:
    """web_app's failure view (failure.png, the console left in the browser), and the SEVERE entries kept."""
    web_app.save_failure(args, browser, result)
    if args.artifacts:
        with open(Path(args.artifacts) / "console-severe.json", "w") as f:
            json.dump(result.get("console_errors", []), f, indent=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listener-url", required=True, help="the listener's app, secret included")
    ap.add_argument("--monitor-name", default="Nursery", help="the paired monitor's name")
    ap.add_argument("--artifacts", help="directory for the screenshots (and, on failure, the console log)")
    ap.add_argument("--sample-seconds", type=float, default=60, help="one sample line this often")
    ap.add_argument("--launch-timeout", type=float, default=120,
                    help="hard limit for starting the browser and reaching Connected, s")
    ap.add_argument("--answer-after", type=float, default=1.0, help="an alert is answered this long after it shows")
    ap.add_argument("--safety-answer", choices=("close", "okay"), default="close",
                    help="a safety alert without Dismiss: its × (this page only) or Mark as okay (everyone)")
    ap.add_argument("--stuck-seconds", type=float, default=30,
                    help="a lost-link dialog still up this long after the card says Connected fails the run")
    ap.add_argument("--duration", type=float, default=0, help="stop after this many seconds (0: only by signal or "
                                                              "stdin's EOF)")
    ap.add_argument("--step-timeout", type=float, default=20, help="limit for each wait at the start, seconds")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = ap.parse_args()
    if args.sample_seconds <= 0:
        ap.error("--sample-seconds must be positive")
    if not args.listener_url.endswith("/"):
        args.listener_url += "/"
    args.url = args.listener_url  # web_app.py's helpers read it
    # supervise's hard limit once ready: none for a soak, but a --duration one that did not end is stuck
    args.timeout = args.duration + 600 if args.duration else NO_TIMEOUT_S
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver
    return web_app.supervise(args, {"ok": False}, run, save_failure)


if __name__ == "__main__":
    sys.exit(main())
