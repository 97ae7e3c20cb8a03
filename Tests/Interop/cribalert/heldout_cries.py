#!/usr/bin/env python3
"""Held-out evaluation set for the baby monitor's infant-cry detector.

    heldout_cries.py OUTDIR [--per-category N]      (N defaults to 6)

Writes N clips per category (8 s, 16 kHz, mono, 16-bit PCM WAV) into OUTDIR, and OUTDIR/manifest.json: a JSON
list of {"file": "name.wav", "category": "...", "cry": true|false}. Every clip has a fixed seed, so each run
writes byte-identical files. Python standard library only; espeak-ng (/usr/bin/espeak-ng) speaks the speech,
the sibling and some of the singing.

This set is for EVALUATION ONLY. It is never used to tune or choose detector parameters. Its generator was written
independently of the detector and of the detector's own test set: the sounds follow published descriptions of
infant cries and household sounds, not any threshold in this repository. Keep it that way: if a clip here fails,
do not tune against it; write a new held-out generation instead.

The cries use a source-filter model: a Rosenberg glottal flow pulse (with cycle-to-cycle jitter and shimmer and
flow-modulated breath noise) through a cascade of four two-pole formant resonators with wide, infant-like
bandwidths (F1 ~0.9-1.3 kHz, F2 ~2.2-3.2 kHz), a lip-radiation difference, onset /w/-like formant glides, and
inhalation noise in the gaps between phonations.

Cries (cry: true)
    cry-falling         phonations of 0.6-1.4 s whose pitch starts high (450-600 Hz) and falls (to 300-380 Hz).
    cry-hyperphonation  ordinary cry phonations with a sudden jump to 1000-1500 Hz for part of each phonation.
    cry-low             an older baby: fundamental 280-380 Hz with a flat contour, lower formants.
    cry-reverb          a cry heard from another part of a room: low-passed, quieter, with Schroeder reverb
                        (damped combs + allpasses) of RT60 0.4-0.8 s.
    cry-over-machine    a cry over a white/pink/brown noise machine at 5-10 dB SNR.
    cry-over-tv         a cry over TV speech at about 5 dB SNR.
Not cries (cry: false)
    tv-speech           espeak-ng speech in several voices and speeds through a 200-4000 Hz "TV speaker" band-pass,
                        with room reverb and, in some clips, a music bed.
    sibling             an older child talking, shouting and laughing: high-pitched child-like espeak-ng voices and
                        synthetic laughter ("ha" syllables at 300-450 Hz, about 5 a second).
    singing             a parent singing a lullaby: legato sustained vowels (200-500 Hz, 0.4-1.2 s notes) with
                        5-6 Hz vibrato of 2-3 %, through adult formants; some clips add espeak-ng "sung" lines.
    noise-machine       steady white, pink (Voss-McCartney), brown noise and an "ocean" with a 0.1-0.2 Hz swell.
    household           a kettle whistle, microwave beeps, a vacuum cleaner and a two-tone phone trill.

Levels are varied per clip (most between -30 and -14 dBFS RMS) and never clip (hard limit at +-0.98 full scale).
SNRs are computed over the whole clip. Every clip carries a faint room-tone floor (about -62 dBFS).
"""

import argparse
import functools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
import wave
import zlib
from array import array
from dataclasses import dataclass
from xml.sax.saxutils import escape

SR = 16000
CLIP_SECONDS = 8.0
N = int(SR * CLIP_SECONDS)
LIMIT = 0.98
BLOCK = 64  # control-rate block: pitch, amplitude and formants are updated every 4 ms
TABLE_SIZE = 4096


def _make_noise_table(bits=18, seed=7):
    rng = random.Random(seed)
    return [rng.random() * 2.0 - 1.0 for _ in range(1 << bits)]


NOISE = _make_noise_table()  # shared uniform white noise for breath; index with (k & NOISE_MASK)
NOISE_MASK = len(NOISE) - 1


# ---------------------------------------------------------------- basic helpers

def db_to_gain(db):
    return 10.0 ** (db / 20.0)


def rms(x):
    return math.sqrt(sum(v * v for v in x) / len(x)) if x else 0.0


def peak(x):
    return max(abs(min(x)), abs(max(x))) if x else 0.0


def scaled(x, gain):
    return [v * gain for v in x]


def blocks(seconds):
    return max(1, int(round(seconds * SR / BLOCK)))


def fit(x, n=N):
    """Truncate or zero-pad to n samples."""
    return x[:n] if len(x) >= n else x + [0.0] * (n - len(x))


def add_into(dst, src, at=0, gain=1.0):
    """Adds src (times gain) into dst starting at sample `at`, dropping what falls outside dst."""
    start = max(0, at)
    stop = min(len(dst), at + len(src))
    for i in range(start, stop):
        dst[i] += gain * src[i - at]


def fade_edges(x, seconds=0.005):
    m = min(len(x) // 2, int(seconds * SR))
    for i in range(m):
        w = 0.5 - 0.5 * math.cos(math.pi * i / m)
        x[i] *= w
        x[-1 - i] *= w
    return x


def set_rms(x, dbfs):
    """Scales x to an RMS of `dbfs`; if that would push the peak past LIMIT, scales to the limit instead."""
    level = rms(x)
    if level == 0.0:
        return list(x)
    gain = db_to_gain(dbfs) / level
    top = peak(x) * gain
    if top > LIMIT:
        gain *= LIMIT / top
    return scaled(x, gain)


def mix_at_snr(signal, noise, snr_db):
    """signal + noise, the noise scaled so that rms(signal) / rms(noise) = snr_db (whole-clip RMS)."""
    gain = rms(signal) / (rms(noise) * db_to_gain(snr_db))
    return [s + gain * v for s, v in zip(signal, noise)]


def random_curve(count, rng, depth, every):
    """A smooth random multiplier around 1.0 (+-depth): random knots every `every` points, linearly joined."""
    knots = [rng.uniform(-depth, depth) for _ in range(count // every + 2)]
    out = []
    for i in range(count):
        j, frac = divmod(i, every)
        out.append(1.0 + knots[j] + (knots[j + 1] - knots[j]) * frac / every)
    return out


def write_wav(path, x):
    pcm = array("h", [int(32767.0 * (LIMIT if v > LIMIT else -LIMIT if v < -LIMIT else v)) for v in x])
    if sys.byteorder == "big":
        pcm.byteswap()
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


# ---------------------------------------------------------------- filters

def biquad(x, b0, b1, b2, a1, a2):
    out = []
    push = out.append
    x1 = x2 = y1 = y2 = 0.0
    for v in x:
        y = b0 * v + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2, x1, y2, y1 = x1, v, y1, y
        push(y)
    return out


def _rbj(kind, fc, q, sr):
    w = 2.0 * math.pi * fc / sr
    c, alpha = math.cos(w), math.sin(w) / (2.0 * q)
    if kind == "lowpass":
        b = ((1 - c) / 2, 1 - c, (1 - c) / 2)
    elif kind == "highpass":
        b = ((1 + c) / 2, -(1 + c), (1 + c) / 2)
    else:  # band-pass, 0 dB at the centre
        b = (alpha, 0.0, -alpha)
    a0 = 1 + alpha
    return b[0] / a0, b[1] / a0, b[2] / a0, -2 * c / a0, (1 - alpha) / a0


def lowpass(x, fc, q=0.7071, sr=SR):
    return biquad(x, *_rbj("lowpass", fc, q, sr))


def highpass(x, fc, q=0.7071, sr=SR):
    return biquad(x, *_rbj("highpass", fc, q, sr))


def bandpass(x, fc, q, sr=SR):
    return biquad(x, *_rbj("bandpass", fc, q, sr))


def band_limit(x, low, high):
    """4th-order-ish band limit: two high-pass and two low-pass biquads."""
    return lowpass(lowpass(highpass(highpass(x, low), low), high), high)


def _damped_comb(x, delay, feedback, damping):
    y = list(x)
    lp = 0.0
    keep = 1.0 - damping
    for i in range(delay, len(y)):
        lp = keep * y[i - delay] + damping * lp
        y[i] += feedback * lp
    return y


def _allpass(x, delay, g=0.7):
    y = [0.0] * len(x)
    for i, v in enumerate(x):
        back_x = x[i - delay] if i >= delay else 0.0
        back_y = y[i - delay] if i >= delay else 0.0
        y[i] = -g * v + back_x + g * back_y
    return y


COMB_DELAYS = (499, 563, 643, 727)  # samples (31-45 ms), mutually prime
ALLPASS_DELAYS = (83, 29)


def reverb(x, rt60, wet, damping=0.3, predelay=0.012):
    """Schroeder reverb: four parallel damped combs, then two allpasses in series. The combs decay 60 dB in rt60
    seconds at 1 kHz (their feedback makes up for the damping low-pass there); higher frequencies die sooner."""
    shift = int(predelay * SR)
    src = [0.0] * shift + x[: len(x) - shift]
    tail = [0.0] * len(x)
    w = 2.0 * math.pi * 1000.0 / SR
    damping_gain = (1.0 - damping) / math.sqrt(1.0 - 2.0 * damping * math.cos(w) + damping * damping)
    for d in COMB_DELAYS:
        feedback = 10.0 ** (-3.0 * d / (rt60 * SR)) / damping_gain
        add_into(tail, _damped_comb(src, d, feedback, damping), gain=0.25)
    for d in ALLPASS_DELAYS:
        tail = _allpass(tail, d)
    tail_gain = rms(x) / (rms(tail) or 1.0)
    return [(1.0 - wet) * a + wet * tail_gain * b for a, b in zip(x, tail)]


# ---------------------------------------------------------------- noise

def white(n, rng):
    r = rng.random
    return [r() * 2.0 - 1.0 for _ in range(n)]


def pink(n, rng, rows=16):
    """Voss-McCartney pink noise: row k is redrawn every 2**k samples, plus one white row."""
    r = rng.random
    values = [r() - 0.5 for _ in range(rows)]
    total = sum(values)
    out = []
    for i in range(1, n + 1):
        row = (i & -i).bit_length() - 1  # number of trailing zeros of i
        if row < rows:
            new = r() - 0.5
            total += new - values[row]
            values[row] = new
        out.append(total + r() - 0.5)
    return out


def brown(n, rng, leak=0.996):
    out = []
    level = 0.0
    for v in white(n, rng):
        level = leak * level + 0.05 * v
        out.append(level)
    return highpass(out, 20.0)


@functools.lru_cache(maxsize=None)
def room_tone_table():
    """16 s of soft low-passed pink noise; each clip takes its own slice of it as a microphone/room floor."""
    return tuple(lowpass(pink(2 * N, random.Random(11), rows=12), 3000.0))


def room_tone(n, rng):
    table = room_tone_table()
    start = rng.randrange(len(table) - n)
    return list(table[start:start + n])


# ---------------------------------------------------------------- oscillators

@functools.lru_cache(maxsize=None)
def harmonic_table(partials):
    """One period of a sum of harmonics ((k, amplitude), ...), peak-normalised to 1."""
    t = [sum(a * math.sin(2.0 * math.pi * k * i / TABLE_SIZE) for k, a in partials) for i in range(TABLE_SIZE)]
    top = max(abs(v) for v in t)
    return tuple(v / top for v in t)


def band_limited_partials(f0, partials, top=7600.0):
    return tuple((k, a) for k, a in partials if k * f0 < top)


def tone(freq_ctl, amp_ctl, table):
    """Table oscillator; frequency and amplitude are given per control block (amplitude ramps within a block)."""
    size = len(table)
    out = []
    push = out.append
    phase = 0.0
    amp = amp_ctl[0]
    for f, target in zip(freq_ctl, amp_ctl):
        inc = f / SR
        step = (target - amp) / BLOCK
        for _ in range(BLOCK):
            phase += inc
            if phase >= 1.0:
                phase -= 1.0
            amp += step
            push(amp * table[int(phase * size)])
    return out


# ---------------------------------------------------------------- voice: glottal source + formant cascade

@dataclass(frozen=True)
class Voice:
    jitter: float  # relative s.d. of each glottal period
    shimmer: float  # relative s.d. of each pulse's amplitude
    breath: float  # aspiration noise, relative to the flow peak
    open_phase: float  # Rosenberg opening phase, fraction of the period
    close_phase: float  # Rosenberg closing phase, fraction of the period
    bandwidths: tuple  # four formant bandwidths, Hz


@functools.lru_cache(maxsize=None)
def rosenberg_table(open_phase, close_phase, size=2048):
    """Rosenberg glottal flow over one period: cosine rise, quarter-cosine fall, then closed."""
    out = []
    for i in range(size):
        u = i / size
        if u < open_phase:
            out.append(0.5 * (1.0 - math.cos(math.pi * u / open_phase)))
        elif u < open_phase + close_phase:
            out.append(math.cos(0.5 * math.pi * (u - open_phase) / close_phase))
        else:
            out.append(0.0)
    return tuple(out)


def resonator(freq, bandwidth):
    """Two-pole resonator y = g*x - c*y1 - d*y2 with unity gain at DC (Klatt-style cascade element)."""
    r = math.exp(-math.pi * bandwidth / SR)
    c = -2.0 * r * math.cos(2.0 * math.pi * freq / SR)
    d = r * r
    return 1.0 + c + d, c, d


def render_voice(f0_ctl, amp_ctl, formant_ctl, voice, rng):
    """Voiced sound, BLOCK samples per control point: f0 (Hz), amplitude and four formant frequencies per block."""
    table = rosenberg_table(round(voice.open_phase, 3), round(voice.close_phase, 3))
    size = len(table)
    noise, mask, k = NOISE, NOISE_MASK, rng.randrange(len(NOISE))
    jitter, shimmer, breath = voice.jitter, voice.shimmer, voice.breath
    gauss = rng.gauss
    out = []
    push = out.append
    phase, period_scale, pulse_gain, prev = 0.0, 1.0, 1.0, 0.0
    p1 = q1 = p2 = q2 = p3 = q3 = p4 = q4 = 0.0
    amp = amp_ctl[0]
    for f0, target, formants in zip(f0_ctl, amp_ctl, formant_ctl):
        (g1, c1, d1), (g2, c2, d2), (g3, c3, d3), (g4, c4, d4) = (
            resonator(f, bw) for f, bw in zip(formants, voice.bandwidths))
        step = (target - amp) / BLOCK
        inc = f0 / (SR * period_scale)
        for _ in range(BLOCK):
            phase += inc
            if phase >= 1.0:  # a new glottal period: draw its jitter and shimmer
                phase -= 1.0
                period_scale = 1.0 + jitter * gauss(0.0, 1.0)
                pulse_gain = 1.0 + shimmer * gauss(0.0, 1.0)
                inc = f0 / (SR * period_scale)
            amp += step
            flow = table[int(phase * size)]
            k = (k + 1) & mask
            x = amp * pulse_gain * (flow + breath * (0.3 + flow) * noise[k])
            y1 = g1 * x - c1 * p1 - d1 * q1
            q1, p1 = p1, y1
            y2 = g2 * y1 - c2 * p2 - d2 * q2
            q2, p2 = p2, y2
            y3 = g3 * y2 - c3 * p3 - d3 * q3
            q3, p3 = p3, y3
            y4 = g4 * y3 - c4 * p4 - d4 * q4
            q4, p4 = p4, y4
            push(y4 - prev)  # lip radiation: first difference
            prev = y4
    return out


def envelope(count, attack, release):
    """Per-block amplitude: linear attack and release (in blocks), 1.0 in between."""
    return [min(1.0, (b + 1) / max(1, attack), (count - b) / max(1, release)) for b in range(count)]


def noise_burst(seconds, centre, q, rng):
    """Band-passed noise with a raised-cosine envelope (inhalations, the "h" of a laugh)."""
    n = int(seconds * SR)
    burst = bandpass(white(n, rng), centre, q)
    return [v * (0.5 - 0.5 * math.cos(2.0 * math.pi * i / n)) for i, v in enumerate(burst)]


# ---------------------------------------------------------------- infant cries

@dataclass(frozen=True)
class CryStyle:
    contour: str  # "falling", "hyper" or "low"
    f_start: float
    f_end: float
    formants: tuple
    voice: Voice


def cry_style(kind, rng):
    older = kind == "low"
    formants = (
        rng.uniform(850, 1050) if older else rng.uniform(950, 1300),
        rng.uniform(2200, 2700) if older else rng.uniform(2400, 3200),
        rng.uniform(3700, 4300) if older else rng.uniform(4000, 4800),
        rng.uniform(5300, 5900) if older else rng.uniform(5700, 6500),
    )
    voice = Voice(jitter=rng.uniform(0.008, 0.025), shimmer=rng.uniform(0.04, 0.10),
                  breath=rng.uniform(0.08, 0.25), open_phase=rng.uniform(0.30, 0.42),
                  close_phase=rng.uniform(0.10, 0.18),
                  bandwidths=(rng.uniform(140, 220), rng.uniform(200, 300), 320.0, 450.0))
    if kind == "falling":
        f_start, f_end = rng.uniform(450, 600), rng.uniform(300, 380)
    elif kind == "hyper":
        f_start, f_end = rng.uniform(430, 530), rng.uniform(340, 410)
    else:
        f_start = rng.uniform(290, 370)
        f_end = f_start * rng.uniform(0.93, 1.03)
    return CryStyle(kind, f_start, f_end, formants, voice)


def cry_contour(style, count, rng):
    """Per-block f0 for one phonation."""
    f_start = style.f_start * rng.uniform(0.95, 1.05)
    f_end = style.f_end * rng.uniform(0.96, 1.04)
    wobble = random_curve(count, rng, 0.02, 25)
    if style.contour == "hyper":
        jump_at = rng.uniform(0.15, 0.45)
        jump_to = jump_at + rng.uniform(0.2, 0.45)
        f_hyper = rng.uniform(1000, 1450)
    bend = rng.uniform(0.7, 1.5)
    arch = rng.uniform(0.02, 0.06)
    out = []
    for b in range(count):
        u = b / max(1, count - 1)
        if style.contour == "low":  # flat, with a gentle arch
            f = (f_start + (f_end - f_start) * u) * (1.0 + arch * math.sin(math.pi * u))
        else:  # starts high and falls, after a brief rise at the onset
            f = f_end + (f_start - f_end) * (1.0 - u) ** bend
            if u < 0.06:
                f *= 0.92 + 0.08 * u / 0.06
            if style.contour == "hyper" and jump_at <= u < jump_to:
                f = f_hyper * (1.0 + 0.04 * (u - jump_at) / (jump_to - jump_at))
        out.append(f * wobble[b])
    return out


def cry_formant_track(style, count, rng):
    """Formants per block: a /w/-like glide up at the onset, a slow drift, and closing at the end."""
    glide = max(1, blocks(rng.uniform(0.06, 0.12)))
    close = max(1, blocks(0.1))
    drift = random_curve(count, rng, 0.05, 40)
    f1, f2, f3, f4 = style.formants
    out = []
    for b in range(count):
        onset = min(1.0, b / glide)
        ending = min(1.0, (count - b) / close)
        s1 = (0.55 + 0.45 * onset) * (0.8 + 0.2 * ending) * drift[b]
        s2 = 0.65 + 0.35 * onset
        out.append((f1 * s1, f2 * s2, f3, f4))
    return out


def cry_phonation(style, seconds, rng):
    count = blocks(seconds)
    f0 = cry_contour(style, count, rng)
    amp = envelope(count, blocks(rng.uniform(0.04, 0.09)), blocks(rng.uniform(0.08, 0.18)))
    swell = random_curve(count, rng, 0.12, 30)
    amp = [a * s for a, s in zip(amp, swell)]
    if style.contour == "hyper":  # the high part is a little weaker
        amp = [a * (0.75 if f > 900 else 1.0) for a, f in zip(amp, f0)]
    return render_voice(f0, amp, cry_formant_track(style, count, rng), style.voice, rng)


def cry_track(kind, rng):
    """8 s of crying: phonations separated by gaps with inhalation noise."""
    style = cry_style(kind, rng)
    out = [0.0] * N
    t = rng.uniform(0.0, 0.6)
    first = True
    while t < CLIP_SECONDS - 0.3:
        seconds = rng.uniform(0.6, 1.4) if not first else rng.uniform(0.6, 1.0)
        first = False
        loudness = rng.uniform(0.6, 1.0)
        add_into(out, cry_phonation(style, seconds, rng), int(t * SR), loudness)
        t += seconds
        gap = rng.uniform(0.2, 0.55)
        breath_in = noise_burst(min(gap - 0.05, rng.uniform(0.12, 0.3)), rng.uniform(1500, 3500),
                                rng.uniform(1.5, 3.0), rng)
        add_into(out, breath_in, int((t + 0.03) * SR), loudness * rng.uniform(0.03, 0.08))
        t += gap
    return out


# ---------------------------------------------------------------- espeak-ng speech

def espeak_path():
    path = shutil.which("espeak-ng") or "/usr/bin/espeak-ng"
    if not os.path.exists(path):
        sys.exit("heldout_cries.py: espeak-ng is required (apt-get install espeak-ng)")
    return path


def espeak(text, voice, speed, pitch, ssml=False):
    """Speaks text with espeak-ng; returns (samples as floats, sample rate)."""
    args = [espeak_path(), "--stdout", "-v", voice, "-s", str(speed), "-p", str(pitch)]
    if ssml:
        args.append("-m")
    raw = subprocess.run(args + [text], capture_output=True, check=True).stdout
    rate = int.from_bytes(raw[24:28], "little")
    data = raw[raw.find(b"data") + 8:]  # espeak streams, so the header's sizes are not to be trusted
    pcm = array("h")
    pcm.frombytes(data[: len(data) // 2 * 2])
    if sys.byteorder == "big":
        pcm.byteswap()
    return [v / 32768.0 for v in pcm], rate


def resample(x, rate):
    """Linear-interpolation resampling to SR (the caller low-passes first when the source has content > SR/2)."""
    if rate == SR:
        return list(x)
    step = rate / SR
    count = int((len(x) - 1) / step)
    out = []
    for j in range(count):
        pos = j * step
        i = int(pos)
        out.append(x[i] + (x[i + 1] - x[i]) * (pos - i))
    return out


def speak(text, voice, speed, pitch, ssml=False, max_seconds=None, start=0.0, full_band=True):
    x, rate = espeak(text, voice, speed, pitch, ssml)
    first = int(start * rate)
    last = len(x) if max_seconds is None else first + int(max_seconds * rate) + 2
    x = x[first:last]
    if full_band:  # anti-alias before going from 22.05 kHz to 16 kHz
        x = lowpass(lowpass(x, 7000.0, sr=rate), 7000.0, sr=rate)
    return resample(x, rate)


def trim_silence(x, threshold=0.003):
    loud = [i for i in range(0, len(x), 160) if abs(x[i]) > threshold or abs(x[min(len(x) - 1, i + 80)]) > threshold]
    return x[max(0, loud[0] - 160): loud[-1] + 320] if loud else x


# ---------------------------------------------------------------- TV

TV_LINES = (
    "Good evening, and welcome to the late news.",
    "Traffic on the ring road is moving slowly after an earlier accident near the bridge.",
    "Tomorrow will start cloudy, with showers clearing from the west by the afternoon.",
    "Scientists say the new telescope has already sent back its first pictures.",
    "And now, over to our reporter, who is standing outside the town hall.",
    "I told you, I never wanted to sell the farm in the first place.",
    "Well then, why did you sign the papers without telling me?",
    "The council will vote next week on plans for a new swimming pool.",
    "Stay with us, because after the break we have the football highlights.",
    "This garden was planted more than two hundred years ago by the first owner of the house.",
    "Save twenty percent on all sofas this weekend only, while stocks last.",
    "The match ended in a draw, with both goals coming in the second half.",
    "Police have asked anyone who saw the blue van to come forward.",
    "In the morning the herd moves down to the river to drink.",
)
TV_VOICES = ("en-us", "en-gb-x-rp", "en-us+m3", "en-gb+f3", "en-gb-scotland+m2", "en-us+f2", "en-029+m5")


def music_bed(count, rng):
    """Soft chords (I-vi-IV-V in a random key) with a bass note, piano-like decays."""
    root = rng.uniform(130.0, 200.0)
    progression = ((0, 4, 7), (9, 12, 16), (5, 9, 12), (7, 11, 14))
    out = [0.0] * count
    t, chord = 0.0, rng.randrange(4)
    while t * SR < count:
        seconds = rng.uniform(1.5, 2.5)
        nb = blocks(seconds)
        decay = rng.uniform(0.8, 1.6)
        amp = [min(1.0, (b + 1) / 3) * math.exp(-b * BLOCK / SR / decay) for b in range(nb)]
        notes = [root * 2 ** (s / 12) for s in progression[chord % 4]]
        notes.append(notes[0] / 2)
        for f in notes:
            table = harmonic_table(band_limited_partials(f, tuple((k, k ** -1.4) for k in range(1, 9))))
            add_into(out, tone([f] * nb, amp, table), int(t * SR), 0.25)
        t += seconds
        chord += 1
    return out


def tv_sound(rng, music=None):
    voice = rng.choice(TV_VOICES)
    lines = rng.sample(TV_LINES, 5)
    speech = speak(" ".join(lines), voice, rng.randint(140, 200), rng.randint(25, 65),
                   max_seconds=CLIP_SECONDS, start=rng.uniform(0.0, 1.0), full_band=False)
    speech = fit(speech)
    if music is None:
        music = rng.random() < 0.5
    if music:
        speech = mix_at_snr(speech, music_bed(N, rng), rng.uniform(10.0, 18.0))
    speaker = band_limit(speech, 200.0, 4000.0)
    return reverb(speaker, rng.uniform(0.3, 0.5), rng.uniform(0.12, 0.25), damping=0.4)


# ---------------------------------------------------------------- sibling

SIBLING_LINES = (
    "Mummy! Mummy, look at this!",
    "I'm a dinosaur! Rawr!",
    "Can I have a biscuit, please?",
    "Watch me jump! One, two, three!",
    "It's my turn now, give it back!",
    "Daddy, come and see what I made!",
    "You can't catch me!",
    "Why is the moon following us?",
    "I found a snail! It's got a shell!",
    "Where are my red shoes?",
)
SIBLING_SHOUTS = ("No! Mine!", "Stop it!", "Yes! I win!", "Go away!", "Wheee!")
SIBLING_VOICES = ("en+f4", "en+f5", "en-us+f4", "en-us+f5", "en-gb+f5", "en+f3")


def laughter(rng):
    """A burst of 4-8 voiced "ha" syllables at ~5 per second, each with an aspirated onset; pitch 300-450 Hz."""
    voice = Voice(jitter=0.015, shimmer=0.06, breath=0.3, open_phase=0.4, close_phase=0.16,
                  bandwidths=(110.0, 150.0, 250.0, 350.0))
    formants = (rng.uniform(950, 1150), rng.uniform(1550, 1850), rng.uniform(3100, 3600), 4500.0)
    f_top = rng.uniform(340, 450)
    rate = rng.uniform(4.5, 5.5)
    syllables = rng.randint(4, 8)
    out = [0.0] * int((syllables / rate + 0.3) * SR)
    for s in range(syllables):
        start = int(s / rate * SR)
        aspiration = rng.uniform(0.05, 0.08)
        add_into(out, noise_burst(aspiration + 0.03, 1300.0, 0.8, rng), start, 0.15)
        voiced = rng.uniform(0.08, 0.12)
        nb = blocks(voiced)
        f = max(300.0, f_top * (1.0 - 0.03 * s))
        f0 = [f * (1.0 - 0.06 * b / nb) for b in range(nb)]
        amp = [a * (1.0 - 0.05 * s) for a in envelope(nb, 2, 8)]
        add_into(out, render_voice(f0, amp, [formants] * nb, voice, rng), start + int(aspiration * SR))
    return out


def sibling_part(kind, rng, voice, pitch, lines):
    """One utterance of the sibling, peak-normalised to a per-kind loudness: "laugh", "shout" or "line"."""
    if kind == "laugh":
        part, gain = laughter(rng), rng.uniform(0.5, 0.9)
    elif kind == "shout":
        shout = escape(rng.choice(SIBLING_SHOUTS))
        text = f'<speak><prosody pitch="x-high" volume="x-loud" rate="fast">{shout}</prosody></speak>'
        part, gain = trim_silence(speak(text, voice, rng.randint(200, 250), 99, ssml=True)), 1.0
    else:
        part, gain = trim_silence(speak(lines.pop(), voice, rng.randint(190, 240), pitch)), rng.uniform(0.5, 0.8)
    return scaled(part, gain / (peak(part) or 1.0))


def sibling_sound(rng):
    """Talking, 1-2 laughs and a shout in the first few seconds (shuffled), then more talking and shouting."""
    voice = rng.choice(SIBLING_VOICES)
    pitch = rng.randint(80, 99)
    lines = rng.sample(SIBLING_LINES, len(SIBLING_LINES))
    plan = ["line", "shout"] + ["laugh"] * rng.randint(1, 2)
    rng.shuffle(plan)
    out = [0.0] * N
    t = rng.uniform(0.0, 0.4)
    while t < CLIP_SECONDS - 0.5:
        kind = plan.pop(0) if plan else rng.choice(("line", "line", "shout"))
        part = sibling_part(kind, rng, voice, pitch, lines)
        add_into(out, part, int(t * SR))
        t += len(part) / SR + rng.uniform(0.15, 0.7)
    return out


# ---------------------------------------------------------------- singing

VOWELS = {  # adult formants, Hz
    "a": (800, 1150, 2800, 3800),
    "o": (480, 850, 2800, 3700),
    "u": (350, 900, 2700, 3700),
    "e": (500, 1900, 2700, 3800),
    "m": (280, 1000, 2300, 3500),  # humming (nasal murmur, approximate)
}
MAJOR = (0, 2, 4, 5, 7, 9, 11)
LULLABY_LINES = (
    "sleep now my little one the moon is high",
    "close your eyes and dream the stars are near",
    "hush now the night is soft and warm",
    "rest your head the day is done",
)


def lullaby_phrase(rng, tonic, degree):
    """Note list [(frequency, seconds)] and the last scale degree: a random walk ending on a tonic-chord note."""
    notes = []
    for _ in range(rng.randint(4, 7)):
        degree = min(6, max(0, degree + rng.choice((-2, -1, -1, 0, 1, 1, 2))))
        notes.append((tonic * 2 ** (MAJOR[degree] / 12), rng.choice((0.4, 0.6, 0.6, 0.8, 1.2))))
    degree = rng.choice((0, 2, 4))
    notes.append((tonic * 2 ** (MAJOR[degree] / 12), rng.uniform(1.0, 1.2)))
    return notes, degree


def sung_phrase(notes, rng, voice, vibrato_rate, vibrato_depth):
    """Legato notes: 50 ms glides, delayed vibrato, vowel changes with formant glides, one breath per phrase."""
    f0, amp, formants = [], [], []
    prev_f, prev_vowel = notes[0][0], VOWELS[rng.choice("aou")]
    glide = blocks(0.05)
    for f, seconds in notes:
        vowel = VOWELS[rng.choice("aaoume")]
        nb = blocks(seconds)
        for b in range(nb):
            t = (len(f0)) * BLOCK / SR
            into_note = b * BLOCK / SR
            g = min(1.0, b / glide)
            base = prev_f * (f / prev_f) ** g
            depth = vibrato_depth * min(1.0, max(0.0, (into_note - 0.15) / 0.15))
            f0.append(base * (1.0 + depth * math.sin(2.0 * math.pi * vibrato_rate * t)))
            amp.append(0.85 + 0.15 * math.sin(math.pi * b / nb))
            formants.append(tuple(p + (q - p) * min(1.0, b / (glide + 1)) for p, q in zip(prev_vowel, vowel)))
        prev_f, prev_vowel = f, vowel
    shape = envelope(len(f0), blocks(0.08), blocks(0.2))
    amp = [a * s for a, s in zip(amp, shape)]
    return render_voice(f0, amp, formants, voice, rng)


def espeak_sung_line(rng, tonic_percent):
    """One lullaby line from espeak-ng, each word on a flat note (narrow pitch range, per-word pitch offsets)."""
    words = rng.choice(LULLABY_LINES).split()
    degree, parts = 2, []
    for word in words:
        degree = min(6, max(0, degree + rng.choice((-1, 0, 1))))
        percent = tonic_percent + round((2 ** (MAJOR[degree] / 12) - 1) * 146)
        parts.append(f'<prosody pitch="{percent:+d}%">{escape(word)}</prosody>')
    text = '<speak><prosody range="x-low">' + " ".join(parts) + "</prosody></speak>"
    voice = rng.choice(("en+f2", "en+f3", "en-us+f2", "en-gb+f4"))
    return trim_silence(speak(text, voice, rng.randint(65, 90), rng.randint(45, 65), ssml=True))


def singing_sound(rng, with_espeak):
    voice = Voice(jitter=rng.uniform(0.003, 0.008), shimmer=rng.uniform(0.02, 0.04),
                  breath=rng.uniform(0.04, 0.1), open_phase=rng.uniform(0.42, 0.5),
                  close_phase=rng.uniform(0.16, 0.22), bandwidths=(80.0, 100.0, 150.0, 250.0))
    tonic = rng.uniform(200.0, 260.0)
    vibrato_rate, vibrato_depth = rng.uniform(5.0, 6.0), rng.uniform(0.02, 0.03)
    out = [0.0] * N
    t, degree, use_espeak = rng.uniform(0.0, 0.5), 0, with_espeak
    while t < CLIP_SECONDS - 0.5:
        if use_espeak:
            part = espeak_sung_line(rng, rng.randint(-10, 10))
        else:
            notes, degree = lullaby_phrase(rng, tonic, degree)
            part = sung_phrase(notes, rng, voice, vibrato_rate, vibrato_depth)
        add_into(out, scaled(part, rng.uniform(0.7, 1.0) / (peak(part) or 1.0)), int(t * SR))
        t += len(part) / SR + rng.uniform(0.25, 0.5)
        use_espeak = with_espeak and not use_espeak
    if rng.random() < 0.5:
        out = reverb(out, rng.uniform(0.3, 0.5), rng.uniform(0.1, 0.2))
    return out


# ---------------------------------------------------------------- noise machine

def noise_machine(kind, rng):
    if kind == "white":
        out = white(N, rng)
        if rng.random() < 0.5:  # a small speaker rolls the top off
            out = lowpass(out, rng.uniform(5000.0, 7000.0))
        return out
    if kind == "pink":
        return pink(N, rng)
    if kind == "brown":
        return brown(N, rng)
    # ocean: a low rumble and a hissing wash that swell together at 0.1-0.2 Hz
    rate, phase = rng.uniform(0.1, 0.2), rng.uniform(0.0, 2.0 * math.pi)
    rumble = lowpass(brown(N, rng), rng.uniform(600.0, 1200.0))
    wash = highpass(pink(N, rng), 800.0)
    rumble_gain, wash_gain = 1.0 / (rms(rumble) or 1.0), 0.6 / (rms(wash) or 1.0)
    mixed = [rumble_gain * a + wash_gain * b for a, b in zip(rumble, wash)]
    swell = [0.25 + 0.75 * (0.5 - 0.5 * math.cos(2.0 * math.pi * rate * i / SR + phase)) ** 1.5
             for i in range(N)]
    return [v * s for v, s in zip(mixed, swell)]


NOISE_KINDS = ("white", "pink", "brown", "ocean")


# ---------------------------------------------------------------- household

def kettle(rng):
    f = rng.uniform(1000.0, 3000.0)
    nb = blocks(CLIP_SECONDS)
    rate, depth = rng.uniform(3.0, 8.0), rng.uniform(0.004, 0.012)
    drift = random_curve(nb, rng, 0.005, 100)
    wobble = random_curve(nb, rng, 0.1, 20)
    freqs = [f * drift[b] * (1.0 + depth * math.sin(2.0 * math.pi * rate * b * BLOCK / SR)) for b in range(nb)]
    rise = blocks(rng.uniform(0.1, 0.4))
    amp = [min(1.0, (b + 1) / rise) * wobble[b] for b in range(nb)]
    whistle = tone(freqs, amp, harmonic_table(band_limited_partials(f, ((1, 1.0), (2, 0.1), (3, 0.03)))))
    hiss = highpass(white(N, rng), 2500.0)
    return mix_at_snr(whistle, hiss, rng.uniform(15.0, 25.0))


def microwave(rng):
    out = [0.0] * N
    stop = rng.uniform(1.0, 3.0)
    mains = rng.choice((50.0, 60.0))
    hum_len = int(stop * SR)
    hum = tone([mains] * blocks(stop), [1.0] * blocks(stop),
               harmonic_table(((1, 0.3), (2, 1.0), (3, 0.2), (4, 0.3), (6, 0.1))))
    fan = lowpass(pink(hum_len, rng), 1500.0)
    add_into(out, mix_at_snr(hum[:hum_len], fan, rng.uniform(-3.0, 3.0)), 0, 0.15 / (rms(fan) or 1.0))
    f = rng.uniform(1800.0, 3200.0)
    table = harmonic_table(band_limited_partials(f, ((1, 1.0), (3, 0.33), (5, 0.2))))
    on, off = rng.uniform(0.15, 0.5), rng.uniform(0.15, 0.35)
    count = rng.choice((3, 4, 5))
    for series_start in (stop + 0.1, stop + rng.uniform(3.5, 4.5)):  # the beeps, then a reminder
        for k in range(count):
            nb = blocks(on)
            beep = tone([f] * nb, envelope(nb, 3, 3), table)
            add_into(out, beep, int((series_start + k * (on + off)) * SR), 0.8)
    return out


def vacuum(rng):
    f = rng.uniform(100.0, 300.0)
    nb = blocks(CLIP_SECONDS)
    partials = tuple((k, rng.uniform(0.5, 1.5) / k) for k in range(1, 25))
    speed = random_curve(nb, rng, 0.01, 50)
    motor = tone([f * s for s in speed], [1.0] * nb, harmonic_table(band_limited_partials(f, partials)))
    airflow = [a + 0.5 * b for a, b in zip(lowpass(pink(N, rng), 4000.0), highpass(white(N, rng), 1000.0))]
    out = mix_at_snr(airflow, motor, rng.uniform(3.0, 9.0))
    push_rate, phase = rng.uniform(0.4, 0.8), rng.uniform(0.0, 2.0 * math.pi)  # pushed to and fro
    return [v * db_to_gain(2.5 * math.sin(2.0 * math.pi * push_rate * i / SR + phase)) for i, v in enumerate(out)]


def phone(rng):
    f_a = rng.uniform(900.0, 1400.0)
    f_b = f_a * rng.uniform(1.15, 1.35)
    switch = blocks(1.0 / rng.uniform(30.0, 50.0))  # alternate the two tones 15-25 times a second
    table = harmonic_table(((1, 1.0), (3, 0.15)))
    cadence = rng.choice(((0.4, 0.2, 0.4, 2.0), (1.0, 2.0), (1.5, 1.5), (2.0, 4.0)))
    out = [0.0] * N
    t = rng.uniform(0.0, 1.0)
    while t < CLIP_SECONDS:
        for i, seconds in enumerate(cadence):
            if i % 2 == 0:
                nb = blocks(seconds)
                freqs = [f_a if (b // switch) % 2 == 0 else f_b for b in range(nb)]
                add_into(out, tone(freqs, envelope(nb, 2, 2), table), int(t * SR))
            t += seconds
    return band_limit(out, 300.0, 3400.0)


HOUSEHOLD = (kettle, microwave, vacuum, phone)


# ---------------------------------------------------------------- categories

def gen_cry(kind):
    return lambda rng, i: cry_track(kind, rng)


def gen_cry_reverb(rng, i):
    cry = cry_track(rng.choice(("falling", "low", "falling", "hyper")), rng)
    distant = lowpass(cry, rng.uniform(2000.0, 4000.0))
    return reverb(distant, rng.uniform(0.4, 0.8), rng.uniform(0.35, 0.6), damping=rng.uniform(0.15, 0.35))


def gen_cry_over_machine(rng, i):
    cry = cry_track(rng.choice(("falling", "low", "hyper")), rng)
    return mix_at_snr(cry, noise_machine(("white", "pink", "brown")[i % 3], rng), rng.uniform(5.0, 10.0))


def gen_cry_over_tv(rng, i):
    cry = cry_track(rng.choice(("falling", "low", "hyper")), rng)
    return mix_at_snr(cry, tv_sound(rng), rng.uniform(4.0, 6.0))


CATEGORIES = (  # name, is a cry, generator(rng, index), RMS range in dBFS
    ("cry-falling", True, gen_cry("falling"), (-26.0, -14.0)),
    ("cry-hyperphonation", True, gen_cry("hyper"), (-26.0, -14.0)),
    ("cry-low", True, gen_cry("low"), (-26.0, -14.0)),
    ("cry-reverb", True, gen_cry_reverb, (-30.0, -24.0)),
    ("cry-over-machine", True, gen_cry_over_machine, (-24.0, -14.0)),
    ("cry-over-tv", True, gen_cry_over_tv, (-24.0, -14.0)),
    ("tv-speech", False, lambda rng, i: tv_sound(rng, music=i % 2 == 1), (-30.0, -18.0)),
    ("sibling", False, lambda rng, i: sibling_sound(rng), (-28.0, -16.0)),
    ("singing", False, lambda rng, i: singing_sound(rng, with_espeak=i % 2 == 1), (-30.0, -18.0)),
    ("noise-machine", False, lambda rng, i: noise_machine(NOISE_KINDS[i % 4], rng), (-36.0, -22.0)),
    ("household", False, lambda rng, i: HOUSEHOLD[i % 4](rng), (-30.0, -14.0)),
)


def make_clip(category, index, generate, rms_range):
    rng = random.Random(zlib.crc32(f"heldout/{category}/{index}".encode()))
    clip = set_rms(fit(generate(rng, index)), rng.uniform(*rms_range))
    floor = room_tone(N, rng)
    add_into(clip, floor, 0, db_to_gain(rng.uniform(-66.0, -58.0)) / rms(floor))
    return fade_edges(clip)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--per-category", type=int, default=6)
    args = parser.parse_args()
    if args.per_category < 1:
        parser.error("--per-category must be at least 1")
    started = time.monotonic()
    os.makedirs(args.outdir, exist_ok=True)
    manifest = []
    for category, is_cry, generate, rms_range in CATEGORIES:
        for index in range(args.per_category):
            name = f"{category}-{index:02d}.wav"
            write_wav(os.path.join(args.outdir, name), make_clip(category, index, generate, rms_range))
            manifest.append({"file": name, "category": category, "cry": is_cry})
    with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {len(manifest)} clips of {CLIP_SECONDS:g} s to {args.outdir} in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
