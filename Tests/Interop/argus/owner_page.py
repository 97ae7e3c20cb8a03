#!/usr/bin/env python3
"""Real-browser walk through argus-hub's owner's page (`argus-hub --web 0`), against the running hub's mobile API.

    owner_page.py --url http://127.0.0.1:P/s/SECRET/ --hub http://127.0.0.1:H --fingerprint HEX [--artifacts DIR]

The hub must already run with --http (loopback) and --web, on a new data directory (nothing paired). Nothing is
started here but one headless Debian Chromium (/usr/bin/chromium + /usr/bin/chromedriver) of 390×844; the CribAlert
walk's browser helpers (Tests/Interop/cribalert/web_app.py) are imported, not copied.

1. The page shows the hub's certificate fingerprint in groups of four (what the app pins) and "No devices yet.".
2. "New pairing code": the page shows 6 digits and how long they work; the hub's own API
   (POST /api/v1/mobile/auth/verify, as a phone would) takes them once and answers tokens.
3. Within the page's refresh (every second while a code is live) the device is listed by its name with
   "Revoke <name>", and the code gives way to "<name> is paired."; revoking asks first (a
   confirmation, accepted here), then the device is shown revoked and its access token gets 401 from the API.
4. The same code typed again is refused by the API (single use).
Every control has an accessible name, the browser console has no SEVERE entry, and every request stayed on the
page's loopback origin. Screens go to --artifacts.

Prints one JSON line on stdout ({"ok": true, …}); progress on stderr. Exit status: 0 passed, 1 a check failed, 2
the environment is not usable.

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cribalert"))
from web_app import (  # noqa: E402 - the shared browser helpers
    Browser, CheckFailed, EnvironmentProblem, Page, http, log, make_driver, ms_since, normalise, selenium,
)

if selenium is not None:
    from selenium.webdriver.common.by import By


def api(hub: str, method: str, path: str, body: dict | None = None, token: str | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(hub + "/api/v1/mobile" + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def grouped(hex_text: str) -> str:
    return " ".join(hex_text[i:i + 4] for i in range(0, len(hex_text), 4))


def run(args: argparse.Namespace, browser: Browser, result: dict) -> None:
    if selenium is None:
        raise EnvironmentProblem("the Python package selenium is missing: pip install selenium==4.51.0")
    status, body = http(args.url, timeout=5)
    if status != 200 or b"owner.js" not in body:
        raise EnvironmentProblem(f"{args.url} is not the owner's page (status {status})")
    t0 = time.monotonic()
    driver = make_driver(args, browser)
    result["browser"] = f"{driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}"
    result["timings_ms"] = timings = {"launch_browser": ms_since(t0)}
    page = Page(driver, args, None, result)

    t = time.monotonic()
    driver.get(args.url)
    shown = page.wait("the fingerprint", lambda: driver.find_element(By.ID, "fingerprint").text.strip())
    if shown != grouped(args.fingerprint):
        raise CheckFailed("fingerprint", f"the page shows {shown!r}, the hub's is {grouped(args.fingerprint)!r}")
    page.wait("no devices yet", lambda: normalise("No devices yet.") in page.text())
    page.check_names("start")
    page.screenshot("start")
    timings["open"] = ms_since(t)

    t = time.monotonic()
    page.click("New pairing code")
    digits = page.wait("a code", lambda: re.fullmatch(r"\d{3} \d{3}", driver.find_element(By.ID, "code-digits").text))
    code = digits.group(0).replace(" ", "")
    if normalise("Works once") not in page.text():
        raise CheckFailed("code", "the page does not say how long the code works")
    page.screenshot("code")
    device = {"pairing_code": code, "device_name": "Ana's iPhone", "device_id": "ana-phone", "device_type": "iphone"}
    status, tokens = api(args.hub, "POST", "/auth/verify", device)
    if status != 200 or "access_token" not in tokens:
        raise CheckFailed("verify", f"the hub answered {status} {tokens} to the page's code")
    timings["pair"] = ms_since(t)
    status, _ = api(args.hub, "GET", "/events", token=tokens["access_token"])
    if status != 200:
        raise CheckFailed("paired device", f"its access token got {status}")

    t = time.monotonic()
    page.control("Revoke Ana's iPhone", timeout=15)
    page.wait("the code used up", lambda: normalise("Ana's iPhone is paired.") in page.text())
    page.screenshot("device")
    page.click("Revoke Ana's iPhone")
    dialog = page.wait("the confirmation", lambda: driver.switch_to.alert)
    if "Ana's iPhone" not in dialog.text:
        raise CheckFailed("confirm", f"the confirmation does not name the device: {dialog.text!r}")
    dialog.accept()
    page.wait("shown revoked", lambda: "revoked" in page.text() and "Revoke Ana" not in str(
        [name for _, name, _ in page.visible_controls()]))
    status, answer = api(args.hub, "GET", "/events", token=tokens["access_token"])
    if status != 401:
        raise CheckFailed("revoked", f"the revoked device's token got {status} {answer}")
    timings["revoke"] = ms_since(t)
    page.screenshot("revoked")

    status, answer = api(args.hub, "POST", "/auth/verify", dict(device, device_id="eve-phone"))
    if status == 200:
        raise CheckFailed("single use", "the code paired a second device")
    result["reused_code"] = status

    origin = args.url.split("/s/")[0] + "/"
    loaded = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href])")
    foreign = [u for u in loaded if not u.startswith(origin)]
    if foreign:
        raise CheckFailed("offline", f"requests left the loopback origin {origin}: {foreign[:5]}")
    page.check_console("end")
    result["requests_checked"] = len(loaded)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the owner's page, with its secret")
    parser.add_argument("--hub", required=True, help="the hub's plain-HTTP loopback address")
    parser.add_argument("--fingerprint", required=True)
    parser.add_argument("--artifacts", default="")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--step-timeout", type=float, default=30)
    args = parser.parse_args()
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    result: dict = {"ok": False}
    browser = Browser()
    status = 0
    try:
        run(args, browser, result)
        result["ok"] = True
    except CheckFailed as e:
        result.update(step=e.step, reason=e.reason)
        status = 1
    except EnvironmentProblem as e:
        result.update(environment=str(e))
        status = 2
    finally:
        browser.quit()
    log("result", result)
    print(json.dumps(result), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
