#!/usr/bin/env python3
"""The apps for parents in a real browser during the privacy capture (PrivacyCaptureTests).

    privacy_browser.py --monitor-url http://127.0.0.1:PORT/s/SECRET/ [--artifacts DIR] [--timeout 150]
    privacy_browser.py --listener-url http://127.0.0.1:PORT/s/SECRET/ [--artifacts DIR] [--timeout 150]

One headless Debian Chromium (web_app.py's flags: no background networking, no component updates, no sync; and
BROWSER_SERVICES_OFF below) opens one app, on the machine it runs on:
- the monitor's (`cribcall monitor --web`, with --safety): marked set up through its API (web_app.py walks the
  setup itself), then the Monitor tab and its live view (WebRTC from the monitor's pipeline, or its pictures);
- the listener's (`cribcall listen --web`, paired with such a monitor): the welcome's disclaimer ("Continue"), the
  Monitors screen with the monitor Connected and its safety line, "Video" until the page decodes video and
  receives sound (listener_app.py's walk: getStats growth, the meter moving, Mute, Keep live), then "End". The
  media goes from the monitor straight to the page (WebRTC, DTLS-SRTP, host candidates only).
The browser's console must stay free of SEVERE entries, and every request the page made must have gone to its own
loopback origin.

Prints {"event": "ready"} once the browser is up, then one JSON line ({"ok": true, …}); progress on stderr. Exit
status: 0 passed, 1 a check failed, 2 the environment is not usable, 3 a time limit fired.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import listener_app  # noqa: E402 - the listener's walk
import web_app  # noqa: E402 - the shared helpers
from web_app import Api, Browser, CheckFailed, EnvironmentProblem, http, make_driver  # noqa: E402

web_app.LOG_NAME[0] = "privacy_browser"

# The browser's own services, which are Chromium's and not the app's, stay off the wire: optimization hints and
# autofill are switched off, and the three service hosts Debian's Chromium still contacts with background
# networking off (sign-in, extension and component updates; its wrapper enables remote extensions and Google API
# keys) resolve to nothing inside the browser. Any other name the page or the browser looked up would go on the
# wire and fail the capture; the page's own requests are also checked here (all to its loopback origin).
BROWSER_SERVICES_OFF = [
    "--disable-features=OptimizationHints,AutofillServerCommunication,MediaRouter",
    "--disable-client-side-phishing-detection",
    "--disable-domain-reliability",
    "--no-pings",
    "--host-resolver-rules=MAP accounts.google.com ~NOTFOUND, MAP clients2.google.com ~NOTFOUND, "
    "MAP update.googleapis.com ~NOTFOUND",
]


def run(args, browser: Browser, result: dict, on_ready) -> None:
    url = args.monitor_url or args.listener_url
    api = web_app.app_api(url, "monitor" if args.monitor_url else "listener")
    if args.listener_url and not api.state()["monitors"]:
        raise EnvironmentProblem("the listener has no paired monitor: pair first")
    web_app.CHROMIUM_FLAGS.extend(BROWSER_SERVICES_OFF)
    driver = make_driver(args, browser)
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    page = listener_app.Window(driver, args, api, result, listener_app.open_window(driver, True), "P")
    on_ready()
    if args.monitor_url:
        # The nursery's own app, set up already (its setup walk is web_app.py's: the final check needs a quiet
        # room, and this session's microphone is loud every 10 s), on its Monitor tab with the live view.
        status, body = http(url + "api/app", "POST",
                            {"disclaimerAccepted": True, "setupComplete": True, "babyName": args.baby_name})
        if status != 200:
            raise EnvironmentProblem(f"POST api/app answered {status}: {body[:200]!r}")
        page.use()
        page.d.get(url)
        acknowledge_alerts(page, api, result)
        watch_live(page, args.baby_name, result)
    else:
        listener_app.open_listener_app(page, args)
        listener_app.walk_monitors(page, api, result)
        session = listener_app.walk_video(page, api, result)
        listener_app.walk_end(page, api, session, result)
    page.check_console("privacy session")
    check_requests(page, url, result)


def acknowledge_alerts(page: listener_app.Window, api: Api, result: dict) -> None:
    """The session's alerts still open fill the screen when the app opens: a parent marks each okay."""
    from selenium.webdriver.common.by import By  # web_app.py reports a missing selenium before this runs
    acknowledged = []
    for alert in [a for a in api.state()["alerts"] if a["state"] != "okay"]:
        page.wait(f"the open alert {alert['title']!r} shown", lambda: any(
            d.is_displayed() for d in page.d.find_elements(By.CSS_SELECTOR, "[role=alertdialog]")))
        page.click("Mark as okay")
        page.wait(f"{alert['title']!r} okay in api/state", lambda: next(
            (a for a in api.state()["alerts"] if a["alertId"] == alert["alertId"] and a["state"] == "okay"), None))
        acknowledged.append(alert["kind"])
    page.wait("no alert on the screen", lambda: not any(
        d.is_displayed() for d in page.d.find_elements(By.CSS_SELECTOR, "[role=alertdialog]")))
    result["alerts_marked_okay"] = acknowledged


def watch_live(page: listener_app.Window, name: str, result: dict) -> None:
    """The Monitor tab with its live view settled: WebRTC from the monitor's pipeline, or its pictures (web_app.py's
    walk_monitor checks the rest of that screen)."""
    page.wait_screen("monitor")
    page.wait("the monitor's heading", lambda: web_app.normalise(f"{name}'s Room") in page.text())
    live = page.wait("the live view settled (video or pictures)",
                     lambda: (s := page.snapshot()["live"])["mode"] in ("webrtc", "pictures") and s,
                     timeout=web_app.LIVE_SETTLE_S)
    result["monitor_live_view"] = {"mode": live["mode"], "reason": live.get("reason"),
                                   "connect_ms": live.get("connectMs")}
    page.screenshot("monitor")


def check_requests(page: listener_app.Window, url: str, result: dict) -> None:
    """Everything the page asked for came from the app's own loopback origin (or was data: or blob:)."""
    parts = urllib.parse.urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}/"
    urls = page.d.execute_script(
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
        ".map((entry) => entry.name)")
    foreign = [u for u in urls if not u.startswith((origin, "data:", "blob:"))]
    result["page_requests"] = len(urls)
    if not urls or foreign:
        raise CheckFailed("requests", f"the page asked for {foreign or 'nothing'} (only {origin} is allowed)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--listener-url", help="the listener's app (paired), secret included: watch the monitor live")
    which.add_argument("--monitor-url", help="the monitor's app, secret included: its Monitor tab, live")
    ap.add_argument("--baby-name", default="Liam", help="the baby's name entered in the monitor's setup")
    ap.add_argument("--listener-name", default="Mum")
    ap.add_argument("--timeout", type=float, default=150, help="hard limit for the walk once the browser is up, s")
    ap.add_argument("--launch-timeout", type=float, default=120, help="hard limit for starting the browser, s")
    ap.add_argument("--step-timeout", type=float, default=20, help="limit for each wait, seconds")
    ap.add_argument("--artifacts", help="directory for the screenshots (and, on failure, the console log)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = ap.parse_args()
    for key in ("monitor_url", "listener_url"):
        if getattr(args, key) and not getattr(args, key).endswith("/"):
            setattr(args, key, getattr(args, key) + "/")
    args.url = args.monitor_url or args.listener_url  # web_app.py's helpers read it
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver

    return web_app.supervise(args, {"ok": False}, run, listener_app.save_failure)


if __name__ == "__main__":
    sys.exit(main())
