#!/usr/bin/env python3
"""Reads a recording with FFmpeg (through PyAV), an implementation independent of the GStreamer that wrote it.

Prints one JSON object: the streams (type, codec), the decoded audio (seconds, sample rate, channels, codec
profile, the RMS level and zero-crossing frequency of its last second, and the zero-crossing frequency of the
second in its middle; first channel) and the decoded video (frames, sizes). Matroska, WAV and MP4/M4A alike.
Used by Tests/CribCall/Adapters/MediaTests/RecordingTests.swift and Tests/Toukan/ToukanTestSupport.
"""
import argparse
import json
import math
import struct
import sys

import av


def audio(path):
    samples = []
    rate = None
    channels = None
    with av.open(path) as container:
        if not container.streams.audio:
            return None
        profile = container.streams.audio[0].codec_context.profile
        for frame in container.decode(audio=0):
            rate = frame.sample_rate
            channels = len(frame.layout.channels)
            # Float planar (Opus) or packed; the first channel either way, without numpy.
            plane = bytes(frame.planes[0])
            fmt = frame.format.name
            if fmt in ("fltp", "flt"):
                values = struct.unpack(f"<{len(plane) // 4}f", plane)
                step = 1 if fmt == "fltp" else len(frame.layout.channels)
                samples.extend(values[::step][: frame.samples])
            elif fmt in ("s16p", "s16"):
                values = struct.unpack(f"<{len(plane) // 2}h", plane)
                step = 1 if fmt == "s16p" else len(frame.layout.channels)
                samples.extend(v / 32768 for v in values[::step][: frame.samples])
            else:
                raise SystemExit(f"unexpected audio sample format {fmt}")
    tail = samples[-rate:] if rate else []
    rms = math.sqrt(sum(v * v for v in tail) / len(tail)) if tail else 0.0
    crossings = sum(1 for a, b in zip(tail, tail[1:]) if (a < 0) != (b < 0))
    # The second in the middle: away from an encoder's priming and padding at either end.
    start = max(0, (len(samples) - rate) // 2) if rate else 0
    middle = samples[start : start + rate] if rate else []
    middle_crossings = sum(1 for a, b in zip(middle, middle[1:]) if (a < 0) != (b < 0))
    return {
        "seconds": len(samples) / rate if rate else 0,
        "sample_rate": rate,
        "channels": channels,
        "profile": profile,
        "rms": rms,
        "frequency": crossings / 2 * (rate / len(tail)) if tail else 0,
        "middle_frequency": middle_crossings / 2 * (rate / len(middle)) if middle else 0,
    }


def video(path):
    frames = 0
    sizes = []
    with av.open(path) as container:
        if not container.streams.video:
            return None
        for frame in container.decode(video=0):
            frames += 1
            size = f"{frame.width}x{frame.height}"
            if size not in sizes:
                sizes.append(size)
    return {"frames": frames, "sizes": sizes}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    path = parser.parse_args().file
    try:
        with av.open(path) as container:
            streams = [{"type": s.type, "codec": s.codec_context.name} for s in container.streams]
            container_format = container.format.name
        result = {"format": container_format, "streams": streams, "audio": audio(path), "video": video(path)}
    except av.error.FFmpegError as error:
        result = {"error": str(error)}
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
