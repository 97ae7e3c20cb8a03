#!/usr/bin/env python3
"""aiortc answerer for the Media adapter's interop test (an independent WebRTC implementation).

Signaling is newline-delimited JSON on stdin/stdout, in the shapes of PROTOCOL.md §9:
  in:  {"type": "offer", "sdp": "..."}
       {"type": "candidate", "candidate": "candidate:...", "sdpMid": "0", "sdpMLineIndex": 0}
       (an empty "candidate" ends the remote candidates)
  out: {"type": "ready"}                                      (first: imports done, peer created; send the offer now)
       {"type": "answer", "sdp": "..."}                       (candidates stripped: they are trickled)
       {"type": "candidate", ...}, then one with "candidate": "" (end of candidates)
       {"type": "result", ...}                                 (last line; then the script exits)
The result counts the audio decoded by aiortc during --seconds after the first frame, and reports what the
offer and the answer negotiated. With --video it also counts the decoded video frames ("video_frames",
"video_sizes", "first_video_frame_ms", "video_size_changes": each size in the order it appeared, with the frame
number), and waits (within --timeout) for --video-frames of them besides the audio.
A weak link for the sender's downscale: --drop-video SHARE drops that share of the incoming video RTP packets
(evenly spread; from the first packet after --drop-after decoded frames) before aiortc's receiver sees them, so its
RTCP receiver reports show the loss; with
--until-size WxH it waits for --video-frames frames of that size instead, and then stops dropping; with
--then-size WxH it then waits for --video-frames frames of that size too ("dropped_video_packets",
"video_frames_at_size": frames per size after the loss started).
Logs go to stderr. Exit status 0 when the result was printed.
"""
import argparse
import asyncio
import json
import sys
import time

import aioice.ice

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=2.5, help="how long to decode after the first frame")
parser.add_argument("--timeout", type=float, default=20.0, help="give up this many seconds after printing ready")
parser.add_argument("--address", default="127.0.0.1", help="the only host address aioice gathers on")
parser.add_argument("--video", action="store_true", help="also decode and count video frames")
parser.add_argument("--video-frames", type=int, default=10, help="with --video: wait for this many video frames")
parser.add_argument("--drop-video", type=float, default=0.0, help="share of incoming video RTP packets to drop")
parser.add_argument("--drop-after", type=int, default=0, help="with --drop-video: start after this many frames")
parser.add_argument("--until-size", help="with --drop-video: drop until --video-frames frames of this size (WxH)")
parser.add_argument("--then-size", help="with --until-size: then wait for --video-frames frames of this size")
args = parser.parse_args()

# aioice skips 127.0.0.1 and has no option for it: gather on the given address only.
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [args.address]

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc.rtcrtpreceiver import RTCRtpReceiver  # noqa: E402
import aiortc.codecs.h264, aiortc.codecs.opus, aiortc.codecs.vpx  # noqa: E401,E402 (loaded before "ready")
from aiortc.sdp import candidate_from_sdp  # noqa: E402

START = time.monotonic()


def log(*parts):
    print(f"[aiortc {1000 * (time.monotonic() - START):8.1f} ms]", *parts, file=sys.stderr, flush=True)


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def media_lines(sdp, prefix):
    return [line for line in sdp.splitlines() if line.startswith(prefix)]


class VideoLoss:
    """Drops an evenly spread share of the video RTP packets before RTCRtpReceiver counts them."""

    def __init__(self, share):
        self.share = share
        self.active = share > 0 and args.drop_after == 0  # otherwise from the --drop-after th frame on
        self.seen = 0
        self.dropped = 0

    def drop(self):
        if not self.active:
            return False
        self.seen += 1
        if int(self.seen * self.share) > int((self.seen - 1) * self.share):
            self.dropped += 1
            return True
        return False


VIDEO_LOSS = VideoLoss(args.drop_video)
_handle_rtp_packet = RTCRtpReceiver._handle_rtp_packet


async def _lossy_handle_rtp_packet(self, packet, arrival_time_ms):
    # The video receiver's track kind is private; the payload type tells video (not Opus 111) apart.
    if packet.payload_type != 111 and VIDEO_LOSS.drop():
        return
    await _handle_rtp_packet(self, packet, arrival_time_ms)


RTCRtpReceiver._handle_rtp_packet = _lossy_handle_rtp_packet


async def main():
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))  # no STUN: host candidates only
    result = {"type": "result", "frames": 0, "samples": 0, "seconds": 0.0, "sample_rates": [], "kinds": []}
    finished = asyncio.Event()
    audio_done = asyncio.Event()
    video_done = asyncio.Event()
    if args.video:
        result.update({"video_frames": 0, "video_sizes": [], "video_size_changes": [], "video_frames_at_size": {}})
        if VIDEO_LOSS.active:
            result["loss_started_at_frame"] = 0
    else:
        video_done.set()

    def check_finished():
        if audio_done.is_set() and video_done.is_set():
            finished.set()

    @pc.on("connectionstatechange")
    def on_state():
        log("connectionState", pc.connectionState)
        result["connection_state"] = pc.connectionState
        if pc.connectionState == "failed":
            finished.set()

    @pc.on("track")
    def on_track(track):
        log("track", track.kind)
        result["kinds"].append(track.kind)
        if track.kind == "video" and args.video:

            async def consume_video():
                sizes = set()
                # The sizes still to see (each for --video-frames frames): none, WxH, or WxH then WxH.
                targets = [size for size in (args.until_size, args.then_size) if size]
                at_size = result["video_frames_at_size"]
                phase_frames = 0  # consecutive frames of the size awaited
                while True:
                    try:
                        frame = await track.recv()
                    except Exception as error:
                        log("video track ended:", repr(error))
                        break
                    if result["video_frames"] == 0:
                        result["first_video_frame_ms"] = round(1000 * (time.monotonic() - START), 1)
                    result["video_frames"] += 1
                    size = f"{frame.width}x{frame.height}"
                    sizes.add(size)
                    result["video_sizes"] = sorted(sizes)
                    changes = result["video_size_changes"]
                    if not changes or changes[-1]["size"] != size:
                        log("video size", size, "at frame", result["video_frames"])
                        changes.append({"size": size, "frame": result["video_frames"]})
                    if VIDEO_LOSS.share > 0 and "loss_started_at_frame" not in result and (
                        result["video_frames"] >= args.drop_after
                    ):
                        VIDEO_LOSS.active = True
                        result["loss_started_at_frame"] = result["video_frames"]
                        log("dropping", VIDEO_LOSS.share, "of the video packets from frame", result["video_frames"])
                    if "loss_started_at_frame" in result and result["video_frames"] > result["loss_started_at_frame"]:
                        at_size[size] = at_size.get(size, 0) + 1
                    if targets:
                        phase_frames = phase_frames + 1 if size == targets[0] else 0
                        if phase_frames >= args.video_frames:
                            if size == args.until_size:
                                VIDEO_LOSS.active = False
                                result["loss_stopped_at_frame"] = result["video_frames"]
                                log("stopped dropping video after", VIDEO_LOSS.dropped, "packets")
                            targets.pop(0)
                            phase_frames = 0
                        result["dropped_video_packets"] = VIDEO_LOSS.dropped
                        if not targets:
                            video_done.set()
                            check_finished()
                    elif result["video_frames"] >= args.video_frames:
                        video_done.set()
                        check_finished()
                video_done.set()
                check_finished()

            asyncio.ensure_future(consume_video())
            return
        if track.kind != "audio":
            return

        async def consume():
            first = None
            rates = set()
            while True:
                try:
                    frame = await track.recv()
                except Exception as error:  # MediaStreamError when the track ends
                    log("track ended:", repr(error))
                    break
                now = time.monotonic()
                if first is None:
                    first = now
                    result["first_frame_ms"] = round(1000 * (now - START), 1)
                result["frames"] += 1
                result["samples"] += frame.samples
                rates.add(frame.sample_rate)
                result["sample_rates"] = sorted(rates)
                result["seconds"] = round(now - first, 3)
                if now - first >= args.seconds:
                    break
            audio_done.set()
            check_finished()

        asyncio.ensure_future(consume())

    async def read_signaling():
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                log("stdin closed")
                finished.set()
                return
            message = json.loads(line)
            if message["type"] == "offer":
                offer = message["sdp"]
                result["offer_rtpmap"] = media_lines(offer, "a=rtpmap:")
                result["offer_fmtp"] = media_lines(offer, "a=fmtp:")
                result["offer_fingerprints"] = media_lines(offer, "a=fingerprint:")
                await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
                await pc.setLocalDescription(await pc.createAnswer())  # aiortc gathers here (no trickle)
                lines = pc.localDescription.sdp.split("\r\n")
                candidates = [line[2:] for line in lines if line.startswith("a=candidate:")]
                answer = "\r\n".join(
                    line for line in lines if not line.startswith("a=candidate:") and line != "a=end-of-candidates"
                )
                result["answer_rtpmap"] = media_lines(answer, "a=rtpmap:")
                emit({"type": "answer", "sdp": answer})
                for candidate in candidates:
                    emit({"type": "candidate", "candidate": candidate, "sdpMid": "0", "sdpMLineIndex": 0})
                emit({"type": "candidate", "candidate": "", "sdpMid": "0", "sdpMLineIndex": 0})
                log("answered with", len(candidates), "candidates")
            elif message["type"] == "candidate":
                text = message["candidate"]
                if not text:
                    await pc.addIceCandidate(None)
                    result["remote_end_of_candidates"] = True
                    continue
                candidate = candidate_from_sdp(text.split(":", 1)[1] if text.startswith("candidate:") else text)
                result.setdefault("remote_candidates", []).append(text)
                if candidate.protocol.lower() != "udp":
                    continue
                candidate.sdpMid = message.get("sdpMid")
                candidate.sdpMLineIndex = message.get("sdpMLineIndex")
                await pc.addIceCandidate(candidate)

    # Start-up is over: the test starts its clock now, and --timeout counts from here.
    emit({"type": "ready"})
    reading = asyncio.ensure_future(read_signaling())
    try:
        await asyncio.wait_for(finished.wait(), timeout=args.timeout)
    except asyncio.TimeoutError:
        result["error"] = f"timed out after {args.timeout} s"
    emit(result)
    reading.cancel()
    await pc.close()


asyncio.run(main())
