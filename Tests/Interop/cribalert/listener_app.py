#!/usr/bin/env python3
"""Real-browser walk through the listener's app (`cribcall listen --web`) with a real monitor (`cribcall monitor
--web`): pairing by address and PIN, live video and sound in the page, alerts acted on for everyone.

    listener_app.py --monitor-url http://127.0.0.1:P1/s/S1/ --listener-url http://127.0.0.1:P2/s/S2/
                    [--artifacts DIR] [--timeout 180]

Both programs must already run: the monitor with --safety (a camera, e.g. --video-source test), a microphone that
plays a steady tone (`--audio-source file:TONE.wav`; `listener_app.py --write-tone TONE.wav` writes one: 440 Hz at
−45 dBFS, under the default noise threshold), --no-discovery and --port 0 are fine; the listener with a new, empty
--data-dir (nothing paired). Nothing is started here but the browser: one headless Debian Chromium
(/usr/bin/chromium + /usr/bin/chromedriver) with two windows of 390×844, the monitor's and the listener's. Every
control is found by its computed accessible name (a noise alert that comes up meanwhile, from a loud microphone, is
dismissed as a parent would); web_app.py's helpers are reused (imported, not copied).

1. The monitor: a fresh one is taken through the disclaimer and setup as web_app.py does; its Monitor tab shows
   "Pair by address": the port and, behind "Show the full fingerprint", the 64 hex digits. Both must equal GET
   api/state's monitor.port and monitor.fingerprint.
2. The listener: the welcome (the same disclaimer, "Continue"), "No monitors paired yet.", "Add a monitor": "Add by
   address" with host 127.0.0.1, that port and the fingerprint as the monitor shows it (grouped by spaces).
3. PIN pairing: the monitor page shows the PIN in large digits; it is read there and typed into the listener's one
   PIN field (inputmode=numeric, autocomplete=one-time-code, "Attempts left: 3"); the listener says it is paired and
   goes back to Monitors, where the monitor's card says "Connected" and shows its safety status line (the line of
   the listener's GET api/state).
4. "Video": the page must decode video (the <video> has videoWidth > 0, and getStats' inbound-rtp video
   framesDecoded grows) and receive sound (inbound-rtp audio packetsReceived grows and totalAudioEnergy or
   audioLevel > 0), played unmuted (no "Tap to hear"); its sound meter moves. The figures are reported (video,
   audio). "Mute" mutes it here and back; "Keep live" keeps it ("Kept live").
5. An alert: the monitor page's Settings → "Test: face covered"; the listener page must show the full-screen alert,
   naming the monitor, within 1 s of the click (alert_ms: from the click to the listener page's own timestamp of
   showing it); "Mark as okay" there → the monitor's GET api/state shows that alert as "okay" by the listener's
   name (--listener-name, "Mum" by default).
6. Activity lists the alert with the monitor's name, and so does the History of each night (GET api/history of
   what the listener heard: "Nursery · Marked as okay by Mum…"); Settings ("When a noise is noticed": "Open the stream" then
   "Notify me" again, saved in the listener's api/state), Alert Preferences, Privacy and Help are shown; "Forget"
   asks for a confirmation (cancelled here).
   Then the phone on its side (844×390): Monitors (the video still playing), Activity and Settings fit the width
   and every control on them can be scrolled to and tapped (L…-landscape-*.png).
7. "End" stops the stream: the player disappears and the listener's api/state has no stream left.
8. A crying alert ("Test: crying" on the monitor): "Open live view" on the listener opens a video stream of that
   monitor (open_live_view_ms); "End" ends it.
9. "Listen": a sound-only stream plays (no video received), the listener's api/state says it plays, the meter
   moves; "End" ends it.
10. Monitoring ON/OFF (seed 000 §3.2, Monitor Home): the monitor's Monitor tab says "Monitoring: ON"; "Stop
    monitoring" asks first ("Yes, stop monitoring"), then says "Monitoring: OFF". The listener is told within 5 s
    (its api/state, monitoring_off_told_ms): its card says "Monitoring: OFF" with Listen and Video disabled, and
    the notice "Monitoring is off at <monitor>" comes up full screen ("OK" closes it). While off, the monitor's
    "Test: face covered" raises nothing and says why. "Start monitoring": "Monitoring: ON" again, the listener's
    card is back, and a test alert reaches the listener once more.

A PNG of every listener screen (L01-welcome.png, …) and of the monitor's screens, among them its pairing card with
the PIN (M…-pairing-pin.png), goes to --artifacts. The browser's console is collected throughout and any SEVERE entry
fails the run. No page may show a prohibited medical term, and every control shown must have an accessible name.

Prints {"event": "ready"} once the browser is up (--timeout, each step's own limit, counts from its start), then one JSON line on stdout
({"ok": true, "alert_ms": …, "video": {…}, "audio": {…}, …}); progress goes to stderr. Exit status: 0 passed, 1
a check failed, 2 the environment is not usable, 3 --launch-timeout or --timeout fired.

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import struct
import sys
import time
import urllib.error
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import web_app  # noqa: E402 - the monitor's walk and the shared helpers
from web_app import (  # noqa: E402
    PROHIBITED, Api, Browser, CheckFailed, EnvironmentProblem, Page, http, log, make_driver, ms_since, normalise,
    selenium,
)

if selenium is not None:
    from selenium.common.exceptions import ElementClickInterceptedException
    from selenium.webdriver.common.by import By
else:  # reported by check_environment
    ElementClickInterceptedException = Exception

web_app.LOG_NAME[0] = "listener_app"
START = web_app.START
ALERT_LIMIT_MS = 1000  # seed 003 §6.3: alerts fire within 1 second of the trigger
STREAM_LIMIT_S = 30  # from "Video" to decoded frames and sound
SAMPLE_GAP_S = 2.0  # between the two getStats samples that must show growth

TEXTS = {
    "welcome": ["Welcome to CribAlert", "not a medical device",
                "I understand this is a safety aid, not a medical device.", "Continue"],
    "monitors-empty": ["Monitors", "No monitors paired yet.", "Add a monitor",
                       "talk directly over your home network", "Activity", "Settings"],
    "add-monitor": ["Add a monitor", "On this network", "Look for monitors", "Add by address", "Monitor's address",
                    "Port", "Fingerprint", "Pair"],
    "pair-pin": ["Enter the PIN", "Enter PIN shown on monitor.", "PIN shown on the monitor", "Attempts left: 3",
                 "Cancel"],
    "paired": ["Paired with Nursery", "Back to Monitors"],
    "monitors": ["Monitors", "Nursery", "Connected", "Listen", "Video", "Forget", "Movement", "Position"],
    "video": ["Live", "Keep live", "End", "Local connection — nothing leaves your home network."],
    "alert": ["SAFETY ALERT", "From Nursery", "Baby's face may be covered", "View live camera", "I am checking",
              "Mark as okay"],
    "alert-crying": ["From Nursery", "Crying detected", "Open live view", "Mute for 5 minutes"],
    "activity": ["Activity", "Nursery", "History of each night"],
    "history": ["History Log", "Tonight", "Last Night", "Calendar", "Session Summary", "Activity timeline",
                "Face may have been covered"],
    "settings": ["Settings", "Alert Preferences", "When a noise is noticed", "Notify me", "Open the stream",
                 "Add a monitor", "Privacy and Transparency", "Help and Support", "CribCall version"],
    "alert-prefs": ["Alert Preferences", "Calm Chime", "Volume", "Vibration pattern"],
    "privacy": ["Privacy Guarantee", "Encrypted and secure"],
    "help": ["We're here to help.", "How do I add a monitor?", "Link lost — reconnecting…"],
    "forget": ["Forget Nursery?", "Yes, forget", "Cancel"],
}


# ----------------------------------------------------------------------------------------------------------------
# A steady tone for the monitor's microphone (--write-tone)


def write_tone(path: str, seconds: int = 4, freq: float = 440.0, dbfs_rms: float = -45.0) -> None:
    """A 48 kHz mono WAV of a sine whose RMS is `dbfs_rms` (−45 dBFS reads 50 on the monitor's 0–100 level, under
    the default threshold 60, so no noise event and the setup check's room noise passes). Whole periods, so that
    it loops without a click."""
    rate = 48000
    amplitude = math.sqrt(2) * 10 ** (dbfs_rms / 20)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", round(32767 * amplitude * math.sin(2 * math.pi * freq * i / rate)))
                               for i in range(rate * seconds)))


# ----------------------------------------------------------------------------------------------------------------
# Two windows of one browser


class Window(Page):
    """A Page bound to one browser window: `use()` makes it the one WebDriver talks to."""

    def __init__(self, driver, args, api: Api, result: dict, handle: str, prefix: str):
        super().__init__(driver, args, api, result)
        self.handle = handle
        self.prefix = prefix

    def use(self) -> "Window":
        if self.d.current_window_handle != self.handle:
            self.d.switch_to.window(self.handle)
        return self

    def inside(self, css: str):
        """The displayed element `css` (e.g. the monitor's card)."""
        found = [e for e in self.d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]
        if not found:
            raise CheckFailed("find", f"nothing displayed matches {css}")
        return found[0]

    def control_in(self, root_css: str, name: str, tags=("button", "a", "input"), timeout: float | None = None):
        """The displayed, enabled control named `name` inside `root_css`."""
        def find():
            self.dismiss_noise()  # a noise alert up meanwhile: dismissed, as a parent does, then on
            for root in self.d.find_elements(By.CSS_SELECTOR, root_css):
                for e in root.find_elements(By.CSS_SELECTOR, ", ".join(tags)):
                    if e.is_displayed() and e.is_enabled() and e.accessible_name == name:
                        return e
            return None
        return self.wait(f"the control {name!r} in {root_css}", find, timeout=timeout)

    def press(self, element) -> None:
        self.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        try:
            element.click()
        except ElementClickInterceptedException:
            # A noise the monitor heard came up full screen meanwhile (every 10 s or so with a loud microphone):
            # a parent dismisses it and goes on. Anything else in the way is a failure.
            if not self.dismiss_noise():
                raise
            element.click()

    def dismiss_noise(self) -> bool:
        """Dismisses the noise alert on screen, if that is what is shown; answers whether it did."""
        shown = self.d.execute_script(
            "const l = document.getElementById('alert-layer');"
            "return l && !l.hidden ? document.getElementById('alert-title').textContent : null")
        if not shown or not re.match(r"(missed: )?a sound in ", shown.strip().lower()):
            return False
        for button in self.d.find_elements(By.CSS_SELECTOR, "#alert-actions button"):
            if button.is_displayed() and button.accessible_name == "Dismiss":
                button.click()
                self.wait("the noise alert closed", lambda: self.d.execute_script(
                    "return document.getElementById('alert-layer').hidden"), timeout=5)
                return True
        return False

    def stats(self) -> dict:
        return self.d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.cribalert.stats().then(done, (e) => done({error: String(e)}))")

    def capture(self, name: str, texts_key: str | None = None) -> None:
        if texts_key:
            self.expect_texts(texts_key, TEXTS[texts_key])
        self.screenshot(name)
        log("screen", self.prefix + name, "ok")


def open_window(driver, first: bool) -> str:
    """A new window (not a tab: headless Chromium keeps every window visible, so neither page is throttled)."""
    if not first:
        driver.switch_to.new_window("window")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": web_app.WIDTH, "height": web_app.HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    return driver.current_window_handle


# ----------------------------------------------------------------------------------------------------------------
# The walk


def setup_monitor(mon: Window, args, mon_api: Api, result: dict) -> None:
    """A fresh monitor goes through web_app.py's disclaimer and setup; one set up already is only opened."""
    mon.use()
    fresh = not mon_api.state()["app"].get("setupComplete")
    mon.d.get(args.monitor_url)
    if fresh:
        web_app.walk_welcome(mon)
        web_app.walk_setup_name(mon, args.baby_name)
        web_app.walk_setup_placement(mon)
        web_app.walk_setup_area(mon, mon_api, result.setdefault("monitor_setup", {}))
        web_app.walk_setup_check(mon, result.setdefault("monitor_setup", {}))
    web_app.walk_monitor(mon, mon_api.state()["app"]["babyName"] or args.baby_name)
    result["monitor_live_view"] = result.pop("live_view", None)
    mon.check_console("monitor setup")


def read_monitor_address(mon: Window, mon_api: Api, result: dict) -> tuple[int, str, str]:
    """The port and fingerprint as the monitor's page shows them, checked against its api/state."""
    mon.use()
    card = mon.d.find_element(By.ID, "pair-card")
    mon.d.execute_script("arguments[0].scrollIntoView({block: 'start'})", card)
    port_text = mon.wait("the port on the monitor's page",
                         lambda: (t := mon.d.find_element(By.ID, "pair-port").text.strip()).isdigit() and t)
    mon.click("Show the full fingerprint")
    shown = mon.wait("the full fingerprint", lambda: mon.d.find_element(By.ID, "pair-fp-full").text.strip())
    digits = re.sub(r"\s", "", shown)
    state = mon_api.state()["monitor"]
    if int(port_text) != state["port"] or digits != state["fingerprint"]:
        raise CheckFailed("monitor address", f"the page shows port {port_text}, fingerprint {digits}; api/state has "
                                             f"{state['port']}, {state['fingerprint']}")
    if not re.fullmatch(r"[0-9a-f]{64}", digits):
        raise CheckFailed("monitor address", f"the fingerprint shown is not 64 hex digits: {shown!r}")
    short = mon.d.find_element(By.ID, "pair-fp-short").text
    result["monitor_address"] = {"port": int(port_text), "fingerprint_shown": shown, "short": short}
    mon.screenshot("pairing-address")
    return int(port_text), shown, state["name"]


def open_listener_app(lis: Window, args) -> None:
    """The listener's app as a parent opens it: the welcome and its disclaimer (the first time), then Monitors."""
    lis.use()
    lis.d.get(args.listener_url)
    s = lis.wait("the listener's first screen", lambda: (s := lis.snapshot())["screen"] not in (None, "loading") and s)
    if s["role"] != "listener":
        raise CheckFailed("listener", f"the page's role is {s['role']!r}")
    if s["screen"] == "welcome":
        lis.capture("welcome", "welcome")
        start = lis.control("Continue", enabled=False)
        lis.control("I understand this is a safety aid, not a medical device.", tags=("input",)).click()
        lis.wait("Continue enabled", start.is_enabled, timeout=3)
        start.click()
    lis.wait_screen("monitors")


def walk_listener_start(lis: Window, args) -> None:
    open_listener_app(lis, args)
    lis.capture("monitors-empty", "monitors-empty")


def walk_add_by_address(lis: Window, port: int, fingerprint_shown: str, name: str, result: dict) -> None:
    lis.use()
    lis.click("Add a monitor")
    lis.wait_screen("add-monitor")
    lis.capture("add-monitor", "add-monitor")
    # a pasted text that is no pairing code is refused, saying where the code comes from
    lis.control("Pairing code", tags=("textarea",)).send_keys("hello")
    lis.click("Pair with this code")
    lis.wait("the bad code refused", lambda: "not a CribCall pairing code" in lis.d.find_element(By.ID,
             "code-error").text, timeout=5)
    lis.control("Pairing code", tags=("textarea",)).clear()
    # the browser logs that expected refusal (400) as an error: only that one is taken off
    lis.collect_console()
    lis.console = [e for e in lis.console if not ("api/pair/qr" in e.get("message", "")
                                                  and "status of 400" in e.get("message", ""))]
    # a wrong fingerprint is refused in the page, with a reason
    lis.control("Monitor's address", tags=("input",)).send_keys("127.0.0.1")
    lis.control("Port", tags=("input",)).send_keys(str(port))
    fp = lis.control("Fingerprint", tags=("input",))
    fp.send_keys("ab12 cd34")
    lis.click("Pair")
    lis.wait("the short fingerprint refused", lambda: "64 letters" in lis.d.find_element(By.ID, "address-error").text,
             timeout=3)
    fp.clear()
    fp.send_keys(fingerprint_shown)  # as the monitor shows it: in groups of four
    lis.control("Name (optional)", tags=("input",)).send_keys(name)
    lis.screenshot("add-by-address")
    lis.click("Pair")
    lis.wait_screen("pair")


def walk_pair_by_code(lis: Window, mon: Window, lis_api: Api, mon_api: Api, port: int, result: dict) -> None:
    """Pairing again, by the pairing code: "Show pairing code" and "Copy code" on the monitor, the code pasted into
    the listener's Add a monitor screen with the monitor's address; paired, the monitor connected."""
    mon.use()
    if mon.snapshot()["alertShown"]:  # the crying alert of an earlier step, still open on the monitor
        mon.click("Dismiss")
    mon.d.get(mon.d.current_url.split("#")[0] + "#/monitor")
    mon.wait_screen("monitor")
    mon.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", mon.d.find_element(By.ID, "pair-card"))
    mon.click("Show pairing code")
    mon.wait("the QR code", lambda: mon.d.find_element(By.ID, "pair-qr").is_displayed())
    mon.click("Copy code")
    said = mon.wait("Copy code answered", lambda: (t := mon.snapshot().get("status") or "")
                    and ("copied" in t.lower()) and t, timeout=5)
    code = mon_api.state()["pairing"]["qr"]["text"]
    lis.use()
    lis.d.get(lis.d.current_url.split("#")[0] + "#/monitors/add")
    lis.wait_screen("add-monitor")
    lis.control("Pairing code", tags=("textarea",)).send_keys(code)  # as pasted
    lis.control("Monitor's address (only if it is not found on this network)", tags=("input",)).send_keys(
        f"127.0.0.1:{port}")
    t0 = time.monotonic()
    lis.click("Pair with this code")
    lis.wait_screen("pair")
    lis.wait("paired by code", lambda: (lis_api.state().get("pairing") or {}).get("state") == "paired", timeout=15)
    lis.screenshot("paired-by-code")
    result["pair_by_code"] = {"ms": ms_since(t0), "copy": said}


def walk_pin(lis: Window, mon: Window, lis_api: Api, result: dict) -> None:
    lis.use()
    lis.wait("the PIN step", lambda: (lis_api.state().get("pairing") or {}).get("state") == "enter_pin")
    pin_input = lis.control("PIN shown on the monitor", tags=("input",))
    attrs = {a: pin_input.get_attribute(a) for a in ("inputmode", "autocomplete", "maxlength")}
    if attrs != {"inputmode": "numeric", "autocomplete": "one-time-code", "maxlength": "6"}:
        raise CheckFailed("pin", f"the PIN field's attributes: {attrs}")
    lis.capture("pair-pin", "pair-pin")

    mon.use()
    box = mon.wait("the PIN on the monitor's page", lambda: (b := mon.d.find_element(By.ID, "pair-pin")).is_displayed()
                   and b)
    mon.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", mon.d.find_element(By.ID, "pair-card"))
    digits_el = mon.d.find_element(By.ID, "pair-pin-digits")
    pin = re.sub(r"\D", "", digits_el.text)
    size = mon.d.execute_script("return parseFloat(getComputedStyle(arguments[0]).fontSize)", digits_el)
    if len(pin) != 6:
        raise CheckFailed("pin", f"the monitor shows {digits_el.text!r}, not 6 digits")
    if size < 32:
        raise CheckFailed("pin", f"the PIN's digits are {size}px: not large")
    if "enter this pin on the listener device" not in normalise(box.text):
        raise CheckFailed("pin", f"the monitor's PIN box says {box.text!r}")
    mon.screenshot("pairing-pin")
    result["pin"] = {"digits_px": size, "shown_as": digits_el.text}

    lis.use()
    t0 = time.monotonic()
    pin_input.send_keys(pin)
    lis.click("Pair")
    lis.wait("paired", lambda: (lis.snapshot()["screen"] == "pair"
                                and (lis_api.state().get("pairing") or {}).get("state") == "paired"), timeout=15)
    result["pairing_ms"] = ms_since(t0)
    lis.wait("the success message", lambda: "paired with" in lis.text(), timeout=3)
    lis.capture("paired", "paired")
    lis.wait_screen("monitors", timeout=10)  # back to Monitors by itself


def card_text(lis: Window) -> str:
    return normalise(lis.inside("article.monitor-card").text)


def walk_monitors(lis: Window, lis_api: Api, result: dict) -> str:
    lis.use()
    lis.wait_screen("monitors")
    monitor = lis.wait("the monitor connected with a safety status", lambda: next(
        (m for m in lis_api.state()["monitors"] if m["connection"] == "connected" and m.get("safety")), None))

    def line_shown():
        current = next(m for m in lis_api.state()["monitors"] if m["monitorId"] == monitor["monitorId"])
        text = card_text(lis)
        return "connected" in text and normalise(current["safety"]["line"]) in text and current["safety"]["line"]

    line = lis.wait("the card says Connected with the safety status line", line_shown)
    result["card"] = {"connection": "Connected", "safety_line": line}
    lis.capture("monitors", "monitors")
    return monitor["monitorId"]


def walk_video(lis: Window, lis_api: Api, result: dict) -> str:
    lis.use()
    t0 = time.monotonic()
    lis.press(lis.control_in("article.monitor-card", "Video"))
    retapped = False

    def playing():
        nonlocal retapped
        snap = lis.snapshot()
        player = next((p for p in snap["players"] if p["state"] == "playing" and p["videoWidth"] > 0), None)
        if player or retapped or time.monotonic() - t0 < 3:
            return player
        # A noise alert that came up full screen at the moment of the tap took it: no stream was asked for (none in
        # the listener's api/state, no player in the page). A parent closes the alert and taps again, once.
        if not snap["players"] and not lis_api.state()["streams"] and lis.dismiss_noise():
            retapped = True
            log("a noise alert took the tap on Video: dismissed, tapped again")
            lis.press(lis.control_in("article.monitor-card", "Video"))
        return None

    player = lis.wait("the video playing", playing, timeout=STREAM_LIMIT_S)
    result["stream_ms"] = ms_since(t0)
    session = player["sessionId"]
    lis.wait("the stream playing in the listener's api/state", lambda: any(
        s["sessionId"] == session and s["state"] == "playing" for s in lis_api.state()["streams"]), timeout=10)
    first = lis.stats()["players"][session]
    time.sleep(SAMPLE_GAP_S)
    second = lis.stats()["players"][session]
    v1, v2, a1, a2 = first["video"], second["video"], first["audio"], second["audio"]
    if not v2 or not a2:
        raise CheckFailed("video", f"inbound RTP missing: {second}")
    result["video"] = {
        "codec": v2["codec"], "decoder": v2.get("decoder"), "size": [v2["frameWidth"], v2["frameHeight"]],
        "element_size": [player["videoWidth"], player["videoHeight"]],
        "framesDecoded": [v1["framesDecoded"], v2["framesDecoded"]], "packetsReceived": v2["packetsReceived"],
        "fps": round((v2["framesDecoded"] - v1["framesDecoded"]) / SAMPLE_GAP_S, 1),
    }
    result["audio"] = {
        "codec": a2["codec"], "packetsReceived": [a1["packetsReceived"], a2["packetsReceived"]],
        "totalAudioEnergy": a2["totalAudioEnergy"], "audioLevel": a2["audioLevel"],
        "meter_level": lis.snapshot()["players"][0]["level"],
    }
    result["transport"] = second.get("transport")
    log("video", result["video"], "audio", result["audio"])
    if not v2["framesDecoded"] > v1["framesDecoded"] > 0:
        raise CheckFailed("video", f"no frames decoded, or none more: {result['video']}")
    if not a2["packetsReceived"] > a1["packetsReceived"] > 0:
        raise CheckFailed("audio", f"no audio packets, or none more: {result['audio']}")
    if not (a2["totalAudioEnergy"] > 0 or a2["audioLevel"] > 0):
        raise CheckFailed("audio", f"the sound received is silent: {result['audio']}")
    if player["audioBlocked"]:
        raise CheckFailed("audio", "the browser held the sound back (Tap to hear)")
    lis.wait("the sound meter moving", lambda: lis.snapshot()["players"][0]["level"] > 0, timeout=5)
    lis.capture("video", "video")
    mute = lis.control_in("article.monitor-card", "Mute")
    lis.press(mute)
    lis.wait("muted here", lambda: lis.snapshot()["players"][0]["muted"]
             and mute.get_attribute("aria-pressed") == "true", timeout=3)
    lis.press(mute)
    lis.wait("sound on again", lambda: not lis.snapshot()["players"][0]["muted"], timeout=3)
    lis.press(lis.control_in("article.monitor-card", "Keep live"))
    lis.wait("Kept live", lambda: lis.snapshot()["players"][0]["pinned"], timeout=5)
    kept = [e for e in lis.d.find_elements(By.CSS_SELECTOR, "article.monitor-card button[aria-pressed='true']")
            if e.accessible_name == "Kept live"]
    if not kept:
        raise CheckFailed("keep live", "no pressed 'Kept live' button after Keep live")
    return session


def walk_alert(lis: Window, mon: Window, mon_api: Api, monitor_id: str, result: dict) -> None:
    mon.use()
    mon.click("Settings", tags=("a",))
    mon.wait_screen("settings")
    button = mon.control("Test: face covered")
    mon.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    clicked = time.time() * 1000
    button.click()
    lis.use()
    shown = lis.wait("the full-screen alert on the listener",
                     lambda: (s := lis.snapshot())["alertShown"] and s, timeout=5, poll=0.02)
    shown_epoch = lis.d.execute_script("return performance.timeOrigin") + shown["alertShownAt"]
    alert_id = shown["alertShown"]
    alert = next(a for a in mon_api.state()["alerts"] if a["alertId"] == alert_id)
    result["alert_ms"] = round(shown_epoch - clicked)
    result["alert_after_detection_ms"] = round(shown_epoch - alert["detectedAt"])
    log("alert on the listener after", result["alert_ms"], "ms")
    if result["alert_ms"] > ALERT_LIMIT_MS:
        raise CheckFailed("alert", f"the listener showed the alert {result['alert_ms']} ms after the click")
    dialog = lis.d.find_element(By.CSS_SELECTOR, "[role=alertdialog]")
    if dialog.accessible_name != "Baby's face may be covered":
        raise CheckFailed("alert", f"the alertdialog is named {dialog.accessible_name!r}")
    if not lis.focused_inside("[role=alertdialog]"):
        raise CheckFailed("alert", "the focus did not move into the alert")
    lis.wait("the live video in the alert", lambda: lis.d.execute_script(
        "const v = document.getElementById('alert-stream'); return !v.hidden && v.videoWidth > 0"), timeout=5)
    lis.capture("alert", "alert")
    lis.click("Mark as okay")
    lis.wait("the alert closed on the listener", lambda: lis.snapshot()["alertShown"] is None, timeout=5)
    done = lis.wait("the alert okay on the monitor", lambda: next(
        (a for a in mon_api.state()["alerts"] if a["alertId"] == alert_id and a["state"] == "okay"), None), timeout=5)
    result["alert"] = {"alertId": alert_id, "state": done["state"], "by": done.get("by")}
    if done.get("by") != lis.args.listener_name:
        raise CheckFailed("alert", f"the monitor says it was marked okay by {done.get('by')!r}, expected "
                                   f"{lis.args.listener_name!r}")
    mon.use()
    mon.wait("the monitor's own alert closed after the listener's okay",
             lambda: mon.snapshot()["alertShown"] is None, timeout=5)
    result["monitor_status_after"] = mon.snapshot()["status"]


def walk_listener_pages(lis: Window, lis_api: Api, result: dict) -> None:
    lis.use()
    lis.click("Activity", tags=("a",))
    lis.wait_screen("activity")
    lis.wait("the alert in Activity", lambda: "nursery" in normalise(
        lis.d.find_element(By.ID, "activity-list").text))
    result["activity"] = [" · ".join(li.text.split("\n")) for li in
                          lis.d.find_elements(By.CSS_SELECTOR, "#activity-list li")][:3]
    lis.capture("activity", "activity")
    lis.click("History of each night")
    lis.wait_screen("history")
    lis.wait("the alert in the history, with its monitor", lambda: "nursery · marked as okay by" in normalise(
        lis.d.find_element(By.ID, "history-timeline").text))
    lis.capture("history", "history")

    lis.click("Settings", tags=("a",))
    lis.wait_screen("listener-settings")
    lis.capture("settings", "settings")
    lis.click("Open the stream", tags=("input",))
    lis.wait("onNoise open saved", lambda: lis_api.state()["settings"]["onNoise"] == "open", timeout=5)
    lis.click("Notify me", tags=("input",))
    lis.wait("onNoise notify saved", lambda: lis_api.state()["settings"]["onNoise"] == "notify", timeout=5)

    lis.click("Alert Preferences")
    lis.wait_screen("alert-prefs")
    lis.capture("alert-preferences", "alert-prefs")
    lis.click("Back", tags=("a",))
    lis.wait_screen("listener-settings")
    lis.click("Privacy and Transparency")
    lis.wait_screen("privacy")
    lis.capture("privacy", "privacy")
    lis.click("Back", tags=("a",))
    lis.wait_screen("listener-settings")
    lis.click("Help and Support")
    lis.wait_screen("help")
    lis.click("Common questions Quick answers to setup and alerts.")
    lis.click("Troubleshooting Help with camera setup, alerts, or monitoring.")
    lis.capture("help", "help")
    lis.click("Back", tags=("a",))
    lis.wait_screen("listener-settings")

    lis.click("Monitors", tags=("a",))
    lis.wait_screen("monitors")
    lis.press(lis.control_in("article.monitor-card", "Forget Nursery"))
    lis.wait("the confirmation", lambda: "forget nursery?" in card_text(lis), timeout=3)
    lis.capture("forget-confirm", "forget")
    lis.press(lis.control_in("article.monitor-card", "Cancel"))
    lis.wait("the confirmation closed", lambda: "forget nursery?" not in card_text(lis), timeout=3)


def walk_view_from_alert(lis: Window, mon: Window, lis_api: Api, monitor_id: str, result: dict) -> None:
    """A crying alert's "Open live view" on the listener opens a video stream of its monitor; End ends it."""
    mon.use()
    mon.wait_screen("settings")
    mon.click("Test: crying")
    lis.use()
    lis.wait("the crying alert on the listener", lambda: lis.snapshot()["alertShown"], timeout=5, poll=0.05)
    lis.capture("alert-crying", "alert-crying")
    t0 = time.monotonic()
    lis.click("Open live view")
    lis.wait("the alert closed here", lambda: lis.snapshot()["alertShown"] is None, timeout=3)
    lis.wait_screen("monitors")
    player = lis.wait("a video stream of the alert's monitor", lambda: next(
        (p for p in lis.snapshot()["players"] if p["monitorId"] == monitor_id and p["mediaType"] == "audio_video"
         and p["state"] == "playing" and p["videoWidth"] > 0), None), timeout=STREAM_LIMIT_S)
    result["open_live_view_ms"] = ms_since(t0)
    lis.capture("open-live-view", "video")
    walk_end(lis, lis_api, player["sessionId"], result, "ended")


def walk_listen(lis: Window, lis_api: Api, result: dict) -> None:
    """ "Listen": sound only; the listener's api/state says it plays (the page told cribcall once packets came)."""
    lis.use()
    t0 = time.monotonic()
    lis.press(lis.control_in("article.monitor-card", "Listen"))
    player = lis.wait("the sound playing", lambda: next(
        (p for p in lis.snapshot()["players"] if p["mediaType"] == "audio" and p["state"] == "playing"), None),
        timeout=STREAM_LIMIT_S)
    lis.wait("the sound stream playing in the listener's api/state", lambda: any(
        s["sessionId"] == player["sessionId"] and s["state"] == "playing" for s in lis_api.state()["streams"]),
        timeout=10)
    lis.wait("the sound meter moving", lambda: lis.snapshot()["players"][0]["level"] > 0, timeout=5)
    stats = lis.stats()["players"][player["sessionId"]]
    result["listen"] = {"ms": ms_since(t0), "audio_packets": stats["audio"]["packetsReceived"],
                        "video": stats["video"], "meter_level": lis.snapshot()["players"][0]["level"]}
    if stats["video"]:
        raise CheckFailed("listen", f"a sound-only stream brought video: {stats['video']}")
    lis.capture("listen", "video")
    walk_end(lis, lis_api, player["sessionId"], result, "listen-ended")


def press_test_alert(mon: Window) -> None:
    """The monitor page's Settings → "Test: face covered"."""
    mon.use()
    mon.click("Settings", tags=("a",))
    mon.wait_screen("settings")
    mon.click("Test: face covered")


def monitoring_word(mon: Window) -> str:
    return normalise(mon.d.find_element(By.ID, "monitoring-title").text)


def walk_monitoring_switch(lis: Window, mon: Window, lis_api: Api, mon_api: Api, result: dict) -> None:
    mon.use()
    if mon.snapshot()["alertShown"]:  # the crying alert of an earlier step, still open on the monitor
        mon.click("Dismiss")
    mon.d.get(mon.d.current_url.split("#")[0] + "#/monitor")
    mon.wait_screen("monitor")
    mon.wait("Monitoring: ON", lambda: monitoring_word(mon) == "monitoring: on")
    mon.click("Stop monitoring")
    mon.wait("Stop monitoring? asked first", lambda: mon.d.find_element(By.ID, "monitoring-confirm").is_displayed())
    mon.screenshot("stop-monitoring-asked")
    t0 = time.monotonic()
    mon.click("Yes, stop monitoring")
    mon.wait("Monitoring: OFF", lambda: monitoring_word(mon) == "monitoring: off")
    if mon_api.state()["settings"].get("monitoring") is not False:
        raise CheckFailed("monitoring off", "the monitor's api/state still has monitoring on")
    mon.screenshot("monitoring-off")
    lis.use()
    lis.wait("the listener told that monitoring is off", lambda: lis_api.state()["monitors"][0].get("monitoring")
             == "off", timeout=5, poll=0.05)
    result["monitoring_off_told_ms"] = ms_since(t0)
    lis.wait("the card says Monitoring: OFF", lambda: "monitoring: off" in card_text(lis))
    dialog = lis.wait("the notice on the listener", lambda: lis.snapshot()["alertShown"] and next(
        iter(lis.d.find_elements(By.CSS_SELECTOR, "[role=alertdialog]")), None))
    title = f"Monitoring is off at {lis_api.state()['monitors'][0]['name']}"
    if dialog.accessible_name != title:
        raise CheckFailed("monitoring off", f"the notice is named {dialog.accessible_name!r}, expected {title!r}")
    lis.screenshot("monitoring-off-notice")
    lis.click("OK")
    lis.wait("the notice closed", lambda: lis.snapshot()["alertShown"] is None, timeout=5)
    for name in ("Listen", "Video"):
        buttons = [e for e in lis.d.find_elements(By.CSS_SELECTOR, "article.monitor-card button")
                   if e.is_displayed() and e.accessible_name == name]
        if not buttons or any(e.is_enabled() for e in buttons):
            raise CheckFailed("monitoring off", f"{name} is missing or can be pressed while monitoring is off")
    lis.screenshot("monitoring-off-card")

    press_test_alert(mon)
    refusal = mon.wait("the test alert refused, saying why", lambda: (e := mon.d.find_element(By.ID, "trigger-error"))
                       .is_displayed() and "monitoring is turned off" in normalise(e.text) and e.text, timeout=5)
    result["trigger_while_off"] = refusal
    # The refusal is the browser's 409, which Chromium logs as a failed resource: expected here, and only this one.
    mon.collect_console()
    mon.console = [e for e in mon.console if not (
        e.get("level") == "SEVERE" and "api/trigger" in e.get("message", "") and "409" in e.get("message", ""))]
    if lis.use().snapshot()["alertShown"]:
        raise CheckFailed("monitoring off", "an alert reached the listener while monitoring was off")

    mon.use()
    mon.d.get(mon.d.current_url.split("#")[0] + "#/monitor")
    mon.wait_screen("monitor")
    t0 = time.monotonic()
    mon.click("Start monitoring")
    mon.wait("Monitoring: ON again", lambda: monitoring_word(mon) == "monitoring: on")
    lis.use()
    lis.wait("the listener told that monitoring is on", lambda: lis_api.state()["monitors"][0].get("monitoring")
             == "on", timeout=5, poll=0.05)
    result["monitoring_on_told_ms"] = ms_since(t0)
    lis.wait("the card back to Connected", lambda: "monitoring: off" not in card_text(lis)
             and "connected" in card_text(lis))
    still_open = [a for a in lis_api.state()["alerts"] if a.get("kind") == "monitoring_off" and a["state"] == "open"]
    if still_open:
        raise CheckFailed("monitoring on", f"the 'monitoring off' notice is still open: {still_open}")
    press_test_alert(mon)
    lis.use()
    lis.wait("an alert on the listener again", lambda: lis.snapshot()["alertShown"], timeout=5, poll=0.05)
    lis.click("Mark as okay")
    lis.wait("the alert closed on the listener", lambda: lis.snapshot()["alertShown"] is None, timeout=5)
    mon.use()
    mon.wait("the monitor's own alert closed after the listener's okay",
             lambda: mon.snapshot()["alertShown"] is None, timeout=5)


def walk_end(lis: Window, lis_api: Api, session: str, result: dict, shot: str = "end") -> None:
    lis.use()
    if not lis.snapshot()["players"]:
        raise CheckFailed("end", "the stream stopped before End was pressed")
    t0 = time.monotonic()
    lis.press(lis.control_in("article.monitor-card", "End"))
    lis.wait("the player gone", lambda: not lis.snapshot()["players"]
             and not lis.d.find_elements(By.CSS_SELECTOR, ".player"), timeout=10)
    lis.wait("no stream in the listener's api/state", lambda: not lis_api.state()["streams"], timeout=10)
    result.setdefault("end_ms", []).append(ms_since(t0))
    lis.control_in("article.monitor-card", "Video", timeout=5)
    lis.capture(shot, "monitors")


# ----------------------------------------------------------------------------------------------------------------
# Environment and the run


def check_environment(args) -> tuple[Api, Api]:
    web_app.check_browser_tools(args)
    if not PROHIBITED:
        raise EnvironmentProblem("SafetyWording.prohibitedTerms was not found: run this script from the repository")
    apis = []
    for role, url in (("monitor", args.monitor_url), ("listener", args.listener_url)):
        try:
            status, body = http(url, timeout=5)
        except (urllib.error.URLError, OSError) as e:
            raise EnvironmentProblem(f"the {role}'s app {url} cannot be loaded: {e}") from e
        if status != 200 or b"app.js" not in body:
            raise EnvironmentProblem(f"{url} does not look like the app (status {status})")
        api = Api(url)
        state = api.state()
        if state.get("role") != role:
            raise EnvironmentProblem(f"{url} is a {state.get('role')!r}, expected the {role}")
        apis.append(api)
    mon_api, lis_api = apis
    mon = mon_api.state()
    if not mon.get("camera", {}).get("watched"):
        raise EnvironmentProblem("the monitor runs without --safety: the walk needs its camera")
    if not mon["monitor"].get("port") or not mon["monitor"].get("fingerprint"):
        raise EnvironmentProblem("the monitor's state has no port or fingerprint yet")
    if lis_api.state()["monitors"]:
        raise EnvironmentProblem("the listener has paired monitors already: start cribcall listen with a new, empty "
                                 "--data-dir")
    return mon_api, lis_api


def run(args, browser: Browser, result: dict, on_ready) -> None:
    mon_api, lis_api = check_environment(args)
    t0 = time.monotonic()
    driver = make_driver(args, browser)
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    result["timings_ms"] = timings = {"launch_browser": ms_since(t0)}
    mon = Window(driver, args, mon_api, result, open_window(driver, True), "M")
    lis = Window(driver, args, lis_api, result, open_window(driver, False), "L")
    result["viewports"] = {
        w.prefix: w.use().d.execute_script("return [innerWidth, innerHeight, document.visibilityState]")
        for w in (mon, lis)}
    log("browser up", result["browser"], "viewports", result["viewports"])
    on_ready()

    def step(name, fn):
        web_app.begin_step(name)
        t = time.monotonic()
        out = fn()
        timings[name] = ms_since(t)
        for w in (mon, lis):
            w.use().check_console(name)
        return out

    step("monitor_setup", lambda: setup_monitor(mon, args, mon_api, result))
    port, fingerprint_shown, name = step("monitor_address", lambda: read_monitor_address(mon, mon_api, result))
    step("listener_start", lambda: walk_listener_start(lis, args))
    step("add_by_address", lambda: walk_add_by_address(lis, port, fingerprint_shown, name, result))
    step("pin", lambda: walk_pin(lis, mon, lis_api, result))
    monitor_id = step("monitors", lambda: walk_monitors(lis, lis_api, result))
    session = step("video", lambda: walk_video(lis, lis_api, result))
    step("alert", lambda: walk_alert(lis, mon, mon_api, monitor_id, result))
    step("listener_pages", lambda: walk_listener_pages(lis, lis_api, result))
    step("landscape", lambda: web_app.check_landscape(lis.use(), [
        ("/monitors", "monitors", ["Monitors", "Nursery", "Kept live", "End"]), ("/activity", "activity", ["Activity"]),
        ("/settings", "listener-settings", ["Settings", "When a noise is noticed"]),
    ], result))
    step("end", lambda: walk_end(lis, lis_api, session, result))
    step("view_from_alert", lambda: walk_view_from_alert(lis, mon, lis_api, monitor_id, result))
    step("listen", lambda: walk_listen(lis, lis_api, result))
    step("monitoring_switch", lambda: walk_monitoring_switch(lis, mon, lis_api, mon_api, result))
    step("pair_by_code", lambda: walk_pair_by_code(lis, mon, lis_api, mon_api, port, result))
    result["listener"] = {"name": lis.args.listener_name, "paired_on_monitor": [
        (x["name"], x["connected"]) for x in mon_api.state()["listeners"]]}
    result["console_entries"] = len(mon.console) + len(lis.console)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--monitor-url", help="the monitor's app, secret included: http://127.0.0.1:PORT/s/SECRET/")
    ap.add_argument("--listener-url", help="the listener's app, secret included")
    ap.add_argument("--listener-name", default="Mum", help="the --name the listener runs with (the alert's 'by')")
    ap.add_argument("--baby-name", default="Liam", help="the baby's name entered in a fresh monitor's setup")
    ap.add_argument("--timeout", type=float, default=180,
                    help="hard limit for each step of the walk, from when it starts, seconds")
    ap.add_argument("--launch-timeout", type=float, default=120, help="hard limit for starting the browser, s")
    ap.add_argument("--step-timeout", type=float, default=20, help="limit for each wait, seconds")
    ap.add_argument("--artifacts", help="directory for the screenshots (and, on failure, the console log)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    ap.add_argument("--write-tone", metavar="WAV", help="only write the steady test tone to WAV and exit")
    args = ap.parse_args()
    if args.write_tone:
        write_tone(args.write_tone)
        print(json.dumps({"event": "tone", "file": args.write_tone}), flush=True)
        return 0
    if not args.monitor_url or not args.listener_url:
        ap.error("--monitor-url and --listener-url are required")
    for key in ("monitor_url", "listener_url"):
        if not getattr(args, key).endswith("/"):
            setattr(args, key, getattr(args, key) + "/")
    args.url = args.monitor_url  # web_app.py's helpers read it
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver

    return web_app.supervise(args, {"ok": False}, run, save_failure)


def save_failure(args, browser: Browser, result: dict) -> None:
    """Each window's own view, a screenshot and the console, for the failure report (best effort)."""
    d = browser.driver
    try:
        handles = d.window_handles
    except Exception:  # noqa: BLE001 - the browser may be gone
        return
    result["pages"] = {}
    for index, handle in enumerate(handles):
        tag = "monitor" if index == 0 else "listener"
        try:
            d.switch_to.window(handle)
            result["pages"][tag] = d.execute_script("return window.cribalert ? window.cribalert.snapshot() : null")
            if args.artifacts:
                d.save_screenshot(str(Path(args.artifacts) / f"failure-{tag}.png"))
                with open(Path(args.artifacts) / f"console-{tag}.json", "w") as f:
                    json.dump(d.get_log("browser"), f, indent=1)
        except Exception as e:  # noqa: BLE001 - best effort on the failure path
            log("artifacts failed:", tag, e)


if __name__ == "__main__":
    sys.exit(main())
