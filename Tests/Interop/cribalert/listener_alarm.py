#!/usr/bin/env python3
"""Real-browser check that the listener's app (`cribcall listen --web`) sounds the alarm a parent relies on at night:
for a real noise the monitor hears and for a lost link, with the tab in front and with it behind another tab.

    listener_alarm.py --listener-url http://127.0.0.1:P/s/S/ [--monitor-name Nursery] [--artifacts DIR]

The listener must already run, paired with one monitor (e.g. by `cribcall pair --qr`) on its defaults, whose
microphone makes a noise over the default threshold every few seconds (`--audio-source test:cry`). Nothing is
started here but one headless Debian Chromium (/usr/bin/chromium + /usr/bin/chromedriver) at 390×844. The page's
notification permission is granted through DevTools, as a parent does once through the browser's prompt. Two
observers are installed before the page's own scripts (DevTools' addScriptToEvaluateOnNewDocument): every WebAudio
source started in a running AudioContext is counted (the alarm's tones), and every Notification the page constructs
is recorded with the page's visibility and focus at that moment. Both wrap the real browser objects: the tones still
play (muted at the output by --mute-audio) and the notifications are still shown.

1. The welcome (the disclaimer, "Continue": the click that lets the page make sound), then Monitors, where the
   monitor's card says "Connected".
2. A noise, the tab in front: the full-screen alert "A sound in <monitor>" appears, naming the monitor, with
   "Listen now" and "Dismiss"; WebAudio played its tones. "Dismiss" closes it, and the listener's api/state has it
   closed (not open again on reload).
3. A noise, the tab behind another tab: the page constructs a Notification "A sound in <monitor>" while hidden or
   unfocused, and plays the tones.
   Then "Notifications" off in Alert Preferences (the switch): the next noise behind plays the tones and shows
   no Notification; the switch on again.
4. The link lost, the tab behind: prints {"event": "stop-monitor"} (the caller kills the monitor, as a power cut
   would) and waits for the listener's api/state to have "Lost the link to <monitor>" open; back in front, the
   page shows it full screen (high severity) and a Notification for it was shown while hidden; tones played.
5. Prints {"event": "start-monitor"} (the caller starts the monitor again): the dialog closes by itself and the page
   says "The link to <monitor> is back."
6. A high alert stays in front of a newer, lesser one: two alerts handed to the page's Alerts module (a covered
   face, then a newer noise) show the covered face first, the noise once it is closed.
7. After a reload nobody has touched the page, so the browser lets it make no sound: the banner "Tap here to turn
   the alarm sound on" is shown, and an alert handed to the page then shows without tones. A tap on the banner
   allows sound: the banner goes, the page says "The alarm sound is on.", and the next alert plays its tones.

Prints {"event": "ready"} once the browser is up (--timeout, each step's own limit, counts from its start), the
two events above, then one JSON line ({"ok": true, "noise_dialog_ms": …, "tones": …, "notifications": [...]});
progress goes to stderr. Exit status:
0 passed, 1 a check failed, 2 the environment is not usable, 3 --launch-timeout or --timeout fired.

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import web_app  # noqa: E402 - the shared helpers
from listener_app import Window, open_listener_app  # noqa: E402
from web_app import (  # noqa: E402
    Api, Browser, CheckFailed, EnvironmentProblem, log, make_driver, ms_since, normalise, selenium,
)

if selenium is not None:
    from selenium.webdriver.common.by import By

web_app.LOG_NAME[0] = "listener_alarm"

# Observers only: they count and record, and hand every call on to the browser's own objects.
OBSERVERS = r"""
(() => {
    const seen = { tones: 0, notifications: [], visibility: [] };
    Object.defineProperty(window, "__alarm", { value: seen });
    const start = AudioScheduledSourceNode.prototype.start;
    AudioScheduledSourceNode.prototype.start = function (...args) {
        if (this.context && this.context.state === "running") seen.tones += 1;
        return start.apply(this, args);
    };
    const Real = window.Notification;
    if (Real) {
        const Observed = function (title, options) {
            seen.notifications.push({ title: String(title), body: (options || {}).body || "",
                requireInteraction: !!(options || {}).requireInteraction,
                visibility: document.visibilityState, focused: document.hasFocus(), at: Date.now() });
            return new Real(title, options);
        };
        Object.defineProperty(Observed, "permission", { get: () => Real.permission });
        Observed.requestPermission = (...args) => Real.requestPermission(...args);
        Observed.prototype = Real.prototype;
        window.Notification = Observed;
    }
    document.addEventListener("visibilitychange", () => seen.visibility.push(document.visibilityState));
})();
"""


def alarm(lis: Window) -> dict:
    return lis.d.execute_script("return window.__alarm")


def dialog(lis: Window) -> dict | None:
    """The full-screen alert as shown: its title, severity class and buttons; None while none is shown."""
    return lis.d.execute_script("""
        const layer = document.getElementById("alert-layer");
        if (!layer || layer.hidden) return null;
        const box = document.getElementById("alert-dialog");
        return {title: document.getElementById("alert-title").textContent.trim(),
                body: document.getElementById("alert-body").textContent.trim(),
                from: document.getElementById("alert-from").textContent.trim(),
                cls: box.className,
                buttons: [...box.querySelectorAll("#alert-actions button")].map(b => b.textContent.trim())};
    """)


def notices(lis_api: Api, kind: str) -> list[dict]:
    return [a for a in lis_api.state()["alerts"] if a.get("kind") == kind]


def walk_start(lis: Window, lis_api: Api, args, result: dict) -> str:
    open_listener_app(lis, args)
    lis.wait("the monitor's card says Connected", lambda: any(
        m["connection"] == "connected" for m in lis_api.state()["monitors"]), timeout=30)
    lis.wait("Connected on the page", lambda: "connected" in normalise(lis.inside("#monitor-cards").text))
    lis.screenshot("connected")
    return lis_api.state()["monitors"][0]["monitorId"]


def walk_noise_in_front(lis: Window, lis_api: Api, args, result: dict) -> str:
    title = f"A sound in {args.monitor_name}"
    t0 = time.monotonic()
    shown = lis.wait(f"the alert {title!r} on screen", lambda: (d := dialog(lis)) and d["title"] == title and d,
                     timeout=40)
    result["noise_dialog"] = shown
    result["noise_wait_ms"] = ms_since(t0)
    if "Listen now" not in shown["buttons"] or "Dismiss" not in shown["buttons"]:
        raise CheckFailed("noise alert", f"its buttons are {shown['buttons']}")
    if args.monitor_name not in shown["from"] and args.monitor_name not in shown["title"]:
        raise CheckFailed("noise alert", f"it does not name the monitor: {shown}")
    # nothing else sounds on this page: any tone since it loaded is this alarm's (it may have come up meanwhile)
    lis.wait("the alarm's tones (WebAudio)", lambda: alarm(lis)["tones"] > 0, timeout=5)
    lis.screenshot("noise-alert")
    open_ids = {a["alertId"] for a in notices(lis_api, "noise") if a["state"] == "open"}
    if len(open_ids) != 1:
        raise CheckFailed("noise alert", f"the listener's state has {len(open_ids)} open noise alerts")
    lis.click("Dismiss")
    lis.wait("the dialog closed", lambda: dialog(lis) is None or dialog(lis)["title"] != title, timeout=5)
    alert_id = open_ids.pop()
    lis.wait("the noise closed in the listener's state", lambda: all(
        a["state"] != "open" for a in notices(lis_api, "noise") if a["alertId"] == alert_id), timeout=5)
    result["tones_in_front"] = alarm(lis)["tones"]
    # the monitor's card says when it last heard a sound
    last = lis.wait("the card's last sound", lambda: (t := lis.d.execute_script(
        "const e = document.querySelector('article.monitor-card .mc-noise'); return e ? e.textContent : ''"))
        and t.startswith("Last sound") and t, timeout=5)
    result["card_last_sound"] = last
    return alert_id


def hide(lis: Window) -> str:
    """Puts another tab in front of the app's; answers that tab's handle."""
    lis.d.switch_to.new_window("tab")
    lis.d.get("about:blank")
    return lis.d.current_window_handle


def show(lis: Window, other: str) -> None:
    """Closes the other tab: the app's comes to the front again."""
    lis.d.switch_to.window(other)
    lis.d.close()
    lis.d.switch_to.window(lis.handle)
    lis.d.execute_cdp_cmd("Page.bringToFront", {})


def wait_api(desc: str, pred, timeout: float) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.2)
    raise CheckFailed(desc, f"not reached within {timeout:.0f} s")


def walk_noise_behind(lis: Window, lis_api: Api, args, result: dict, first: str) -> None:
    title = f"A sound in {args.monitor_name}"
    before = alarm(lis)
    other = hide(lis)
    wait_api("another noise while the tab is behind", lambda: any(
        a["alertId"] != first and a["state"] == "open" for a in notices(lis_api, "noise")), timeout=40)
    time.sleep(1.5)  # the page's state arrives by its event stream; its timers may be slowed while hidden
    show(lis, other)
    now = alarm(lis)
    shown = [n for n in now["notifications"][len(before["notifications"]):] if n["title"] == title]
    if not shown:
        raise CheckFailed("noise behind", f"no notification {title!r}: {now['notifications']}")
    if shown[0]["visibility"] == "visible" and shown[0]["focused"]:
        raise CheckFailed("noise behind", f"the notification was made with the page in front: {shown[0]}")
    if now["tones"] <= before["tones"]:
        raise CheckFailed("noise behind", "no tones played while the tab was behind")
    if not shown[0]["requireInteraction"]:
        raise CheckFailed("noise behind", f"Override Silent Mode is on: the notification must stay: {shown[0]}")
    result["noise_notification"] = shown[0]
    result["visibility_changes"] = now["visibility"]
    # the dialog is there when the parent comes back; they dismiss it
    lis.wait(f"the alert {title!r} on coming back", lambda: (d := dialog(lis)) and d["title"] == title)
    lis.click("Dismiss")


def set_notifications(lis: Window, lis_api: Api, on: bool) -> None:
    """The "Notifications" switch in Alert Preferences, as a parent turns it: stored in the listener's state."""
    lis.d.execute_script("location.hash = '#/settings/alerts'")
    switch = lis.control("Notifications")
    if switch.is_selected() != on:
        switch.click()
    wait_api(f"notifications {'on' if on else 'off'} in the listener's state",
             lambda: lis_api.state()["app"].get("notifications") is on, timeout=10)


def walk_notifications_off(lis: Window, lis_api: Api, args, result: dict) -> None:
    """Notifications off (seed 000 FR7.2): a noise behind another tab still rings, with no notification."""
    title = f"A sound in {args.monitor_name}"
    set_notifications(lis, lis_api, False)
    lis.screenshot("notifications-off")
    seen = {a["alertId"] for a in notices(lis_api, "noise")}
    before = alarm(lis)
    other = hide(lis)
    wait_api("a noise while notifications are off", lambda: any(
        a["alertId"] not in seen and a["state"] == "open" for a in notices(lis_api, "noise")), timeout=40)
    time.sleep(1.5)
    show(lis, other)
    now = alarm(lis)
    shown = [n for n in now["notifications"][len(before["notifications"]):] if n["title"] == title]
    if shown:
        raise CheckFailed("notifications off", f"a notification was shown all the same: {shown}")
    if now["tones"] <= before["tones"]:
        raise CheckFailed("notifications off", "the alarm did not sound (only the notification is turned off)")
    lis.wait(f"the alert {title!r} on coming back", lambda: (d := dialog(lis)) and d["title"] == title)
    lis.click("Dismiss")
    set_notifications(lis, lis_api, True)
    lis.d.execute_script("location.hash = '#/monitors'")


def walk_link_lost(lis: Window, lis_api: Api, args, result: dict) -> None:
    title = f"Lost the link to {args.monitor_name}"
    before = alarm(lis)
    other = hide(lis)
    print(json.dumps({"event": "stop-monitor"}), flush=True)
    t0 = time.monotonic()
    wait_api("the lost link in the listener's state", lambda: any(
        a["state"] == "open" for a in notices(lis_api, "link_lost")), timeout=60)
    result["link_lost_after_ms"] = ms_since(t0)
    time.sleep(1.5)
    show(lis, other)
    shown = lis.wait(f"the alert {title!r} on screen", lambda: (d := dialog(lis)) and d["title"] == title and d)
    if "high" not in shown["cls"].split():
        raise CheckFailed("link lost", f"not shown as a high-severity alert: {shown}")
    now = alarm(lis)
    notified = [n for n in now["notifications"][len(before["notifications"]):] if n["title"] == title]
    if not notified or (notified[0]["visibility"] == "visible" and notified[0]["focused"]):
        raise CheckFailed("link lost", f"no notification {title!r} while behind: {now['notifications']}")
    if now["tones"] <= before["tones"]:
        raise CheckFailed("link lost", "no tones played for the lost link")
    # Override Silent Mode (on by default): the alarm rings again until answered
    rung = alarm(lis)["tones"]
    lis.wait("the lost link's alarm ringing again (Override Silent Mode)", lambda: alarm(lis)["tones"] > rung,
             timeout=20)
    result["link_lost_dialog"] = shown
    result["link_lost_notification"] = notified[0]
    lis.screenshot("link-lost")


def walk_link_back(lis: Window, lis_api: Api, args, result: dict) -> None:
    title = f"Lost the link to {args.monitor_name}"
    print(json.dumps({"event": "start-monitor"}), flush=True)
    t0 = time.monotonic()
    lis.wait("the lost-link alert closed by itself", lambda: (d := dialog(lis)) is None or d["title"] != title,
             timeout=60)
    result["link_back_after_ms"] = ms_since(t0)
    said = f"the link to {args.monitor_name} is back".lower()
    lis.wait("the page says the link is back", lambda: said in normalise(
        lis.d.execute_script("return document.getElementById('status').textContent")),
        timeout=5)
    lis.wait("Connected again", lambda: any(m["connection"] == "connected" for m in lis_api.state()["monitors"]),
             timeout=10)
    lis.screenshot("link-back")


def walk_high_in_front(lis: Window, lis_api: Api, args, result: dict) -> None:
    """A high alert stays in front of a newer, lesser one (the page's order: severity, then time). Two alerts are
    handed to the page's own Alerts module, as its state events hand them: "Baby's face may be covered" (high), then
    a newer noise (an hour ahead: newer than any real one meanwhile); the high one is on screen, and after it is
    closed the noise comes up."""
    monitor_id = lis_api.state()["monitors"][0]["monitorId"]
    lis.d.execute_script("""
        const [monitorId, name, now] = arguments;
        const base = {monitorId, monitorName: name, state: "open", body: "", buttons: []};
        Alerts.receive({...base, alertId: "walk-high", kind: "face_covered", severity: "high",
                        title: "Baby's face may be covered", detectedAt: now});
        Alerts.receive({...base, alertId: "walk-noise", kind: "noise", severity: "medium",
                        title: "A newer sound", detectedAt: now + 3600000});
    """, monitor_id, args.monitor_name, int(time.time() * 1000))
    shown = lis.wait("an alert on screen", lambda: dialog(lis))
    if shown["title"] != "Baby's face may be covered":
        raise CheckFailed("high in front", f"a newer medium alert covers the high one: {shown}")
    lis.screenshot("high-in-front")
    lis.click("Close alert")
    lis.wait("the noise after the high alert", lambda: (d := dialog(lis)) and d["title"] == "A newer sound")
    lis.click("Close alert")


def hand_alert(lis: Window, lis_api: Api, args, alert_id: str) -> None:
    """An open noise alert handed to the page's own Alerts module, as its state events hand them."""
    lis.d.execute_script("""
        const [monitorId, name, id, now] = arguments;
        Alerts.receive({monitorId, monitorName: name, state: "open", body: "", buttons: [], alertId: id,
                        kind: "noise", severity: "medium", title: "A sound handed to the page", detectedAt: now});
    """, lis_api.state()["monitors"][0]["monitorId"], args.monitor_name, alert_id, int(time.time() * 1000))


def walk_sound_after_reload(lis: Window, lis_api: Api, args, result: dict) -> None:
    lis.d.refresh()
    lis.wait_screen("monitors")
    banner = lis.wait("the sound banner after the reload", lambda: (b := lis.d.find_element(By.ID, "sound-banner"))
                      .is_displayed() and b)
    if "turn the alarm sound on" not in normalise(banner.text):
        raise CheckFailed("sound after reload", f"the banner says {banner.text!r}")
    lis.screenshot("sound-banner")
    tones = alarm(lis)["tones"]
    hand_alert(lis, lis_api, args, "walk-silent")
    lis.wait("the alert shown", lambda: (d := dialog(lis)) and d["title"] == "A sound handed to the page")
    time.sleep(1)
    if alarm(lis)["tones"] != tones:
        raise CheckFailed("sound after reload", "tones played before the page was touched: the premise is wrong")
    # closed by the page's own button, clicked from script: no tap of the person's (that would allow sound)
    lis.d.execute_script("document.querySelector('[data-alert=close]').click()")
    lis.wait("the alert closed", lambda: dialog(lis) is None)
    if not banner.is_displayed():
        raise CheckFailed("sound after reload", "the banner went while the alarm could not sound")
    banner.click()  # the parent's first tap after the reload (any tap would do)
    lis.wait("the banner gone once sound is allowed", lambda: not banner.is_displayed() and lis.snapshot()
             ["soundAllowed"])
    said = "the alarm sound is on"
    lis.wait("the page says so", lambda: said in normalise(
        lis.d.execute_script("return document.getElementById('status').textContent")), timeout=5)
    hand_alert(lis, lis_api, args, "walk-heard")
    lis.wait("the next alert plays its tones", lambda: alarm(lis)["tones"] > tones, timeout=5)
    lis.click("Close alert")
    result["tones_after_tap"] = alarm(lis)["tones"] - tones


def check_environment(args) -> Api:
    web_app.check_browser_tools(args)
    api = web_app.app_api(args.listener_url, "listener")
    monitors = api.state()["monitors"]
    if len(monitors) != 1:
        raise EnvironmentProblem(f"the listener must be paired with one monitor ({len(monitors)} now)")
    return api


def run(args, browser: Browser, result: dict, on_ready) -> None:
    lis_api = check_environment(args)
    driver = make_driver(args, browser)
    origin = re.match(r"https?://[^/]+", args.listener_url).group(0)
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVERS})
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    lis = Window(driver, args, lis_api, result, driver.current_window_handle, "A")
    log("browser up", result["browser"])
    on_ready()
    timings = result["timings_ms"] = {}
    for name, fn in [
        ("start", lambda: walk_start(lis, lis_api, args, result)),
        ("noise_in_front", lambda: result.__setitem__("first", walk_noise_in_front(lis, lis_api, args, result))),
        ("noise_behind", lambda: walk_noise_behind(lis, lis_api, args, result, result["first"])),
        ("notifications_off", lambda: walk_notifications_off(lis, lis_api, args, result)),
        ("link_lost", lambda: walk_link_lost(lis, lis_api, args, result)),
        ("link_back", lambda: walk_link_back(lis, lis_api, args, result)),
        ("high_in_front", lambda: walk_high_in_front(lis, lis_api, args, result)),
        ("sound_after_reload", lambda: walk_sound_after_reload(lis, lis_api, args, result)),
    ]:
        web_app.begin_step(name)
        t = time.monotonic()
        fn()
        timings[name] = ms_since(t)
        lis.check_console(name)
        log("step", name, "ok")
    result["tones"] = alarm(lis)["tones"]
    result["notifications"] = alarm(lis)["notifications"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listener-url", required=True, help="the listener's app, secret included")
    ap.add_argument("--monitor-name", default="Nursery", help="the paired monitor's name")
    ap.add_argument("--timeout", type=float, default=180,
                    help="hard limit for each step of the walk, from when it starts, seconds")
    ap.add_argument("--launch-timeout", type=float, default=120, help="hard limit for starting the browser, s")
    ap.add_argument("--step-timeout", type=float, default=20, help="limit for each wait, seconds")
    ap.add_argument("--artifacts", help="directory for the screenshots (and, on failure, the console log)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = ap.parse_args()
    if not args.listener_url.endswith("/"):
        args.listener_url += "/"
    args.url = args.listener_url  # web_app.py's helpers read it
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver
    return web_app.supervise(args, {"ok": False}, run, web_app.save_failure)


if __name__ == "__main__":
    sys.exit(main())
