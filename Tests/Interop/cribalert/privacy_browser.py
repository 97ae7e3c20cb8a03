#!/usr/bin/env python3
"""The listener's app in a real browser during the privacy capture (PrivacyCaptureTests): a parent opens it and
watches the monitor live.

    privacy_browser.py --listener-url http://127.0.0.1:PORT/s/SECRET/ [--artifacts DIR] [--timeout 150]

`cribcall listen --web` must already run, paired with a monitor that runs with --safety (a camera). One headless
Debian Chromium (web_app.py's flags: no background networking, no component updates, no sync) opens the app: the
welcome's disclaimer ("Continue"), the Monitors screen with the monitor Connected and its safety line, "Video" until
the page decodes video and receives sound (listener_app.py's walk: getStats growth, the meter moving, Mute, Keep
live), then "End". The media goes from the monitor straight to the page (WebRTC, DTLS-SRTP, host candidates only).
The browser's console must stay free of SEVERE entries.

Prints {"event": "ready"} once the browser is up, then one JSON line ({"ok": true, "video": {…}, …}); progress on
stderr. Exit status: 0 passed, 1 a check failed, 2 the environment is not usable, 3 a time limit fired.
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
    try:
        status, body = http(args.listener_url, timeout=5)
    except OSError as e:
        raise EnvironmentProblem(f"the listener's app {args.listener_url} cannot be loaded: {e}") from e
    if status != 200 or b"app.js" not in body:
        raise EnvironmentProblem(f"{args.listener_url} does not look like the app (status {status})")
    api = Api(args.listener_url)
    if api.state().get("role") != "listener" or not api.state()["monitors"]:
        raise EnvironmentProblem("the app is not a listener's with a paired monitor: pair first")
    web_app.CHROMIUM_FLAGS.extend(BROWSER_SERVICES_OFF)
    driver = make_driver(args, browser)
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    lis = listener_app.Window(driver, args, api, result, listener_app.open_window(driver, True), "P")
    on_ready()
    listener_app.open_listener_app(lis, args)
    listener_app.walk_monitors(lis, api, result)
    session = listener_app.walk_video(lis, api, result)
    listener_app.walk_end(lis, api, session, result)
    lis.check_console("privacy session")
    check_requests(lis, args, result)


def check_requests(lis: listener_app.Window, args, result: dict) -> None:
    """Everything the page asked for came from the app's own loopback origin (or was data: or blob:)."""
    parts = urllib.parse.urlsplit(args.listener_url)
    origin = f"{parts.scheme}://{parts.netloc}/"
    urls = lis.d.execute_script(
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
        ".map((entry) => entry.name)")
    foreign = [url for url in urls if not url.startswith((origin, "data:", "blob:"))]
    result["page_requests"] = len(urls)
    if not urls or foreign:
        raise CheckFailed("requests", f"the page asked for {foreign or 'nothing'} (only {origin} is allowed)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listener-url", required=True, help="the listener's app, secret included")
    ap.add_argument("--listener-name", default="Mum")
    ap.add_argument("--timeout", type=float, default=150, help="hard limit for the walk once the browser is up, s")
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

    return web_app.supervise(args, {"ok": False}, run, listener_app.save_failure)


if __name__ == "__main__":
    sys.exit(main())
