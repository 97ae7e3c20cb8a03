#!/usr/bin/env python3
"""Real-browser test of the BeMyEars browser client: two headless Chromiums make one video call.

    browser_call.py --url http://127.0.0.1:PORT/ [--relay] [--timeout 120] [--hold 2] [--artifacts DIR]

The server under test (bemyears-server) must already serve the client at --url and the signaling at /ws; with
--relay its REGISTERED must carry a TURN server in iceServers. Nothing is started here but the browsers.

1. Two headless Chromiums (Debian's /usr/bin/chromium + /usr/bin/chromedriver, fake camera and microphone,
   320x240) open the page; one registers as interpreter "ivy-<random>", the other as caller "cal-<random>".
   Every control is found by its accessible name (BEMYEARS-PROTOCOL.md, "Browser client: accessible names").
2. The interpreter presses "Go Online"; the caller sees "Call ivy-…" appear, presses it; the interpreter sees the
   incoming call (visual ring, countdown) and presses "Accept".
3. Both sides must decode remote video (getStats framesDecoded > 0, growing) and have sent VIDEO_VISIBLE; during
   the call "Hang up" is the only control and the interpreter is gone from the caller's list. With --relay both
   pages use iceTransportPolicy "relay" (?relay=1) and the selected candidate pair must be relay on both ends.
4. The caller presses "Hang up"; both calls end with reason HANGUP, the interpreter is AVAILABLE again and the
   caller sees "Call ivy-…" again.

Prints {"event": "ready"} once both browsers are up (their start-up is not part of --timeout, which counts from
there; --launch-timeout bounds it), then one JSON line on stdout ({"ok": true, "direct_or_relay": …, "first_remote_frame_ms": …, …}); progress goes
to stderr. Exit status: 0 passed, 1 a check failed, 2 the environment is not usable (no server, no browser),
3 --launch-timeout or --timeout fired. Every wait has a deadline and the browsers are always shut down.

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
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
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:  # pragma: no cover - reported as an environment error below
    selenium = None

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",  # as root the sandbox refuses to start
    "--use-fake-device-for-media-stream",  # synthetic camera and beeping microphone
    "--use-fake-ui-for-media-stream",  # grant the camera/microphone permission without a prompt
    "--autoplay-policy=no-user-gesture-required",
    "--allow-loopback-in-peer-connection",  # ICE host candidates on lo
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",  # no traffic but the test's own
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--mute-audio",
]
# The caller is a phone held upright, the interpreter a landscape screen: both layouts get exercised.
WINDOW = {"caller": "480,800", "interpreter": "800,480"}


def log(*parts: object) -> None:
    print(f"[browser_call {1000 * (time.monotonic() - START):8.0f} ms]", *parts, file=sys.stderr, flush=True)


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
# Process cleanup: the browsers must never outlive this script


def descendants(root: int) -> list[int]:
    """All live descendants of `root` (from /proc), children first found first."""
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


class Browsers:
    """Owns the chromedriver processes; `kill_all` works from any thread, even while a WebDriver call hangs."""

    def __init__(self) -> None:
        self.drivers: dict[str, object] = {}
        self.pids: set[int] = set()
        self.lock = threading.Lock()

    def remember_tree(self) -> None:
        with self.lock:
            for d in self.drivers.values():
                proc = getattr(getattr(d, "service", None), "process", None)
                if proc is not None:
                    self.pids.add(proc.pid)
                    self.pids.update(descendants(proc.pid))

    def quit_all(self, grace: float = 10.0) -> None:
        self.remember_tree()
        threads = []
        for d in list(self.drivers.values()):
            t = threading.Thread(target=_quiet_quit, args=(d,), daemon=True)
            t.start()
            threads.append(t)
        deadline = time.monotonic() + grace
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        self.kill_all()

    def kill_all(self) -> None:
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
# One browser page


class Page:
    def __init__(self, role: str, driver: object, step_timeout: float):
        self.role = role
        self.d = driver
        self.step_timeout = step_timeout

    def state(self) -> dict:
        s = self.d.execute_script("return window.bemyears ? window.bemyears.snapshot() : null")
        if s is None:
            raise CheckFailed(f"{self.role}: page", "window.bemyears is missing: the client did not load")
        return s

    def wait(self, desc: str, pred, timeout: float | None = None) -> dict:
        """Polls the test hook until pred(state) is true; fails with the last state otherwise."""
        deadline = time.monotonic() + (timeout or self.step_timeout)
        s = None
        while time.monotonic() < deadline:
            s = self.state()
            if pred(s):
                return s
            time.sleep(0.1)
        raise CheckFailed(f"{self.role}: {desc}", f"not reached within {timeout or self.step_timeout:.0f} s; "
                          f"state={compact(s)}")

    def visible_controls(self) -> list[tuple[str, str, object]]:
        """(tag, accessible name, element) of every displayed, focusable control."""
        out = []
        for e in self.d.find_elements(By.CSS_SELECTOR, "button, input, select, textarea, a[href], [tabindex]"):
            try:
                if e.is_displayed():
                    out.append((e.tag_name, e.accessible_name, e))
            except WebDriverException:
                continue  # re-rendered while we looked
        return out

    def control(self, name: str, tags: tuple[str, ...] = ("button", "input"), timeout: float | None = None,
                enabled: bool = True):
        """The displayed control whose computed accessible name is exactly `name`."""
        deadline = time.monotonic() + (timeout or self.step_timeout)
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = []
            for tag, acc, e in self.visible_controls():
                seen.append(acc)
                if tag in tags and acc == name and (not enabled or e.is_enabled()):
                    return e
            time.sleep(0.1)
        raise CheckFailed(f"{self.role}: find control", f"no {'enabled ' if enabled else ''}control named {name!r} "
                          f"within {timeout or self.step_timeout:.0f} s; visible: {seen}")

    def element_named(self, css: str, name: str):
        for e in self.d.find_elements(By.CSS_SELECTOR, css):
            if e.accessible_name == name:
                return e
        raise CheckFailed(f"{self.role}: accessible names", f"no {css} named {name!r}")


def compact(s: dict | None) -> dict | None:
    if not s:
        return s
    keys = ["registration", "username", "role", "interpreterState", "callState", "peer", "availableInterpreters",
            "framesDecoded", "videoVisibleSent", "peerVideoVisible", "candidatePair", "iceConnectionState",
            "connectionState", "iceServerUrls", "relayOnly", "status", "lastError", "lastCallEnd"]
    return {k: s.get(k) for k in keys}


# ----------------------------------------------------------------------------------------------------------------


def check_environment(args: argparse.Namespace) -> None:
    if selenium is None:
        raise EnvironmentProblem("the Python package selenium is missing: pip install selenium==4.51.0")
    for path in (args.chromium, args.chromedriver):
        if not os.access(path, os.X_OK):
            raise EnvironmentProblem(f"{path} is missing: apt-get install chromium chromium-driver")
    try:
        with urllib.request.urlopen(args.url, timeout=5) as r:
            body = r.read(200_000).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:
        raise EnvironmentProblem(f"the client page {args.url} cannot be loaded: {e}") from e
    if "app.js" not in body:
        raise EnvironmentProblem(f"{args.url} does not look like the BeMyEars client (no app.js in the page)")


def page_url(base: str, relay: bool, video: str) -> str:
    u = urllib.parse.urlsplit(base)
    q = urllib.parse.parse_qsl(u.query)
    q = [(k, v) for k, v in q if k not in ("relay", "video")] + [("video", video)]
    if relay:
        q.append(("relay", "1"))
    return urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(q)))


def make_driver(role: str, args: argparse.Namespace, browsers: Browsers):
    opts = webdriver.ChromeOptions()
    opts.binary_location = args.chromium
    for flag in CHROMIUM_FLAGS + [f"--window-size={WINDOW[role]}"]:
        opts.add_argument(flag)
    try:
        if shutil.disk_usage("/dev/shm").free < 1 << 30:
            opts.add_argument("--disable-dev-shm-usage")  # small /dev/shm (containers): use /tmp instead
    except OSError:
        pass
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    log_output = str(Path(args.artifacts) / f"chromedriver-{role}.log") if args.artifacts else os.devnull
    service = Service(executable_path=args.chromedriver, log_output=log_output)
    driver = webdriver.Chrome(service=service, options=opts)
    browsers.drivers[role] = driver
    browsers.remember_tree()
    driver.set_page_load_timeout(args.step_timeout)
    driver.set_script_timeout(args.step_timeout)
    return driver


def snap(args: argparse.Namespace, page: Page, name: str) -> None:
    """With --artifacts, a screenshot of this moment (best effort, never fails the run)."""
    if args.artifacts:
        try:
            page.d.save_screenshot(str(Path(args.artifacts) / f"{page.role}-{name}.png"))
        except WebDriverException as e:
            log("screenshot failed:", e.msg)


def register(page: Page, username: str, role_name: str) -> None:
    field = page.control("Username", tags=("input",))
    field.clear()
    field.send_keys(username)
    page.control(role_name, tags=("input",)).click()  # the radio button "Caller" / "Interpreter"
    page.control("Register").click()
    s = page.wait("REGISTERED", lambda s: s["registration"] == "registered")
    if s["username"] != username.lower() or s["role"] != role_name.lower():
        raise CheckFailed(f"{page.role}: REGISTERED", f"registered as {s['username']}/{s['role']}")


def only_hang_up(page: Page) -> None:
    names = [acc for _tag, acc, _e in page.visible_controls()]
    if names != ["Hang up"]:
        raise CheckFailed(f"{page.role}: in-call controls", f"expected only 'Hang up', visible controls: {names}")
    for css, name in (("video", "Remote video"), ("video", "Your camera")):
        if not page.element_named(css, name).is_displayed():
            raise CheckFailed(f"{page.role}: in-call layout", f"{name!r} is not displayed")


def media_hint(s: dict | None) -> str:
    """A likely cause when remote video did not come up, read from one page's state."""
    if not s:
        return ""
    err = (s.get("lastError") or {}).get("message", "")
    ice = s.get("iceConnectionState")
    if " 401" in err:
        return "hint: the TURN server refused the credentials from REGISTERED (401): shared secret or clock?"
    if s.get("relayOnly") and not any(u.startswith(("turn:", "turns:")) for u in s.get("iceServerUrls") or []):
        return "hint: relay-only but REGISTERED carried no TURN server"
    if ice == "new":
        return "hint: ICE never started checking: no candidates (TURN unreachable, or no OFFER/ANSWER relayed)"
    if ice in ("checking", "failed", "disconnected"):
        return f"hint: ICE is {ice}: the candidates exchanged do not reach each other"
    if s.get("framesDecoded", 0) > 0 and not s.get("videoVisibleSent"):
        return "hint: frames are decoded but the page never rendered one (VIDEO_VISIBLE not sent)"
    if s.get("videoVisibleSent") and not s.get("peerVideoVisible"):
        return "hint: the other side's VIDEO_VISIBLE was not forwarded by the server"
    return ""


def pair_kind(pair: dict | None) -> str:
    if not pair:
        return "unknown"
    return "relay" if "relay" in (pair.get("local"), pair.get("remote")) else "direct"


def run(args: argparse.Namespace, browsers: Browsers, result: dict, on_ready) -> None:
    url = page_url(args.url, args.relay, args.video)
    suffix = secrets.token_hex(3)
    ivy_name, cal_name = f"ivy-{suffix}", f"cal-{suffix}"
    result.update(interpreter=ivy_name, caller=cal_name, page=url)

    t0 = time.monotonic()
    ivy = Page("interpreter", make_driver("interpreter", args, browsers), args.step_timeout)
    cal = Page("caller", make_driver("caller", args, browsers), args.step_timeout)
    caps = ivy.d.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    result["chromedriver"] = caps.get("chrome", {}).get("chromedriverVersion", "").split(" ")[0]
    result["timings_ms"] = timings = {"launch_browsers": ms_since(t0)}
    log("browsers up", result["browser"])
    on_ready()

    t0 = time.monotonic()
    for p in (ivy, cal):
        p.d.get(url)
    register(ivy, ivy_name, "Interpreter")
    register(cal, cal_name, "Caller")
    timings["load_and_register"] = ms_since(t0)
    s = ivy.state()
    if s["interpreterState"] != "UNAVAILABLE":
        raise CheckFailed("interpreter: initial state", f"expected UNAVAILABLE, got {s['interpreterState']}")
    if args.relay and not any(u.startswith(("turn:", "turns:")) for u in s["iceServerUrls"]):
        raise CheckFailed("interpreter: REGISTERED iceServers",
                          f"--relay needs a TURN server in iceServers, got {s['iceServerUrls']}")
    log("registered", ivy_name, cal_name)

    # Go Online → the caller's list shows the interpreter
    t0 = time.monotonic()
    ivy.control("Go Online").click()
    ivy.wait("STATE AVAILABLE", lambda s: s["interpreterState"] == "AVAILABLE")
    ivy.control("Go Offline")  # the toggle's name follows the state
    call_button = cal.control(f"Call {ivy_name}")
    timings["go_online_to_listed"] = ms_since(t0)
    log("interpreter listed at the caller")

    # Call → ringing on both sides → Accept
    t0 = time.monotonic()
    call_button.click()
    s = ivy.wait("incoming call", lambda s: s["callState"] == "incoming")
    if s["peer"] != cal_name:
        raise CheckFailed("interpreter: CALL_REQUEST", f"incoming call from {s['peer']}, expected {cal_name}")
    timings["call_to_incoming"] = ms_since(t0)
    if "Incoming call" not in s["status"]:
        raise CheckFailed("interpreter: ringing announcement", f"status region says {s['status']!r}")
    if "incoming-flash" not in (ivy.d.find_element(By.TAG_NAME, "body").get_attribute("class") or ""):
        raise CheckFailed("interpreter: visual ring", "the page does not flash while ringing")
    cal.wait("ringing", lambda s: s["callState"] == "calling" and s["callId"] is not None)
    snap(args, ivy, "1-incoming")
    snap(args, cal, "1-ringing")
    ivy.control("Decline")
    accept = ivy.control("Accept")
    t_accept = time.monotonic()
    accept.click()
    log("accepted")

    # Media both ways, VIDEO_VISIBLE sent, the interpreter gone from the list
    def media_up(s: dict) -> bool:
        return (s["callState"] == "in_call" and s["framesDecoded"] > 0 and s["videoVisibleSent"]
                and s["peerVideoVisible"] and s["candidatePair"] is not None)

    try:
        s_cal = cal.wait("remote video (framesDecoded > 0, VIDEO_VISIBLE both ways)", media_up)
        s_ivy = ivy.wait("remote video (framesDecoded > 0, VIDEO_VISIBLE both ways)", media_up)
    except CheckFailed as e:
        hints = {media_hint(p.state()) for p in (cal, ivy)} - {""}
        raise CheckFailed(e.step, " ".join([e.reason, *sorted(hints)])) from None
    timings["accept_to_both_video"] = ms_since(t_accept)
    log("video both ways", s_cal["candidatePair"], s_ivy["candidatePair"])
    for p in (cal, ivy):
        only_hang_up(p)
        if "Connected" not in p.state()["status"]:
            raise CheckFailed(f"{p.role}: connected announcement", f"status region says {p.state()['status']!r}")
    if ivy_name in cal.state()["availableInterpreters"]:
        raise CheckFailed("caller: presence", f"{ivy_name} is still listed as available during the call")
    if ivy.state()["interpreterState"] != "IN_CALL":
        raise CheckFailed("interpreter: STATE", f"expected IN_CALL, got {ivy.state()['interpreterState']}")
    kinds = {pair_kind(s_cal["candidatePair"]), pair_kind(s_ivy["candidatePair"])}
    if args.relay:
        for p, s in ((cal, s_cal), (ivy, s_ivy)):
            pair = s["candidatePair"]
            if pair.get("local") != "relay" or pair.get("remote") != "relay":
                raise CheckFailed(f"{p.role}: relay", f"selected candidate pair is not relay/relay: {pair}")
            # The relay runs on the call's own TURN credentials (CALL_RINGING / CALL_REQUEST; minted at the call,
            # so never older than REGISTERED's), valid for the longest call plus a margin.
            own, registered = s.get("callTurnUsername"), s.get("turnUsername")
            if not own or not registered or int(own.partition(":")[0]) < int(registered.partition(":")[0]):
                raise CheckFailed(f"{p.role}: per-call TURN credentials",
                                  f"the call uses {own!r}, REGISTERED carried {registered!r}")
            left = int(own.partition(":")[0]) - time.time()
            if not 3 * 3600 <= left <= 3 * 3600 + 700:
                raise CheckFailed(f"{p.role}: per-call TURN credentials", f"valid for {left:.0f} s")

    snap(args, ivy, "2-in-call")
    snap(args, cal, "2-in-call")

    # Hold the call: frames must keep arriving
    f0 = {"caller": s_cal["framesDecoded"], "interpreter": s_ivy["framesDecoded"]}
    time.sleep(args.hold)
    s_cal, s_ivy = cal.state(), ivy.state()
    for p, s in ((cal, s_cal), (ivy, s_ivy)):
        if s["callState"] != "in_call":
            raise CheckFailed(f"{p.role}: hold", f"the call ended while held: {compact(s)}")
        if args.hold >= 2 and s["framesDecoded"] <= f0[p.role]:
            raise CheckFailed(f"{p.role}: hold", f"framesDecoded stuck at {s['framesDecoded']} for {args.hold} s")
    result["frames_decoded"] = {"caller": s_cal["framesDecoded"], "interpreter": s_ivy["framesDecoded"]}
    result["candidate_pair"] = {"caller": s_cal["candidatePair"], "interpreter": s_ivy["candidatePair"]}
    result["first_remote_frame_ms_each"] = {"caller": s_cal["firstRemoteFrameMs"],
                                            "interpreter": s_ivy["firstRemoteFrameMs"]}
    result["first_remote_frame_ms"] = max(s_cal["firstRemoteFrameMs"] or 0, s_ivy["firstRemoteFrameMs"] or 0)
    result["poor_connection_seen"] = {"caller": s_cal["poorConnection"], "interpreter": s_ivy["poorConnection"]}
    result["direct_or_relay"] = "relay" if "relay" in kinds else "direct"

    # Hang up → both ended with HANGUP, the interpreter AVAILABLE and listed again
    t0 = time.monotonic()
    cal.control("Hang up").click()
    for p in (cal, ivy):
        s = p.wait("call ended", lambda s: s["callState"] == "idle" and s["lastCallEnd"] is not None)
        if s["lastCallEnd"]["reason"] != "HANGUP":
            raise CheckFailed(f"{p.role}: call end", f"reason {s['lastCallEnd']['reason']}, expected HANGUP")
        if "hung up" not in s["status"]:
            raise CheckFailed(f"{p.role}: call-ended announcement", f"status region says {s['status']!r}")
    ivy.wait("STATE AVAILABLE after the call", lambda s: s["interpreterState"] == "AVAILABLE")
    cal.control(f"Call {ivy_name}")
    timings["hangup_to_listed_again"] = ms_since(t0)
    snap(args, ivy, "3-after")
    snap(args, cal, "3-after")
    log("hung up; interpreter available again")


def final_states(browsers: Browsers) -> dict:
    """Both pages' test-hook state, for the failure report (best effort)."""
    out = {}
    for role, d in list(browsers.drivers.items()):
        try:
            out[role] = compact(d.execute_script("return window.bemyears ? window.bemyears.snapshot() : null"))
        except Exception as e:  # noqa: BLE001 - the page may be gone
            out[role] = f"unavailable: {type(e).__name__}"
    return out


def save_artifacts(args: argparse.Namespace, browsers: Browsers) -> None:
    if not args.artifacts:
        return
    for role, d in list(browsers.drivers.items()):
        try:
            d.save_screenshot(str(Path(args.artifacts) / f"{role}-failure.png"))
            with open(Path(args.artifacts) / f"{role}-console.json", "w") as f:
                json.dump(d.get_log("browser"), f, indent=1)
        except Exception as e:  # noqa: BLE001 - best effort on the failure path
            log("artifacts for", role, "failed:", e)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the client page, e.g. http://127.0.0.1:8080/")
    ap.add_argument("--relay", action="store_true", help="relay-only media through TURN; check relay/relay")
    ap.add_argument("--timeout", type=float, default=120, help="hard limit for the run once the browsers are up, s")
    ap.add_argument("--launch-timeout", type=float, default=120, help="hard limit for starting both browsers, s")
    ap.add_argument("--step-timeout", type=float, default=25, help="limit for each wait, seconds")
    ap.add_argument("--hold", type=float, default=2, help="seconds to keep the call up before hanging up")
    ap.add_argument("--video", default="320x240", help="camera size asked for by the pages (video=WxH)")
    ap.add_argument("--artifacts", help="directory for screenshots (each step; on failure also console logs) "
                    "and chromedriver logs")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = ap.parse_args()
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver

    browsers = Browsers()
    result: dict = {"ok": False, "relay": args.relay, "url": args.url}
    printed = threading.Event()
    print_lock = threading.Lock()

    def emit(code: int) -> None:
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
        log(result["reason"])
        browsers.kill_all()
        browsers.remember_tree()
        browsers.kill_all()
        emit(3)
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
        arm(args.timeout, f"the call did not complete within --timeout {args.timeout:.0f} s of the browsers starting")

    arm(args.launch_timeout, f"the browsers did not start within --launch-timeout {args.launch_timeout:.0f} s")

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)

    code = 1
    try:
        check_environment(args)
        run(args, browsers, result, on_ready)
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
        code = 2 if not browsers.drivers else 1
    except Exception as e:  # noqa: BLE001 - one JSON line whatever happened
        result.update(step="unexpected", reason=f"{type(e).__name__}: {e}")
        code = 1
    finally:
        if code != 0:
            log("FAILED", result.get("step"), "-", result.get("reason"))
            result["states"] = final_states(browsers)
            save_artifacts(args, browsers)
        browsers.quit_all()
        for timer in timers:
            timer.cancel()
    emit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
