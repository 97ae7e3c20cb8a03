#!/usr/bin/env python3
"""Listening on toukan-server's review page in a real browser: a memory plays on across the page's refreshes, and
seeks.

    review_page.py --url http://127.0.0.1:P/ --memory ID [--play-seconds 21] [--artifacts DIR]

The server must already run and hold the memory, ready (processed) and longer than --play-seconds + 10 s. Nothing is
started here but one headless Debian Chromium (/usr/bin/chromium + /usr/bin/chromedriver); the CribAlert walk's
browser helpers (Tests/Interop/cribalert/web_app.py) are imported, not copied.

1. The page lists the memory, ready, with a player; the browser can play AAC in MP4.
2. Play: the player starts, and for --play-seconds (the page refreshes its list every 10 s, so at least two
   refreshes) its time only moves forward, with the real time, and the element is never replaced or paused.
3. Seek back to 5 s: the player gets there (a byte range, 206) and plays on from there.

Prints one JSON line on stdout ({"ok": true, …}); progress on stderr. Exit status: 0 passed, 1 a check failed, 2
the environment is not usable.

Needs: apt-get install chromium chromium-driver; pip install selenium==4.51.0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cribalert"))
from web_app import (  # noqa: E402 - the shared browser helpers
    CheckFailed, EnvironmentProblem, log, make_driver, ms_since, supervise,
)


def player(driver, memory: str) -> str:
    return f'document.querySelector(\'li[data-id="{memory}"] audio\')'


def wait_for(what: str, timeout: float, probe):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = probe()
        if last:
            return last
        time.sleep(0.2)
    raise CheckFailed("wait", f"{what}: not within {timeout:.0f} s (last: {last!r})")


def run(args: argparse.Namespace, browser, result: dict, on_ready) -> None:
    t0 = time.monotonic()
    driver = make_driver(args, browser)
    caps = driver.capabilities
    result["browser"] = f"{caps.get('browserName')} {caps.get('browserVersion')}"
    result["timings_ms"] = timings = {"launch_browser": ms_since(t0)}
    on_ready()

    driver.get(args.url)
    audio = player(driver, args.memory)
    wait_for("the memory listed, ready", 30, lambda: driver.execute_script(
        f"const li = document.querySelector('li[data-id=\"{args.memory}\"]');"
        "return li && li.querySelector('.badge').textContent === 'ready' && li.querySelector('audio') !== null"))
    playable = driver.execute_script("return document.createElement('audio').canPlayType('audio/mp4; codecs=\"mp4a.40.2\"')")
    if not playable:
        raise EnvironmentProblem("this Chromium cannot play AAC in MP4 (canPlayType says no)")
    result["can_play_aac"] = playable

    # Mark the element: a replaced player would not carry the mark.
    driver.execute_script(f"{audio}.dataset.mark = 'listening'")
    started = driver.execute_async_script(
        f"const done = arguments[arguments.length - 1]; const a = {audio};"
        "a.play().then(() => done('playing'), (e) => done('refused: ' + e.message));")
    if started != "playing":
        raise CheckFailed("play", f"the player did not start: {started}")
    wait_for("the player's time moving", 15, lambda: driver.execute_script(f"return {audio}.currentTime > 0.3"))
    timings["started"] = ms_since(t0)

    samples = []
    begin_wall = time.monotonic()
    begin_time = driver.execute_script(f"return {audio}.currentTime")
    refreshes_seen = set()
    while time.monotonic() - begin_wall < args.play_seconds:
        time.sleep(1)
        state = driver.execute_script(
            f"const a = {audio}; return a ? [a.currentTime, a.paused, a.ended, a.dataset.mark || '',"
            " document.getElementById('status').textContent] : null")
        if state is None:
            raise CheckFailed("listen", "the memory's player is gone from the page")
        current, paused, ended, mark, status = state
        samples.append(round(current, 2))
        refreshes_seen.add(status)
        if mark != "listening":
            raise CheckFailed("listen", f"the player was replaced after {current:.1f} s (a refresh rebuilt it)")
        if paused or ended:
            raise CheckFailed("listen", f"the player stopped at {current:.1f} s (paused {paused}, ended {ended})")
        if len(samples) > 1 and current < samples[-2]:
            raise CheckFailed("listen", f"the player went back from {samples[-2]} s to {current} s: {samples}")
    played = samples[-1] - begin_time
    wall = time.monotonic() - begin_wall
    result["listened"] = {"seconds": round(played, 1), "wall_seconds": round(wall, 1), "samples": samples}
    if played < args.play_seconds - 3:
        raise CheckFailed("listen", f"{played:.1f} s played in {wall:.1f} s: the player did not keep up: {samples}")
    log(f"played {played:.1f} s across the page's refreshes")

    seeked = driver.execute_async_script(
        f"const done = arguments[arguments.length - 1]; const a = {audio};"
        "a.addEventListener('seeked', () => done(a.currentTime), { once: true }); a.currentTime = 5;")
    if abs(seeked - 5) > 0.5:
        raise CheckFailed("seek", f"the player went to {seeked} s, not 5 s")
    wait_for("playing on after the seek", 10, lambda: driver.execute_script(
        f"const a = {audio}; return !a.paused && a.currentTime > 6"))
    result["seeked_to"] = round(seeked, 2)
    timings["total"] = ms_since(t0)
    console = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if console:
        raise CheckFailed("console", f"the page logged errors: {console[:3]}")


def save_failure(args: argparse.Namespace, browser, result: dict) -> None:
    if not args.artifacts or browser.driver is None:
        return
    try:
        browser.driver.save_screenshot(str(Path(args.artifacts) / "failure.png"))
    except Exception as e:  # noqa: BLE001 - best effort on the failure path
        log("screenshot failed:", e)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--memory", required=True)
    parser.add_argument("--play-seconds", type=float, default=21)
    parser.add_argument("--artifacts", default="")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--launch-timeout", type=float, default=60)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--step-timeout", type=float, default=30)
    args = parser.parse_args()
    return supervise(args, {"ok": False}, run, save_failure)


if __name__ == "__main__":
    sys.exit(main())
