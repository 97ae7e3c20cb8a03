#!/usr/bin/env python3
"""Real-browser walk through the CribAlert web app served by `cribcall monitor --web` (the monitor's screens).

    web_app.py --url http://127.0.0.1:PORT/s/SECRET/ [--artifacts DIR] [--timeout 180] [--pause-check]

The monitor under test must already run with a fresh --data-dir (first launch) and --safety, and serve the app at
--url. Nothing is started here but the browser: headless Debian Chromium (/usr/bin/chromium + /usr/bin/chromedriver)
in a 390×844 window, a phone held upright. Every control is found by its computed accessible name.

1. Without the secret the app is refused: the origin (http://127.0.0.1:PORT/) and /s/wrong/ answer 403.
2. First launch shows the welcome and its disclaimer; "Start Setup" is disabled until the checkbox is ticked.
3. Setup: the name step refuses a blank name; the placement step shows its tip; on the sleep-area step a corner
   handle is dragged (ActionChains) and another moved with the arrow keys, and after "Confirm Area" GET api/state
   shows the new settings.sleepArea; the final check reaches 100 % and only then enables "Start Monitoring".
4. The Monitor tab shows "<name>'s Room", the live view and the Movement and Position cards. The live view is
   WebRTC from the monitor's pipeline (POST api/live) or, when that is unavailable or does not connect within about
   8 s, the camera's pictures: which one, and why, is reported as live_view (with the received figures for WebRTC).
   Once the tab is left, the monitor's api/state lists no live view any more.
5. Settings' "Test: face covered" raises an alert through the real path: the full-screen alert must appear within
   1 s (measured, reported as alert_ms), take the focus, and after "Mark as okay" GET api/state shows that alert
   as "okay"; History lists it. "Test: crying": Escape closes it on this page only (still open in api/state, so a
   reload shows it again), and "Mute for 5 minutes" mutes it for everyone. Its sound wave moves, and stands still
   under prefers-reduced-motion (emulated).
6. Alert Preferences (a play button, the volume saved), Privacy, Baby Profile (Save refused while the name is
   blank), Help and Account are visited; each screen's key texts from the seed are checked, no page shows a
   prohibited medical term, and every control shown has an accessible name.
7. Landscape (844×390, the phone on its side): Monitor, History, Settings and each settings page fit the width and
   every control on them can be scrolled to and tapped; a stillness alert fills the window, its three buttons are
   reachable, "I am checking" reaches api/state and "Mark as okay" closes it (landscape-*.png).
8. A reload skips the welcome, and everything the reloaded page asked for came from its loopback origin.

With --audio-only the monitor runs without --safety (no camera, the seed's default): the welcome, the name, then the
final check at once (the room's noise is its only check), "Start Monitoring", and the Monitor screen with its sound
meter, a pairing QR code on "Show pairing code" and its listeners card.
With --store-check as well, the audio-only monitor's disk fails under the open page: prints {"event":
"store-check"} (the caller moves a table of the monitor's database away and changes a setting, which the page is
sent) and waits for the banner saying the app could not read its data; then prints {"event": "store-back"} (the
caller puts the table back and changes a setting again) and waits for the banner to go.
9. With --pause-check: prints {"event": "pause-check"} and waits until the Monitor tab shows "Monitoring paused"
   (the caller stops the camera after that line), reported as pause_ms, and pause_render_ms: from the status's
   updatedAt to the page showing it. The paused screen's texts are checked.

A PNG of every screen (01-welcome.png, …) goes to --artifacts. The browser's console is collected throughout and
any SEVERE entry fails the run (with --pause-check, failed picture requests while the camera is away are allowed
and counted).

Prints {"event": "ready"} once the browser is up (its start-up is bounded by --launch-timeout; --timeout is each
step's own limit, from when the step starts), then one JSON line on stdout ({"ok": true, "alert_ms": …, "screens": […], …});
progress goes to stderr. Exit status: 0 passed, 1 a check failed, 2 the environment is not usable (no server, no
browser, a monitor that is not fresh), 3 --launch-timeout or --timeout fired. Every wait has a deadline and the
browser is always shut down.

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

START = time.monotonic()

try:
    import selenium
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.select import Select
except ImportError:  # pragma: no cover - reported as an environment error below
    selenium = None

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",  # as root the sandbox refuses to start
    "--autoplay-policy=no-user-gesture-required",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",  # no traffic but the test's own
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--hide-scrollbars",
    "--mute-audio",  # the alert sounds play (WebAudio runs) but nothing is heard
]
WIDTH, HEIGHT = 390, 844
LANDSCAPE = (844, 390)  # the same phone on its side
ALERT_LIMIT_MS = 1000  # seed 003 §6.3: alerts fire within 1 second of the trigger
CALIBRATION_LIMIT_S = 30  # the check takes about 4 s
LIVE_SETTLE_S = 30  # the live view: the offer (up to 5 s on the monitor), then video or pictures within 8 s



def prohibited_terms() -> list[str]:
    """Seed 003 §10.1: the terms no user-facing text may contain (whole words, any case), read from the one place
    that lists them (SafetyWording.prohibitedTerms), so this script never keeps a second copy."""
    source = Path(__file__).resolve().parents[3] / "Sources/CribCall/Core/SafetyDetection/SafetyWording.swift"
    try:
        m = re.search(r"prohibitedTerms\s*=\s*\[(.*?)\]", source.read_text(), re.S)
    except OSError:
        m = None
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


PROHIBITED = prohibited_terms()


LOG_NAME = ["web_app"]  # listener_app.py, which imports this module, logs under its own name


def log(*parts: object) -> None:
    print(f"[{LOG_NAME[0]} {1000 * (time.monotonic() - START):8.0f} ms]", *parts, file=sys.stderr, flush=True)


def ms_since(t0: float) -> int:
    return round(1000 * (time.monotonic() - t0))


class CheckFailed(Exception):
    def __init__(self, step: str, reason: str):
        super().__init__(f"{step}: {reason}")
        self.step = step
        self.reason = reason


class EnvironmentProblem(Exception):
    pass


# ----------------------------------------------------------------------------------------------------------------
# Process cleanup: the browser must never outlive this script


def descendants(root: int) -> list[int]:
    """All live descendants of `root` (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
            ppid = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, stack = [], [root]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


class Browser:
    """Owns the chromedriver process tree; `kill` works from any thread, even while a WebDriver call hangs."""

    def __init__(self) -> None:
        self.driver = None
        self.pids: set[int] = set()
        self.lock = threading.Lock()

    def remember_tree(self) -> None:
        proc = getattr(getattr(self.driver, "service", None), "process", None)
        if proc is not None:
            with self.lock:
                self.pids.add(proc.pid)
                self.pids.update(descendants(proc.pid))

    def quit(self, grace: float = 10.0) -> None:
        if self.driver is None:
            return
        self.remember_tree()
        t = threading.Thread(target=_quiet_quit, args=(self.driver,), daemon=True)
        t.start()
        t.join(grace)
        self.kill()

    def kill(self) -> None:
        with self.lock:
            pids = set(self.pids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _quiet_quit(driver: object) -> None:
    try:
        driver.quit()
    except Exception as e:  # noqa: BLE001 - shutting down; the tree is killed anyway
        log("quit failed:", e)


# ----------------------------------------------------------------------------------------------------------------
# HTTP (the API, for checking what the page did)


def http(url: str, method: str = "GET", body: dict | None = None, timeout: float = 10) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Api:
    def __init__(self, base: str):
        self.base = base if base.endswith("/") else base + "/"

    def get(self, path: str) -> dict:
        status, body = http(self.base + path)
        if status != 200:
            raise CheckFailed(f"GET {path}", f"status {status}: {body[:300]!r}")
        return json.loads(body)

    def state(self) -> dict:
        return self.get("api/state")


# ----------------------------------------------------------------------------------------------------------------
# The page


def app_api(url: str, role: str) -> Api:
    """The app at `url`, checked to be the `role`'s (shared by the walks that start from a running app)."""
    try:
        status, body = http(url, timeout=5)
    except OSError as e:
        raise EnvironmentProblem(f"the {role}'s app {url} cannot be loaded: {e}") from e
    if status != 200 or b"app.js" not in body:
        raise EnvironmentProblem(f"{url} does not look like the app (status {status})")
    api = Api(url)
    if api.state().get("role") != role:
        raise EnvironmentProblem(f"{url} is not the {role}'s app")
    return api


def check_browser_tools(args: argparse.Namespace) -> None:
    """Selenium, Chromium and chromedriver are there, or says what to install."""
    if selenium is None:
        raise EnvironmentProblem("the Python package selenium is missing: pip install selenium==4.51.0")
    for path in (args.chromium, args.chromedriver):
        if not os.access(path, os.X_OK):
            raise EnvironmentProblem(f"{path} is missing: apt-get install chromium chromium-driver")


def normalise(text: str) -> str:
    """Lower case, single spaces, straight apostrophes: what the text checks compare."""
    return re.sub(r"\s+", " ", text.replace("\u2019", "'").replace("\u00a0", " ")).strip().lower()


class Page:
    def __init__(self, driver, args: argparse.Namespace, api: Api, result: dict):
        self.d = driver
        self.args = args
        self.api = api
        self.result = result
        self.console: list[dict] = []
        self.allow_camera_errors = False
        self.allowed_camera_errors = 0
        self.shot = 0
        self.prefix = ""  # before the screenshots' numbers (listener_app.py: "M" for the monitor, "L" the listener)

    # -- state of the page ---------------------------------------------------------------------------------------

    def snapshot(self) -> dict:
        s = self.d.execute_script("return window.cribalert ? window.cribalert.snapshot() : null")
        if s is None:
            raise CheckFailed("page", "window.cribalert is missing: the app did not load")
        return s

    def wait(self, desc: str, pred, timeout: float | None = None, poll: float = 0.1):
        """Polls `pred()` until it answers something true; fails with `desc` otherwise."""
        limit = timeout or self.args.step_timeout
        deadline = time.monotonic() + limit
        last = None
        while time.monotonic() < deadline:
            try:
                last = pred()
            except (StaleElementReferenceException, WebDriverException) as e:
                last = None
                if "no such window" in str(e):
                    raise
            if last:
                return last
            time.sleep(poll)
        snap = None
        try:
            snap = self.snapshot()
        except Exception:  # noqa: BLE001 - only for the report
            pass
        raise CheckFailed(desc, f"not reached within {limit:.0f} s; page={snap}")

    def wait_screen(self, name: str, timeout: float | None = None) -> dict:
        return self.wait(f"screen {name}", lambda: (s := self.snapshot())["screen"] == name and s, timeout)

    def text(self) -> str:
        return normalise(self.d.find_element(By.TAG_NAME, "body").text)

    def visible_controls(self) -> list[tuple[str, str, object]]:
        out = []
        for e in self.d.find_elements(By.CSS_SELECTOR, "button, input, textarea, a[href], [role=switch], [role=meter]"):
            try:
                if e.is_displayed():
                    out.append((e.tag_name, e.accessible_name, e))
            except WebDriverException:
                continue  # re-rendered while we looked
        return out

    def control(self, name: str, tags: tuple[str, ...] = ("button", "input", "a"), enabled: bool | None = True,
                timeout: float | None = None):
        """The displayed control whose computed accessible name is exactly `name`."""
        deadline = time.monotonic() + (timeout or self.args.step_timeout)
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = []
            for tag, acc, e in self.visible_controls():
                seen.append(acc)
                if tag in tags and acc == name and (enabled is None or e.is_enabled() == enabled):
                    return e
            time.sleep(0.1)
        state = {True: "enabled ", False: "disabled ", None: ""}[enabled]
        raise CheckFailed("find control", f"no {state}control named {name!r}; visible: {seen}")

    def click(self, name: str, tags: tuple[str, ...] = ("button", "input", "a")) -> None:
        e = self.control(name, tags)
        self.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", e)
        e.click()

    def expect_texts(self, screen: str, texts: list[str]) -> None:
        """Each of `texts` is shown on the page (case and spacing aside), and no prohibited term is."""
        body = self.wait(f"{screen}: texts", lambda: (b := self.text()) and all(normalise(t) in b for t in texts) and b,
                         timeout=5) if texts else self.text()
        for term in PROHIBITED:
            if re.search(rf"(?<![a-z]){re.escape(term)}(?![a-z])", body):
                raise CheckFailed(f"{screen}: wording", f"the page shows the prohibited term {term!r}")

    def missing_texts(self, texts: list[str]) -> list[str]:
        body = self.text()
        return [t for t in texts if normalise(t) not in body]

    def focused_inside(self, css: str) -> bool:
        return bool(self.d.execute_script(
            "const c = document.querySelector(arguments[0]); return !!c && c.contains(document.activeElement)", css))

    # -- evidence ------------------------------------------------------------------------------------------------

    def check_names(self, screen: str) -> None:
        """Every control on screen has an accessible name (what a screen reader or voice control calls it)."""
        unnamed = [f"<{tag} id={e.get_attribute('id')!r} class={e.get_attribute('class')!r}>"
                   for tag, acc, e in self.visible_controls() if not (acc or "").strip()
                   # behind an open alert everything is inert: out of reach on purpose, so without a name
                   and not self.d.execute_script("return !!arguments[0].closest('[inert]')", e)]
        if unnamed:
            raise CheckFailed(f"{screen}: accessible names", f"controls without a name: {unnamed}")

    def screenshot(self, name: str) -> None:
        """A PNG of the window (390×844) into --artifacts, numbered in the order of the walk; and the names check."""
        self.check_names(name)
        self.shot += 1
        file_name = f"{self.prefix}{self.shot:02d}-{name}.png"
        self.result.setdefault("screens", []).append(file_name)
        if self.args.artifacts:
            time.sleep(0.3)  # let the last picture and transitions settle
            self.d.save_screenshot(str(Path(self.args.artifacts) / file_name))
        self.collect_console()

    def collect_console(self) -> None:
        """Moves the browser's console entries here; SEVERE ones fail the run (see check_console)."""
        try:
            entries = self.d.get_log("browser")
        except WebDriverException:
            return
        for e in entries:
            if self.allow_camera_errors and e.get("level") == "SEVERE" and "api/camera.jpg" in e.get("message", ""):
                self.allowed_camera_errors += 1
                continue
            self.console.append(e)

    def check_console(self, step: str) -> None:
        self.collect_console()
        severe = [e for e in self.console if e.get("level") == "SEVERE"]
        if severe:
            raise CheckFailed(f"{step}: browser console", "SEVERE entries: "
                              + json.dumps([e.get("message", "")[:300] for e in severe[:5]]))

    def live_preview_shown(self, css: str) -> str | None:
        """What the preview `css` shows: "video" (the WebRTC live view with frames), "picture" (api/camera.jpg), or
        None (nothing yet)."""
        return self.d.execute_script(
            "const p = document.querySelector(arguments[0]); if (!p) return null;"
            "const v = p.querySelector('video[data-live]');"
            "if (v && !v.hidden && v.videoWidth > 0 && p.classList.contains('webrtc')) return 'video';"
            "const i = p.querySelector('img[data-camera]');"
            "return i && !i.hidden && i.complete && i.naturalWidth > 0 && !p.classList.contains('unavailable')"
            " ? 'picture' : null",
            css)

    def camera_picture_shown(self, css: str) -> bool:
        return bool(self.d.execute_script(
            "const i = document.querySelector(arguments[0]);"
            "return !!i && i.complete && i.naturalWidth > 0"
            " && !i.closest('.preview').classList.contains('unavailable')",
            css))


# ----------------------------------------------------------------------------------------------------------------
# The walk


SEED_TEXTS = {
    "welcome": ["Welcome to CribAlert", "Let's help everyone get a better night's rest with smart monitoring.",
                "Safety First", "not a medical device", "It does not monitor vital signs.",
                "I understand this is a safety aid, not a medical device.", "Start Setup"],
    "setup-name": ["Step 1 of 4", "What do you call your baby?", "Baby's name",
                   "We'll use this name for personalized safety alerts.", "Continue"],
    "setup-placement": ["Step 2 of 4", "Skip", "Mount your device",
                        "For best results, place your camera 3-4 feet directly above the crib with a clear, "
                        "top-down view.", "Don't have a mount?", "Next"],
    "setup-area": ["Step 3 of 4", "Skip", "Live view", "Define the sleep area",
                   "Drag the corners to fit the edges of the mattress. This helps the monitor ignore movement outside "
                   "the crib.", "Confirm Area"],
    # (and, while it runs, "Setting up... N%" with "Checking camera placement and lighting…": see walk_setup_check)
    "setup-check": ["Step 4 of 4", "AI active", "Final setup check", "Privacy first.",
                    "Analysis happens locally on your device.", "Start Monitoring"],
    # a monitor without a camera has two steps: its name, then the check (no placement, no sleep area)
    "setup-name-audio-only": ["Step 1 of 2", "What do you call your baby?", "Continue"],
    "setup-check-audio-only": ["Step 2 of 2", "Final setup check", "Start Monitoring"],
    "monitor": ["Live", "sleep looks normal", "Live preview", "Movement", "Position", "Safety Alerts",
                "Recent Activity", "View All", "Pair a listener", "Show pairing code", "Sound level", "Monitor",
                "History", "Settings"],
    "settings": ["Settings", "Monitoring active", "Camera connected", "Camera Calibration", "Run Camera Setup",
                 "Monitoring", "Safety Alerts", "Alert Preferences", "Privacy and data", "Privacy and Transparency",
                 "Account", "Sign in or create an account", "Optional", "General", "Baby Profile", "Help and Support",
                 "Test alerts", "Test: face covered", "Test: on stomach", "Test: stillness", "Test: crying",
                 "CribCall version"],
    "alert": ["SAFETY ALERT", "Baby's face may be covered", "View live camera", "I am checking", "Mark as okay",
              "Live"],
    "alert-crying": ["Listening for sounds", "Crying detected", "Your baby sounds upset and may need you.",
                     "Open live view", "Mute for 5 minutes", "Dismiss"],
    "history": ["History Log", "Live", "Tonight", "Last Night", "Calendar", "Session Summary", "Activity timeline",
                "Monitoring continued normally after these events."],
    "alert-prefs": ["Alert Preferences", "Alert sounds", "Calm Chime", "Recommended", "Soft Melody", "Clear Pulse",
                    "Choose a sound that will wake you without causing stress.", "Volume",
                    "Test this volume with your phone locked", "Critical safety", "Override Silent Mode",
                    "We recommend keeping this enabled to ensure you never miss a safety notification.",
                    "Vibration pattern", "Heartbeat", "SOS", "Continuous"],
    "privacy": ["Privacy Guarantee", "Your baby's video and audio feeds are protected with strict privacy standards.",
                "All safety analysis runs directly on your device.", "Video is not recorded or uploaded by default.",
                "No account is needed.", "How we protect your data", "Encrypted and secure",
                "Read full Privacy Policy"],
    "profile": ["Baby Profile", "Add photo", "Optional - used only for personalization.", "Baby's name",
                "Sleep location", "You can change this anytime. Profile details don't affect monitoring or alerts.",
                "Save"],
    "help": ["Help and Support", "We're here to help.", "Find answers or get in touch.", "Common questions",
             "Quick answers to setup and alerts.", "Troubleshooting", "Help with camera setup, alerts, or monitoring.",
             "Contact support", "Common concerns", "Too many alerts?", "Camera setup issues", "Safety Note",
             "This app is designed to support you, not replace adult supervision. Always ensure your baby is safe."],
    "account": ["Create an account (optional)",
                "Accounts are only used for optional features like extended history and sharing.", "Create account",
                "Sign in", "Privacy First", "You can use live monitoring and safety alerts without an account.",
                "Continue without signing in"],
    # paused (no picture) and stale (pictures that cannot be judged) share these; each adds its own below
    "paused": ["Offline", "Monitoring paused", "Reconnect camera", "Run camera setup",
               "You'll receive alerts again once monitoring resumes."],
    "paused-only": ["Live view unavailable", "Waiting for connection"],
    "stale-only": ["cannot be judged right now", "Waiting for a clear picture"],
}


def visit(page: Page, screen: str, shot: str, texts_key: str | None = None) -> dict:
    s = page.wait_screen(screen)
    page.expect_texts(screen, SEED_TEXTS.get(texts_key or screen, []))
    page.screenshot(shot)
    log("screen", screen, "ok")
    return s


def walk_welcome(page: Page) -> None:
    visit(page, "welcome", "welcome")
    start = page.control("Start Setup", enabled=False)  # disabled until the box is ticked
    box = page.control("I understand this is a safety aid, not a medical device.", tags=("input",))
    box.click()
    page.wait("Start Setup enabled after ticking the box", start.is_enabled, timeout=3)
    start.click()


def walk_setup_name(page: Page, name: str, texts_key: str = "setup-name") -> None:
    visit(page, "setup-name", "setup-name", texts_key)
    field = page.control("Baby's name", tags=("input",))
    page.control("Continue", enabled=False)
    field.send_keys("   ")
    time.sleep(0.2)
    if page.control("Continue", enabled=None).is_enabled():
        raise CheckFailed("setup-name", "Continue is enabled for a blank name")
    field.send_keys(Keys.ENTER)  # submitting a blank name must be refused, with a reason shown
    time.sleep(0.3)
    if page.snapshot()["screen"] != "setup-name":
        raise CheckFailed("setup-name", "a blank name was accepted")
    field.clear()
    field.send_keys(name)
    page.control("Continue").click()


def walk_setup_placement(page: Page) -> None:
    page.wait_screen("setup-placement")
    page.click("Don't have a mount?")
    page.expect_texts("setup-placement", SEED_TEXTS["setup-placement"] + ["never put the device inside the crib"])
    page.screenshot("setup-placement")
    page.click("Next")


def walk_setup_area(page: Page, api: Api, result: dict) -> None:
    visit(page, "setup-area", "setup-area-before")
    page.wait("the live picture on the sleep-area step", lambda: page.camera_picture_shown("#area-frame img"))
    before = api.state()["settings"]["sleepArea"]
    # drag the top-left corner 60 px right and 40 px down (pointer events through ActionChains)
    handle = page.control("Top-left corner", tags=("button",))
    frame = page.d.find_element(By.ID, "area-frame")
    size = frame.size
    ActionChains(page.d).click_and_hold(handle).move_by_offset(30, 20).move_by_offset(30, 20).release().perform()
    # and the bottom-right corner with the keyboard: 3 × Shift+ArrowLeft (5 % each)
    corner = page.control("Bottom-right corner", tags=("button",))
    corner.send_keys(Keys.SHIFT + Keys.ARROW_LEFT + Keys.ARROW_LEFT + Keys.ARROW_LEFT)
    page.screenshot("setup-area-dragged")
    page.click("Confirm Area")
    page.wait_screen("setup-check")
    after = api.state()["settings"]["sleepArea"]
    result["sleep_area"] = {"before": before, "after": after, "frame_px": size}
    expected_dx = 60 / size["width"]
    if not (after["x"] > before["x"] + expected_dx / 2 and after["y"] > before["y"]):
        raise CheckFailed("setup-area", f"the dragged corner did not move the saved sleep area: {before} → {after}")
    if not after["x"] + after["w"] < before["x"] + before["w"] - 0.1:
        raise CheckFailed("setup-area", f"the arrow keys did not move the right edge: {before} → {after}")
    if min(after["w"], after["h"]) < 0.05:
        raise CheckFailed("setup-area", f"a side below 0.05: {after}")
    # The test camera's ball roams the whole picture: a smaller area is sometimes empty, and the final check
    # rightly says so. Back to step 3, and the corners out to the edges again (a drag past the edge stops there).
    page.click("Back")
    page.wait_screen("setup-area")
    handle = page.control("Top-left corner", tags=("button",))
    ActionChains(page.d).click_and_hold(handle).move_by_offset(-40, -30).move_by_offset(-40, -30).release().perform()
    corner = page.control("Bottom-right corner", tags=("button",))
    corner.send_keys(Keys.SHIFT + Keys.ARROW_RIGHT * 5)
    page.click("Confirm Area")
    page.wait_screen("setup-check")
    restored = api.state()["settings"]["sleepArea"]
    result["sleep_area"]["restored"] = restored
    if restored != {"x": 0, "y": 0, "w": 1, "h": 1}:
        raise CheckFailed("setup-area", f"dragging the corners to the edges did not give the whole picture: {restored}")


def walk_setup_check(page: Page, result: dict,
                     running_text: str = "Checking camera placement and lighting to help reduce false alerts.",
                     texts_key: str = "setup-check") -> None:
    page.wait_screen("setup-check")
    page.expect_texts("setup-check", SEED_TEXTS[texts_key])
    t0 = time.monotonic()
    start = page.control("Start Monitoring", enabled=None)
    running = normalise(running_text)
    seen_running = []

    def finished():
        # the words and the button in one look: the page may change between two WebDriver calls
        percent, phase, status, enabled = page.d.execute_script(
            "const t = (id) => document.getElementById(id).innerText;"
            "return [t('check-percent'), t('check-phase'), t('check-status'),"
            " !document.getElementById('check-start').disabled]")
        if page.d.find_element(By.ID, "check-again").is_displayed():
            raise CheckFailed("setup-check", "a check failed: " + page.d.find_element(By.ID, "check-list").text)
        if percent != "100%":
            if enabled:
                raise CheckFailed("setup-check", f"Start Monitoring is enabled at {percent}")
            if normalise(phase) == "setting up..." and normalise(status) == running:
                seen_running.append(percent)
        return percent == "100%" and enabled

    page.wait("the final check at 100 % with Start Monitoring enabled", finished, timeout=CALIBRATION_LIMIT_S)
    if not seen_running:
        raise CheckFailed("setup-check", "'Setting up... N%' and the status text were never shown while it ran")
    result["calibration_progress_seen"] = sorted(set(seen_running), key=lambda p: int(p.rstrip("%")))
    result["calibration_ms"] = ms_since(t0)
    result["calibration_checks"] = [" ".join(li.text.split()) for li in
                                    page.d.find_elements(By.CSS_SELECTOR, "#check-list li")]
    page.screenshot("setup-check")
    start.click()


def walk_monitor(page: Page, name: str) -> None:
    page.wait_screen("monitor")
    page.wait("the monitor's heading", lambda: normalise(f"{name}'s Room") in page.text())
    page.wait("the live preview", lambda: page.live_preview_shown("#monitor-preview"))
    # the live view: WebRTC from the monitor's pipeline, or (503, or no connection within about 8 s) pictures
    live = page.wait("the live view settled (video or pictures)",
                     lambda: (s := page.snapshot()["live"])["mode"] in ("webrtc", "pictures") and s,
                     timeout=LIVE_SETTLE_S)
    page.result["live_view"] = {"mode": live["mode"], "reason": live.get("reason"), "connect_ms": live.get("connectMs"),
                                "shown": page.live_preview_shown("#monitor-preview")}
    if live["mode"] == "webrtc":
        page.result["live_view"]["stats"] = page.d.execute_async_script(
            "const done = arguments[arguments.length - 1]; window.cribalert.stats().then((s) => done(s.live),"
            " (e) => done(String(e)))")
    log("live view:", page.result["live_view"])
    visit(page, "monitor", "monitor")
    heading = page.d.find_element(By.ID, "monitor-title").text
    if heading != f"{name}'s Room":
        raise CheckFailed("monitor", f"the heading reads {heading!r}, expected {name + chr(39) + 's Room'!r}")
    page.control("Safety Alerts", tags=("input",), enabled=None)
    meter = page.d.find_elements(By.CSS_SELECTOR, "[role=meter]")
    if not meter or meter[0].accessible_name != "Sound level":
        raise CheckFailed("monitor", "no meter named 'Sound level'")


def walk_audio_only(page: Page, api: Api, args: argparse.Namespace, result: dict) -> None:
    """An audio-only monitor (no --safety: the seed's default) through its setup to the Monitor screen: after the
    name comes the final check at once (no camera to place, no sleep area), which checks the room's noise only; then
    the Monitor screen with its sound meter, a pairing QR code on "Show pairing code", and its listeners."""
    walk_welcome(page)
    walk_setup_name(page, args.name, "setup-name-audio-only")
    walk_setup_check(page, result, "Listening to the room's sound level to help reduce false alerts.",
                     "setup-check-audio-only")
    checks = [li.split(":")[0] for li in result.get("calibration_checks", [])]
    if checks != ["Room noise"]:
        raise CheckFailed("audio-only check", f"it checked {checks}, expected the room's noise only")
    page.wait_screen("monitor")
    page.wait("the monitor's heading", lambda: normalise(f"{args.name}'s Room") in page.text())
    meter = page.wait("the sound meter", lambda: [m for m in page.d.find_elements(By.CSS_SELECTOR, "[role=meter]")
                                                  if m.is_displayed()])
    if meter[0].accessible_name != "Sound level":
        raise CheckFailed("monitor", "no meter named 'Sound level'")
    page.click("Show pairing code")
    page.wait("the pairing QR code", lambda: page.d.find_element(By.ID, "pair-qr").is_displayed()
              and page.d.find_elements(By.CSS_SELECTOR, "#pair-qr-svg svg"))
    if not api.state()["pairing"]["qr"]:
        raise CheckFailed("monitor", "the page shows a QR code the monitor's state does not have")
    page.wait("the listeners card", lambda: "no listener is paired yet" in page.text())
    page.screenshot("audio-only-monitor")
    result["audio_only"] = {"state_app": api.state()["app"].get("setupComplete"), "checks": checks}
    if result["audio_only"]["state_app"] is not True:
        raise CheckFailed("audio-only", "setupComplete is not true in api/state after Start Monitoring")


def walk_alert(page: Page, api: Api, result: dict) -> str:
    page.click("Settings", tags=("a",))
    visit(page, "settings", "settings")
    # the Monitor tab's live view ends once it is not shown (POST api/live/{id}/end, after a 1.5 s grace)
    t0 = time.monotonic()
    page.wait("the live view ended after leaving the Monitor tab", lambda: api.state().get("live") == [], timeout=10)
    result["live_view"]["ended_after_leaving_ms"] = ms_since(t0)
    page.collect_console()
    button = page.control("Test: face covered")
    page.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    t0 = time.monotonic()
    button.click()
    def shown_dialog():
        found = page.d.find_elements(By.CSS_SELECTOR, "[role=alertdialog]")
        return found and found[0].is_displayed() and found[0]

    dialog = page.wait("the full-screen alert", shown_dialog, timeout=5, poll=0.02)
    alert_ms = ms_since(t0)
    result["alert_ms"] = alert_ms
    log("alert shown after", alert_ms, "ms")
    if alert_ms > ALERT_LIMIT_MS:
        raise CheckFailed("alert", f"the alert appeared after {alert_ms} ms (limit {ALERT_LIMIT_MS} ms)")
    alert_id = page.snapshot()["alertShown"]
    # the seed's words, with the baby's name given in setup in the title
    name = api.state()["app"]["babyName"] or "Baby"
    title = f"{name}'s face may be covered"
    page.expect_texts("alert", [title if t == "Baby's face may be covered" else t for t in SEED_TEXTS["alert"]])
    if not page.focused_inside("[role=alertdialog]"):
        raise CheckFailed("alert", "the focus did not move into the alert")
    if dialog.accessible_name != title:
        raise CheckFailed("alert", f"the alertdialog is named {dialog.accessible_name!r}")
    page.wait("the live picture in the alert", lambda: page.live_preview_shown("#alert-dialog .alert-preview"))
    page.screenshot("alert-face-covered")
    page.click("Mark as okay")
    page.wait("the alert closed after Mark as okay", lambda: not dialog.is_displayed(), timeout=5)
    state = page.wait("the alert okay in api/state", lambda: next(
        (a for a in api.state()["alerts"] if a["alertId"] == alert_id and a["state"] == "okay"), None), timeout=5)
    result["alert"] = {"alertId": alert_id, "state": state["state"], "by": state.get("by")}
    return alert_id


def luminance(css: str) -> float:
    """The relative luminance (0 black … 1 white) of a computed `rgb(…)`/`rgba(…)` colour."""
    parts = [float(x) for x in re.findall(r"[\d.]+", css)[:3]]
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in parts)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def walk_crying(page: Page, api: Api, result: dict) -> None:
    """A crying alert: its own look and buttons; Escape only closes it on this page (it stays open for everyone, so a
    reload shows it again); "Mute for 5 minutes" mutes it for everyone."""
    page.wait_screen("settings")
    page.click("Test: crying")
    page.wait("the crying alert", lambda: page.snapshot()["alertShown"], timeout=5, poll=0.05)
    alert_id = page.snapshot()["alertShown"]
    page.expect_texts("alert-crying", SEED_TEXTS["alert-crying"])
    page.screenshot("alert-crying")
    result["reduced_motion"] = check_reduced_motion(page)
    page.d.switch_to.active_element.send_keys(Keys.ESCAPE)
    page.wait("the alert closed by Escape", lambda: page.snapshot()["alertShown"] is None, timeout=3)
    state = next(a for a in api.state()["alerts"] if a["alertId"] == alert_id)
    if state["state"] != "open":
        raise CheckFailed("alert-crying", f"Escape changed the alert for everyone: {state['state']}")
    page.d.refresh()
    page.wait("the open alert shown again after a reload", lambda: page.snapshot()["alertShown"] == alert_id)
    page.click("Mute for 5 minutes")
    page.wait("the alert closed after Mute", lambda: page.snapshot()["alertShown"] is None, timeout=5)
    muted = page.wait("the alert muted in api/state", lambda: next(
        (a for a in api.state()["alerts"] if a["alertId"] == alert_id and a["state"] == "muted"), None), timeout=5)
    result["crying_alert"] = {"alertId": alert_id, "state": muted["state"], "mutedUntil": muted.get("mutedUntil")}


def check_reduced_motion(page: Page) -> dict:
    """The crying alert's sound wave moves, and stands still once the system asks for reduced motion
    (prefers-reduced-motion, emulated through DevTools; cleared afterwards)."""
    def animation() -> str:
        return page.d.execute_script(
            "const r = document.querySelector('#alert-dialog .wave rect');"
            "return r ? getComputedStyle(r).animationName : null")

    moving = animation()
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        still = page.wait("the wave still with reduced motion", lambda: (a := animation()) == "none" and a, timeout=3)
    finally:
        page.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    if moving in (None, "none"):
        raise CheckFailed("reduced motion", f"the crying alert's wave does not move to begin with: {moving!r}")
    return {"default": moving, "reduce": still}


def walk_history(page: Page, api: Api, alert_id: str, result: dict) -> None:
    page.click("History", tags=("a",))
    page.wait_screen("history")
    alert = next(a for a in api.state()["alerts"] if a["alertId"] == alert_id)
    history = api.get("api/history?range=tonight")
    event = next((e for e in history.get("events", []) if e.get("kind") == alert["kind"]
                  and abs(e.get("timestamp", 0) - alert["detectedAt"]) < 5000), None)
    if event is None:
        raise CheckFailed("history", f"api/history has no event for the alert: {history.get('events')}")
    page.wait("the alert in the timeline", lambda: normalise(event["title"]) in normalise(
        page.d.find_element(By.ID, "history-timeline").text))
    visit(page, "history", "history")
    result["history_event"] = event["title"]
    page.click("Last Night")
    page.wait("Last Night pressed", lambda: page.control("Last Night").get_attribute("aria-pressed") == "true")
    page.click("Calendar")
    page.wait("the calendar", lambda: page.d.find_element(By.ID, "history-calendar").is_displayed())
    page.screenshot("history-calendar")
    page.click("Tonight")


def walk_settings_pages(page: Page, api: Api, result: dict) -> None:
    page.click("Settings", tags=("a",))
    page.wait_screen("settings")

    page.click("Alert Preferences")
    visit(page, "alert-prefs", "alert-preferences")
    page.click("Play Calm Chime")
    time.sleep(0.5)
    if "did not play" in page.text():
        raise CheckFailed("alert-prefs", "the play button did not play the sound")
    slider = page.control("Volume", tags=("input",))
    before = api.state()["app"]["volume"]
    slider.send_keys(Keys.ARROW_LEFT * 5)
    page.wait("the volume saved", lambda: api.state()["app"]["volume"] == before - 5, timeout=5)
    result["volume"] = {"before": before, "after": before - 5}
    page.click("Soft Melody", tags=("input",))
    page.wait("the alert sound saved", lambda: api.state()["app"]["alertSound"] == "soft-melody", timeout=5)
    page.click("Calm Chime", tags=("input",))
    # what raises an alert (FR7): the sound level, crying sensitivity, the stream on a sound, saved at once
    level = page.d.find_element(By.ID, "sound-threshold")
    page.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", level)
    threshold = api.state()["settings"]["threshold"]
    level.send_keys(Keys.ARROW_RIGHT * 3)
    page.wait("the sound level saved", lambda: api.state()["settings"]["threshold"] == threshold + 3, timeout=5)
    for element_id, value, key in (("cry-sensitivity", "high", "crySensitivity"),
                                   ("auto-stream", "audio_video", "autoStream"),
                                   ("auto-stream-sec", "60", "autoStreamSec")):
        Select(page.d.find_element(By.ID, element_id)).select_by_value(value)
        page.wait(f"{key} saved", lambda: str(api.state()["settings"][key]) == value, timeout=5)
    result["detection_settings"] = {k: api.state()["settings"][k] for k in
                                    ("threshold", "crySensitivity", "autoStream", "autoStreamSec")}
    level.send_keys(Keys.ARROW_LEFT * 3)
    Select(page.d.find_element(By.ID, "cry-sensitivity")).select_by_value("medium")
    Select(page.d.find_element(By.ID, "auto-stream")).select_by_value("none")
    page.wait("the detection settings back", lambda: api.state()["settings"]["threshold"] == threshold
              and api.state()["settings"]["autoStream"] == "none", timeout=5)
    # a dark screen for a dark room: the switch, and the device's own dark mode
    def colours():
        return page.d.execute_script(
            "const b = getComputedStyle(document.body), h = document.querySelector('h1:not([hidden])');"
            "return [document.documentElement.dataset.theme, b.backgroundColor, getComputedStyle(h || document.body).color]")
    switch = page.control("Dark screen", tags=("input",))
    page.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", switch)
    switch.click()
    theme, background, text = page.wait("the dark screen", lambda: (c := colours())[0] == "dark" and c, timeout=3)
    if luminance(background) > 0.1 or luminance(text) < 0.5:
        raise CheckFailed("dark screen", f"background {background}, text {text}")
    page.screenshot("alert-preferences-dark")
    page.control("Dark screen", tags=("input",)).click()
    page.wait("the light screen again", lambda: colours()[0] == "light", timeout=3)
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme",
                                                                         "value": "dark"}]})
    page.wait("the device's dark mode followed", lambda: colours()[0] == "dark", timeout=3)
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme",
                                                                         "value": "light"}]})
    page.wait("the device's light mode followed", lambda: colours()[0] == "light", timeout=3)
    result["dark_screen"] = {"background": background, "text": text}
    page.click("Back", tags=("a",))
    page.wait_screen("settings")

    page.click("Privacy and Transparency")
    page.wait_screen("privacy")
    page.click("How we protect your data")
    page.expect_texts("privacy", SEED_TEXTS["privacy"] + ["DTLS-SRTP", "QUIC", "Nothing leaves your home network",
                                                          "Argus home hub", "keeps each alert's picture as the thumbnail"])
    page.screenshot("privacy")
    page.click("Read full Privacy Policy")
    visit(page, "policy", "privacy-policy", texts_key="none")
    page.click("Back", tags=("a",))
    page.wait_screen("privacy")
    page.click("Back", tags=("a",))
    page.wait_screen("settings")

    page.click("Baby Profile")
    visit(page, "profile", "baby-profile")
    field = page.control("Baby's name (required)", tags=("input",))
    saved = field.get_attribute("value")
    field.clear()
    field.send_keys(" ")
    page.wait("Save disabled for a blank name", lambda: not page.control("Save", enabled=None).is_enabled(), timeout=3)
    field.clear()
    field.send_keys(saved)
    location = page.control("Sleep location (optional)", tags=("input",))
    if location.get_attribute("placeholder") != "e.g. Nursery or Bedroom":
        raise CheckFailed("profile", f"placeholder {location.get_attribute('placeholder')!r}")
    location.clear()
    location.send_keys("Nursery")
    page.control("Save").click()
    page.wait("the profile saved", lambda: api.state()["app"]["sleepLocation"] == "Nursery", timeout=5)
    page.click("Back", tags=("a",))
    page.wait_screen("settings")

    page.click("Help and Support")
    page.wait_screen("help")
    page.click("Too many alerts?")
    page.expect_texts("help", SEED_TEXTS["help"] + ["sleep area"])
    page.screenshot("help")
    page.click("Back", tags=("a",))
    page.wait_screen("settings")

    page.click("Sign in or create an account (optional)")
    page.wait_screen("account")
    page.click("Create account")
    page.expect_texts("account", SEED_TEXTS["account"] + ["not available in this local version"])
    page.screenshot("account")
    page.click("Continue without signing in")
    page.wait_screen("settings")


def set_viewport(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def sideways_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the window (what would scroll sideways): 0 when it fits."""
    return int(page.d.execute_script("return document.documentElement.scrollWidth - innerWidth"))


def reachable(page: Page, element) -> bool:
    """Once scrolled to, `element` lies inside the window and is what a tap on its middle would hit."""
    return bool(page.d.execute_script(
        "const e = arguments[0]; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
        "if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) return false;"
        "const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        "return !!hit && (hit === e || e.contains(hit))", element))


def check_landscape(page: Page, routes: list[tuple[str, str, str | None]], result: dict) -> None:
    """The phone turned on its side (LANDSCAPE): each of `routes` (path, screen, texts key) is shown, fits the width
    (nothing scrolls sideways), keeps its texts and named controls, and every control shown can be scrolled to and
    tapped. Screenshots are named landscape-SCREEN. The upright window and the screen shown before are restored."""
    start = page.d.execute_script("return location.hash")
    set_viewport(page.d, *LANDSCAPE)
    checked = []
    try:
        for path, screen, texts in routes:
            page.d.execute_script("location.hash = arguments[0]", path)
            page.wait_screen(screen)
            if texts:
                page.expect_texts(screen, SEED_TEXTS.get(texts, []) if isinstance(texts, str) else texts)
            try:
                page.wait(f"{screen} fitting the width", lambda: sideways_overflow(page) <= 0, timeout=3)
            except CheckFailed:
                raise CheckFailed(f"landscape {screen}", f"the page is {sideways_overflow(page)} px wider than the "
                                                         f"{LANDSCAPE[0]} px window") from None
            out_of_reach = [acc or tag for tag, acc, e in page.visible_controls()
                            if tag in ("button", "a", "input") and e.is_enabled() and not reachable(page, e)]
            if out_of_reach:
                raise CheckFailed(f"landscape {screen}", f"controls that cannot be scrolled to and tapped: "
                                                         f"{out_of_reach[:6]}")
            page.d.execute_script("scrollTo(0, 0)")
            page.screenshot(f"landscape-{screen}")
            checked.append(screen)
    finally:
        set_viewport(page.d, WIDTH, HEIGHT)
        page.d.execute_script("location.hash = arguments[0]", start)
    result.setdefault("landscape", []).extend(checked)


def walk_landscape(page: Page, api: Api, result: dict) -> None:
    """The monitor's screens in landscape, then a stillness alert there: it fills the window and each of its
    buttons can be reached; "I am checking" reaches api/state and the alert says so, "Mark as okay" closes it."""
    check_landscape(page, [
        ("/monitor", "monitor", ["Movement", "Position", "Sound level"]), ("/history", "history", "history"),
        ("/settings", "settings", ["Settings", "Alert Preferences", "Test alerts"]),
        ("/settings/alerts", "alert-prefs", ["Alert Preferences", "Volume"]),
        ("/settings/privacy", "privacy", ["Privacy Guarantee"]), ("/settings/profile", "profile", ["Baby Profile"]),
        ("/settings/help", "help", ["Help and Support"]), ("/settings/account", "account", ["Sign in"]),
    ], result)
    set_viewport(page.d, *LANDSCAPE)
    try:
        page.d.execute_script("location.hash = '/settings'")
        page.wait_screen("settings")
        page.click("Test: stillness")
        dialog = page.wait("the stillness alert", lambda: (f := page.d.find_elements(
            By.CSS_SELECTOR, "[role=alertdialog]")) and f[0].is_displayed() and f[0], timeout=5, poll=0.05)
        alert_id = page.snapshot()["alertShown"]
        box = page.d.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.width, r.height,"
            " innerWidth, innerHeight]", dialog)
        if box[0] > 0 or box[1] > 0 or box[2] < box[4] or box[3] < box[5]:
            raise CheckFailed("landscape alert", f"the alert does not fill the window: {box}")
        for name in ("View live camera", "I am checking", "Mark as okay"):
            if not reachable(page, page.control(name)):
                raise CheckFailed("landscape alert", f"{name!r} cannot be scrolled to and tapped")
        page.screenshot("landscape-alert-stillness")
        page.click("I am checking")
        page.wait("the alert checking in api/state", lambda: any(
            a["alertId"] == alert_id and a["state"] == "checking" for a in api.state()["alerts"]), timeout=5)
        page.wait("the alert saying who checks", lambda: "you are checking" in page.text(), timeout=5)
        page.click("Mark as okay")
        page.wait("the alert closed after Mark as okay", lambda: page.snapshot()["alertShown"] is None, timeout=5)
    finally:
        set_viewport(page.d, WIDTH, HEIGHT)
    result["landscape_alert"] = alert_id


def walk_reload(page: Page, url: str) -> None:
    page.d.get(url)
    s = page.wait("the app after a reload", lambda: (s := page.snapshot())["screen"] not in (None, "loading") and s)
    if s["screen"] == "welcome":
        raise CheckFailed("reload", "the welcome is shown again after it was accepted")
    if s["screen"] != "monitor":
        raise CheckFailed("reload", f"a reload shows {s['screen']}, expected the monitor")
    page.screenshot("after-reload")


def walk_pause(page: Page, result: dict) -> None:
    page.d.get(page.args.url + "#/monitor")
    page.wait_screen("monitor")
    page.allow_camera_errors = True
    print(json.dumps({"event": "pause-check"}), flush=True)
    log("waiting for 'Monitoring paused' (stop the camera now)")
    t0 = time.monotonic()
    page.wait("Monitoring paused", lambda: "monitoring paused" in page.text(), timeout=page.args.pause_timeout,
              poll=0.05)
    result["pause_ms"] = ms_since(t0)
    # how late the page was: when it saw the change, against the status's own time (one machine, one clock)
    snap = page.snapshot()
    if snap.get("monitoringChangedAt") and snap.get("safetyUpdatedAt"):
        result["pause_render_ms"] = snap["monitoringChangedAt"] - snap["safetyUpdatedAt"]
    result["paused_as"] = snap["monitoring"]
    own = SEED_TEXTS["stale-only" if snap["monitoring"] == "stale" else "paused-only"]
    page.expect_texts("paused", SEED_TEXTS["paused"] + own)
    page.screenshot("monitor-paused")
    result["camera_errors_while_paused"] = page.allowed_camera_errors


def banner_text(page: Page) -> str:
    """The store banner's words while it is shown, else ""."""
    banner = page.d.find_element(By.ID, "store-banner")
    return banner.text if banner.is_displayed() else ""


def walk_store_problem(page: Page, result: dict) -> None:
    """The monitor's database fails under the open page: the banner says so, on the screen the parent is on, and
    goes once the database works again."""
    print(json.dumps({"event": "store-check"}), flush=True)
    log("waiting for the store banner (move a table away and change a setting now)")
    t0 = time.monotonic()
    words = page.wait("the banner saying the data cannot be read", lambda: "could not" in banner_text(page)
                      and banner_text(page), poll=0.05)
    result["store_banner_ms"] = ms_since(t0)
    result["store_banner"] = words
    for needed in ["CribCall could not", "Check that the disk has space"]:
        if needed not in words:
            raise CheckFailed("store-check", f"the banner does not say {needed!r}: {words!r}")
    page.screenshot("store-problem")
    print(json.dumps({"event": "store-back"}), flush=True)
    log("waiting for the banner to go (put the table back and change a setting now)")
    page.wait("the banner to go once the data reads again", lambda: banner_text(page) == "", poll=0.05)


def check_gate(url: str) -> dict:
    """The app's origin and a wrong secret are refused with 403."""
    u = urllib.parse.urlsplit(url)
    origin = f"{u.scheme}://{u.netloc}/"
    out = {}
    for probe in (origin, origin + "s/wrong/", origin + "s/wrong/api/state", origin + "api/state"):
        status, _ = http(probe)
        out[probe[len(origin) - 1:]] = status
        if status != 403:
            raise CheckFailed("secret", f"{probe} answered {status}, expected 403")
    return out


def check_environment(args: argparse.Namespace) -> Api:
    check_browser_tools(args)
    if not PROHIBITED:
        raise EnvironmentProblem("SafetyWording.prohibitedTerms was not found next to this script: run it from the "
                                 "repository")
    try:
        status, body = http(args.url, timeout=5)
    except (urllib.error.URLError, OSError) as e:
        raise EnvironmentProblem(f"the app {args.url} cannot be loaded: {e}") from e
    if status != 200 or b"app.js" not in body:
        raise EnvironmentProblem(f"{args.url} does not look like the CribAlert app (status {status})")
    api = Api(args.url)
    state = api.state()
    if state.get("role") != "monitor":
        raise EnvironmentProblem(f"the app's role is {state.get('role')!r}, expected monitor")
    if state["app"].get("disclaimerAccepted") or state["app"].get("setupComplete"):
        raise EnvironmentProblem("the monitor is not on its first launch (disclaimer already accepted): start "
                                 "cribcall monitor with a new, empty --data-dir")
    if not state.get("camera", {}).get("watched") and not args.audio_only:
        raise EnvironmentProblem("the monitor runs without --safety: the walk needs the camera watched (or "
                                 "--audio-only)")
    if state.get("camera", {}).get("watched") and args.audio_only:
        raise EnvironmentProblem("--audio-only needs a monitor without --safety")
    return api


def make_driver(args: argparse.Namespace, browser: Browser):
    opts = webdriver.ChromeOptions()
    opts.binary_location = args.chromium
    for flag in CHROMIUM_FLAGS + [f"--window-size={WIDTH},{HEIGHT}"]:
        opts.add_argument(flag)
    try:
        if shutil.disk_usage("/dev/shm").free < 1 << 30:
            opts.add_argument("--disable-dev-shm-usage")  # small /dev/shm (containers): use /tmp instead
    except OSError:
        pass
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    log_output = str(Path(args.artifacts) / "chromedriver.log") if args.artifacts else os.devnull
    service = Service(executable_path=args.chromedriver, log_output=log_output)
    driver = webdriver.Chrome(service=service, options=opts)
    browser.driver = driver
    browser.remember_tree()
    driver.set_page_load_timeout(args.step_timeout)
    driver.set_script_timeout(args.step_timeout)
    # Headless Chromium keeps its windows at least 500 px wide and takes some height for a frame it does not
    # draw: the page's viewport (and so every screenshot) is made exactly 390×844 through DevTools instead.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    return driver


def run(args: argparse.Namespace, browser: Browser, result: dict, on_ready) -> None:
    api = check_environment(args)
    result["gate"] = check_gate(args.url)
    t0 = time.monotonic()
    driver = make_driver(args, browser)
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    result["chromedriver"] = caps.get("chrome", {}).get("chromedriverVersion", "").split(" ")[0]
    result["timings_ms"] = timings = {"launch_browser": ms_since(t0)}
    result["viewport"] = driver.execute_script("return [innerWidth, innerHeight]")
    result["prohibited_terms_checked"] = len(PROHIBITED)
    log("browser up", result["browser"], "viewport", result["viewport"])
    on_ready()

    page = Page(driver, args, api, result)
    if args.audio_only:
        driver.get(args.url)
        walk_audio_only(page, api, args, result)
        page.check_console("audio only")
        if args.store_check:
            begin_step("store_check")
            walk_store_problem(page, result)
            page.check_console("store check")
        return
    steps = [
        ("welcome", lambda: (driver.get(args.url), walk_welcome(page))),
        ("setup_name", lambda: walk_setup_name(page, args.name)),
        ("setup_placement", lambda: walk_setup_placement(page)),
        ("setup_area", lambda: walk_setup_area(page, api, result)),
        ("setup_check", lambda: walk_setup_check(page, result)),
        ("monitor", lambda: walk_monitor(page, args.name)),
    ]
    for name, step in steps:
        begin_step(name)
        t = time.monotonic()
        step()
        timings[name] = ms_since(t)
        page.check_console(name)
    begin_step("alert")
    t = time.monotonic()
    alert_id = walk_alert(page, api, result)
    timings["alert"] = ms_since(t)
    page.check_console("alert")
    for name, step in [
        ("crying", lambda: walk_crying(page, api, result)),
        ("history", lambda: walk_history(page, api, alert_id, result)),
        ("settings_pages", lambda: walk_settings_pages(page, api, result)),
        ("landscape", lambda: walk_landscape(page, api, result)),
        ("reload", lambda: walk_reload(page, args.url)),
    ]:
        begin_step(name)
        t = time.monotonic()
        step()
        timings[name] = ms_since(t)
        page.check_console(name)
    # Offline: everything the page (reloaded above) asked for came from its own loopback origin: scripts, styles,
    # pictures, the API and its event stream. (The live view's media is WebRTC, not a request.)
    origin = args.url.split("/s/")[0] + "/"
    loaded = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href])")
    foreign = [u for u in loaded if not u.startswith(origin)]
    result["requests_checked"] = len(loaded)
    if not origin.startswith(("http://127.0.0.1:", "http://[::1]:")) or foreign:
        raise CheckFailed("offline", f"requests left the loopback origin {origin}: {foreign[:5]}")
    if args.pause_check:
        begin_step("pause")
        walk_pause(page, result)
        page.check_console("pause")
    result["console_entries"] = len(page.console)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the app, secret included: http://127.0.0.1:PORT/s/SECRET/")
    ap.add_argument("--name", default="Liam", help="the baby's name entered in setup")
    ap.add_argument("--audio-only", action="store_true",
                    help="the monitor runs without a camera (no --safety): walk its setup to the Monitor screen")
    ap.add_argument("--store-check", action="store_true",
                    help="with --audio-only: the store banner shown when the database fails, gone when it works")
    ap.add_argument("--pause-check", action="store_true",
                    help="at the end, wait for 'Monitoring paused' (the caller stops the camera) and time it")
    ap.add_argument("--pause-timeout", type=float, default=30, help="how long --pause-check waits, seconds")
    ap.add_argument("--timeout", type=float, default=180,
                    help="hard limit for each step of the walk, from when it starts, seconds")
    ap.add_argument("--launch-timeout", type=float, default=120, help="hard limit for starting the browser, s")
    ap.add_argument("--step-timeout", type=float, default=20, help="limit for each wait, seconds")
    ap.add_argument("--artifacts", help="directory for the screenshots (and, on failure, the console log)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = ap.parse_args()
    if not args.url.endswith("/"):
        args.url += "/"
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver

    return supervise(args, {"ok": False, "url": re.sub(r"/s/[^/]+/", "/s/…/", args.url)}, run, save_failure)


# The watchdog of the walk's steps (supervise sets it): each step gets --timeout from when it starts, so a loaded
# machine that makes every step slower fails no walk that still makes progress, and a step that hangs still fails.
_STEP_WATCHDOG = [lambda name: None]


def begin_step(name: str) -> None:
    """A step of the walk starts: its own --timeout starts now."""
    _STEP_WATCHDOG[0](name)


def supervise(args: argparse.Namespace, result: dict, run, save_failure) -> int:
    """Runs a walk, `run(args, browser, result, on_ready)`, under --launch-timeout (until it calls on_ready, which
    prints {"event": "ready"}) and then --timeout for each step (``begin_step``; a walk without steps has one),
    with SIGTERM as an interruption; on failure `save_failure(args,
    browser, result)` keeps the page's view. Prints `result` as ONE JSON line whatever happens (a watchdog that fires
    prints it and exits 3) and returns the exit status: 0 passed, 1 a check failed, 2 the environment is not usable.
    The browser is always shut down. Shared by web_app.py, listener_app.py and privacy_browser.py."""
    browser = Browser()
    printed = threading.Event()
    print_lock = threading.Lock()

    def emit() -> None:
        with print_lock:
            if printed.is_set():
                return
            printed.set()
            result["total_ms"] = ms_since(START)
            if selenium is not None:
                result["selenium"] = selenium.__version__
            print(json.dumps(result), flush=True)

    def watchdog(reason: str) -> None:
        result.update(ok=False, step="overall", reason=reason)
        log(reason)
        browser.remember_tree()
        browser.kill()
        emit()
        os._exit(3)

    timers: list[threading.Timer] = []

    def arm(seconds: float, reason: str) -> None:
        for timer in timers:
            timer.cancel()
        timer = threading.Timer(seconds, watchdog, args=(reason,))
        timer.daemon = True
        timer.start()
        timers.append(timer)

    def on_ready() -> None:
        with print_lock:
            print(json.dumps({"event": "ready"}), flush=True)
        arm(args.timeout, f"the walk did not reach its first step within --timeout {args.timeout:.0f} s")

    def step_started(name: str) -> None:
        result["step_under_way"] = name
        arm(args.timeout, f"the step {name!r} did not complete within --timeout {args.timeout:.0f} s of starting")

    _STEP_WATCHDOG[0] = step_started

    arm(args.launch_timeout, f"the browser did not start within --launch-timeout {args.launch_timeout:.0f} s")

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)

    code = 1
    try:
        run(args, browser, result, on_ready)
        result["ok"] = True
        code = 0
    except EnvironmentProblem as e:
        result.update(step="environment", reason=str(e))
        code = 2
    except CheckFailed as e:
        result.update(step=e.step, reason=e.reason)
        code = 1
    except KeyboardInterrupt as e:
        result.update(step="interrupted", reason=str(e) or "interrupted")
        code = 1
    except WebDriverException as e:
        result.update(step="webdriver", reason=(e.msg or str(e)).strip().splitlines()[0])
        code = 2 if browser.driver is None else 1
    except Exception as e:  # noqa: BLE001 - one JSON line whatever happened
        result.update(step="unexpected", reason=f"{type(e).__name__}: {e}")
        code = 1
    finally:
        if code != 0 and browser.driver is not None:
            log("FAILED", result.get("step"), "-", result.get("reason"))
            save_failure(args, browser, result)
        browser.quit()
        for timer in timers:
            timer.cancel()
    emit()
    return code


def save_failure(args: argparse.Namespace, browser: Browser, result: dict) -> None:
    """The page's own view, a screenshot and the console, for the failure report (best effort)."""
    d = browser.driver
    try:
        result["page"] = d.execute_script("return window.cribalert ? window.cribalert.snapshot() : null")
    except Exception as e:  # noqa: BLE001 - the page may be gone
        result["page"] = f"unavailable: {type(e).__name__}"
    if not args.artifacts:
        return
    try:
        d.save_screenshot(str(Path(args.artifacts) / "failure.png"))
        with open(Path(args.artifacts) / "console.json", "w") as f:
            json.dump(d.get_log("browser"), f, indent=1)
    except Exception as e:  # noqa: BLE001 - best effort on the failure path
        log("artifacts failed:", e)


if __name__ == "__main__":
    sys.exit(main())
