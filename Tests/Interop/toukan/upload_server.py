#!/usr/bin/env python3
"""A minimal, independent `POST /upload` server (Python standard library only) for the client's network-namespace
test: prints one JSON line per event on stdout — {"event":"ready"} once listening, {"event":"request","key":…} as
soon as a request's headers arrive (before its body), {"event":"stored","key":…,"bytes":N,"memory_id":…} — and
answers 201 with the seed's receipt. A repeated Idempotency-Key gets the first memory.

usage: upload_server.py HOST PORT
"""
import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

memories = {}


def emit(**event):
    print(json.dumps(event), flush=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        key = self.headers.get("Idempotency-Key")
        emit(event="request", key=key)
        if self.path != "/upload":
            return self.answer(404, {"error": "not_found", "message": "only POST /upload"})
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if len(body) != length or b'name="file"' not in body:
            return self.answer(400, {"error": "bad_request", "message": "no complete file part"})
        memory_id = memories.get(key) or str(uuid.uuid4())
        if key:
            memories[key] = memory_id
        emit(event="stored", key=key, bytes=length, memory_id=memory_id)
        self.answer(201, {"memory_id": memory_id, "status": "processing",
                          "message": "Audio uploaded and processing enqueued"})

    def answer(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *arguments):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler)
    emit(event="ready")
    server.serve_forever()
