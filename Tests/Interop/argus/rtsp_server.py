#!/usr/bin/python3
"""A network camera for tests: GStreamer's own RTSP server (gst-rtsp-server, through PyGObject) streaming a moving
test pattern as H.264, so `argus-hub --camera rtsp://…` is tested against an RTSP implementation nobody here wrote.

    rtsp_server.py [--port 0] [--path /garden] [--width 640 --height 360]

Binds 127.0.0.1 (--port 0: any free port), prints {"event": "ready", "url": "rtsp://127.0.0.1:PORT/garden"} once it
listens, and serves until SIGTERM/SIGINT (exit 0). The stream: videotestsrc pattern=ball (always moving) at 15 fps,
x264enc tune=zerolatency, rtph264pay; every client gets the same shared media.

Runs on Debian's Python (/usr/bin/python3) with python3-gi and gir1.2-gst-rtsp-server-1.0 (`make test` installs
them); exit status 2 when they are missing, with what to install.
"""

import argparse
import json
import signal
import socket
import sys


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--path", default="/garden")
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=360)
    args = ap.parse_args()
    try:
        import gi
        gi.require_version("Gst", "1.0")
        gi.require_version("GstRtspServer", "1.0")
        from gi.repository import GLib, Gst, GstRtspServer
    except (ImportError, ValueError) as error:
        print(f"rtsp_server.py: {error}: apt-get install python3-gi gir1.2-gst-rtsp-server-1.0", file=sys.stderr)
        return 2
    Gst.init(None)
    port = args.port or free_port()
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        f"( videotestsrc is-live=true pattern=ball ! video/x-raw,width={args.width},height={args.height},"
        "framerate=15/1 ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 ! rtph264pay name=pay0 pt=96 )")
    factory.set_shared(True)
    server.get_mount_points().add_factory(args.path, factory)
    if server.attach(None) == 0:
        print(f"rtsp_server.py: cannot listen on 127.0.0.1:{port}", file=sys.stderr)
        return 2
    loop = GLib.MainLoop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signum, loop.quit)
    print(json.dumps({"event": "ready", "url": f"rtsp://127.0.0.1:{port}{args.path}"}), flush=True)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
