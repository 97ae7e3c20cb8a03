#!/usr/bin/env python3
"""Writes synthetic nursery audio as raw S16LE mono PCM to stdout: quiet room noise with a cry-like burst
(a warbling 450 Hz tone with harmonics) of 3 s every 10 s — the same pattern as the monitor's `test:cry`
source. Usage: cry-audio.py [seconds] [sample_rate]"""
import math, random, struct, sys

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
rate = int(sys.argv[2]) if len(sys.argv) > 2 else 48000
rng = random.Random(7)
out = sys.stdout.buffer
block = bytearray()
phase_acc = 0.0  # the warble's phase is accumulated, so its frequency stays at 450 ± 60 Hz
for n in range(int(seconds * rate)):
    t = n / rate
    sample = rng.gauss(0.0, 0.003)  # about -50 dBFS of room noise
    phase = t % 10.0
    if 2.0 <= phase < 5.0:  # the cry: 3 s, with a slow warble and a soft attack
        envelope = min(1.0, (phase - 2.0) * 8) * min(1.0, (5.0 - phase) * 8)
        sample += envelope * 0.25 * (math.sin(phase_acc) + 0.4 * math.sin(2 * phase_acc))
    phase_acc += 2 * math.pi * (450 + 60 * math.sin(2 * math.pi * 5 * t)) / rate
    block += struct.pack("<h", max(-32768, min(32767, int(sample * 32767))))
    if len(block) >= 65536:
        out.write(block)
        block.clear()
out.write(block)
