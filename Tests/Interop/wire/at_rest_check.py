#!/usr/bin/env python3
"""What a CribCall session left behind: only what the user asked for, no media, no secrets in the logs.

    at_rest_check.py --data-dir DIR:NAME[,NAME…] [--data-dir …] --log FILE [--log …]
                     [--secret LABEL=VALUE …] [--display-event EVENT …]

Python 3.11 standard library only. Prints ONE JSON line, {"event": "summary", "ok": …, "failures": […], …}; exit
status 0 when every rule holds, 1 when one does not, 2 when the input cannot be read.

1. Files. Each data directory DIR holds exactly the files NAMEs may name (the identity, the database and its
   journal, what --record asked for) and nothing else, in any subdirectory. Private keys (any PEM file with a
   PRIVATE KEY block) must be readable by their owner only (0600).
2. No media in the database. In every SQLite database of the directories (`*.sqlite`, its -wal and -shm too):
   no cell is larger than 64 KiB (a camera picture or a second of sound would be), no BLOB starts like a picture
   or sound, and the raw bytes of the files — free pages, the write-ahead log — contain no picture, audio or
   container signature (PNG, JPEG/JFIF/Exif, RIFF/WAVE, Ogg, OpusHead, FLAC, MP4 `ftyp`, Matroska/WebM EBML).
3. No secrets in the logs. Every line of every --log file (stdout and stderr of every process of the session: the
   --json events and the log lines) is searched for each --secret (the PIN, the QR code's pairingToken) and for the
   private key material of every PEM file in the data directories: each base64 line of the key, the DER in hex,
   and its last 32 bytes (the raw key) in hex, base64 and base64url. A secret may appear only in a --json line
   whose "event" is a --display-event (the monitor's "pin" and "qr" events are how the PIN and the code are shown
   to the parent: that is their purpose); anywhere else — before or after pairing — is a failure. A PIN (digits)
   counts only as a whole number, not inside a longer run of digits (a timestamp). The --secrets must not be kept
   in the database or key files either.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sqlite3
import stat
import sys
from pathlib import Path

MAX_CELL_BYTES = 64 * 1024
SIGNATURES = {
    "PNG": re.compile(rb"\x89PNG\r\n\x1a\n"),
    "JPEG/JFIF": re.compile(rb"\xff\xd8\xff\xe0\x00\x10JFIF"),
    "JPEG": re.compile(rb"\xff\xd8\xff[\xdb\xe1\xee]"),
    "Exif": re.compile(rb"Exif\x00\x00"),
    "RIFF/WAVE": re.compile(rb"RIFF....WAVE", re.DOTALL),
    "Ogg": re.compile(rb"OggS\x00"),
    "OpusHead": re.compile(rb"OpusHead"),
    "FLAC": re.compile(rb"fLaC\x00\x00\x00\x22"),
    "MP4 ftyp": re.compile(rb"ftyp(isom|iso[2-9]|mp4[12]|M4A |dash|avc1)"),
    "Matroska/WebM": re.compile(rb"\x1a\x45\xdf\xa3"),
}


def check_files(directory: Path, allowed: set[str], failures: list[str]) -> list[str]:
    found = []
    for path in sorted(directory.rglob("*")):
        if path.is_dir():
            continue
        relative = str(path.relative_to(directory))
        found.append(relative)
        if relative not in allowed:
            failures.append(f"{directory}: an unexpected file {relative!r} ({path.stat().st_size} bytes)")
        if path.suffix == ".pem" and b"PRIVATE KEY" in path.read_bytes():
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o077:
                failures.append(f"{path}: a private key readable by others (mode {mode:04o}, should be 0600)")
    return found


def check_database(path: Path, failures: list[str]) -> dict:
    report: dict = {"tables": {}, "largestCell": None}
    largest = (0, "")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            cursor = connection.execute(f'SELECT * FROM "{table}"')
            columns = [d[0] for d in cursor.description]
            rows = 0
            for row in cursor:
                rows += 1
                for column, value in zip(columns, row):
                    size = len(value) if isinstance(value, (bytes, str)) else 0
                    if size > largest[0]:
                        largest = (size, f"{table}.{column}")
                    if isinstance(value, bytes):
                        for name, pattern in SIGNATURES.items():
                            if pattern.match(value):
                                failures.append(f"{path}: {table}.{column} holds a {name} blob ({size} bytes)")
            report["tables"][table] = rows
    finally:
        connection.close()
    report["largestCell"] = {"bytes": largest[0], "column": largest[1]}
    if largest[0] > MAX_CELL_BYTES:
        failures.append(f"{path}: {largest[1]} holds {largest[0]} bytes in one cell (more than a record needs)")
    return report


def scan_raw(path: Path, failures: list[str]) -> None:
    data = path.read_bytes()
    for name, pattern in SIGNATURES.items():
        match = pattern.search(data)
        if match:
            failures.append(f"{path}: a {name} signature at byte {match.start()} (media in the database file)")


def key_needles(pem: bytes) -> list[tuple[str, str]]:
    """Text forms of a PEM file's private keys that a log line must never contain."""
    needles = []
    for block in re.findall(rb"-----BEGIN ([A-Z ]*PRIVATE KEY)-----\s*(.*?)-----END", pem, re.DOTALL):
        lines = [line.strip().decode() for line in block[1].splitlines() if line.strip()]
        needles += [("a line of a private key (base64)", line) for line in lines if len(line) >= 16]
        der = base64.b64decode("".join(lines))
        raw = der[-32:]
        needles += [("a private key (DER in hex)", der.hex()), ("a raw private key (hex)", raw.hex()),
                    ("a raw private key (base64)", base64.b64encode(raw).decode().rstrip("=")),
                    ("a raw private key (base64url)", base64.urlsafe_b64encode(raw).decode().rstrip("="))]
    needles.append(("a PEM private key block", "PRIVATE KEY-----"))
    return needles


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", action="append", default=[], metavar="DIR:NAME[,NAME…]", required=True)
    parser.add_argument("--log", action="append", default=[], metavar="FILE")
    parser.add_argument("--secret", action="append", default=[], metavar="LABEL=VALUE")
    parser.add_argument("--display-event", action="append", default=[], metavar="EVENT")
    arguments = parser.parse_args()

    failures: list[str] = []
    summary: dict = {"event": "summary", "dataDirs": {}, "databases": {}}
    needles: list[tuple[str, str]] = []
    try:
        for spec in arguments.data_dir:
            directory, _, names = spec.partition(":")
            root = Path(directory)
            if not root.is_dir():
                raise OSError(f"{directory} is not a directory")
            files = check_files(root, {n for n in names.split(",") if n}, failures)
            summary["dataDirs"][directory] = files
            for relative in files:
                path = root / relative
                if relative.endswith(".sqlite"):
                    summary["databases"][str(path)] = check_database(path, failures)
                if ".sqlite" in relative:
                    scan_raw(path, failures)
                if relative.endswith(".pem"):
                    needles += key_needles(path.read_bytes())
        secrets = []
        for spec in arguments.secret:
            label, _, value = spec.partition("=")
            if len(value) < 4:
                raise ValueError(f"the secret {label} is too short to search for: {value!r}")
            pattern = re.compile(rf"(?<!\d){re.escape(value)}(?!\d)" if value.isdigit() else re.escape(value))
            secrets.append((label, pattern))
        key_patterns = [(label, re.compile(re.escape(value))) for label, value in needles]
        lines_checked = 0
        shown: dict = {}
        for log in arguments.log:
            for number, line in enumerate(Path(log).read_text(errors="replace").splitlines(), 1):
                lines_checked += 1
                event = None
                if line.startswith("{"):
                    try:
                        event = json.loads(line).get("event")
                    except (ValueError, AttributeError):
                        event = None
                for label, pattern in secrets + key_patterns:
                    if not pattern.search(line):
                        continue
                    if event in arguments.display_event and (label, pattern) in secrets:
                        shown[label] = shown.get(label, 0) + 1
                        continue
                    failures.append(f"{Path(log).name}:{number}: {label} in a log line: {line[:160]}")
        # Nor are the pairing secrets kept on disk: the database (its journal too) and the key files.
        stored = [path for directory in summary["dataDirs"] for path in
                  (Path(directory) / name for name in summary["dataDirs"][directory])
                  if ".sqlite" in path.name or path.suffix == ".pem"]
        for path in stored:
            data = path.read_bytes()
            for label, pattern in secrets:
                if re.search(pattern.pattern.encode(), data):
                    failures.append(f"{path}: {label} is kept in the file")
        summary.update(linesChecked=lines_checked, secretsShownOnlyBy=shown, keyNeedles=len(needles),
                       filesSearchedForSecrets=len(stored))
    except (OSError, ValueError, sqlite3.Error) as error:
        print(json.dumps({"event": "error", "error": str(error)}), flush=True)
        return 2
    summary["ok"] = not failures
    summary["failures"] = failures
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
