"""An independent tus 1.0 client (tuspy) against toukan-server: upload some chunks, cut a PATCH mid-body on a raw
socket, then resume with a fresh uploader from the upload's URL (as a client restarted after a kill would).

usage: tus_resume.py BASE_URL FILE CHUNK_SIZE CHUNKS_BEFORE_CUT
prints one JSON line: {"url", "offset_before_cut", "offset_after_cut", "resumed_at", "size", "memory_id"}
"""
import http.client
import json
import os
import sys
import time
import urllib.parse

import requests
from tusclient import client

base, path, chunk_size, chunks_before_cut = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
size = os.path.getsize(path)
tus = client.TusClient(base + "/files/")

first = tus.uploader(
    path, chunk_size=chunk_size, upload_checksum=True,
    metadata={"filename": os.path.basename(path), "filetype": "audio/mp4"})
for _ in range(chunks_before_cut):
    first.upload_chunk()
url = first.url
offset_before_cut = first.offset

# A PATCH that promises a whole chunk and sends half of it, then the connection goes away.
parts = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
connection.putrequest("PATCH", parts.path)
connection.putheader("Tus-Resumable", "1.0.0")
connection.putheader("Upload-Offset", str(offset_before_cut))
connection.putheader("Content-Type", "application/offset+octet-stream")
connection.putheader("Content-Length", str(chunk_size))
connection.endheaders()
with open(path, "rb") as f:
    f.seek(offset_before_cut)
    connection.send(f.read(chunk_size // 2))
time.sleep(0.2)
connection.sock.close()

# The server keeps what arrived (no checksum was promised); wait until it has taken it in.
headers = {"Tus-Resumable": "1.0.0"}
deadline = time.monotonic() + 30
offset_after_cut = offset_before_cut
while time.monotonic() < deadline:
    offset_after_cut = int(requests.head(url, headers=headers).headers["Upload-Offset"])
    if offset_after_cut > offset_before_cut:
        break
    time.sleep(0.1)

# A new uploader from the URL alone: tuspy asks HEAD for the offset and continues from there.
second = tus.uploader(path, url=url, chunk_size=chunk_size, upload_checksum=True)
resumed_at = second.offset
second.upload()
memory_id = requests.head(url, headers=headers).headers.get("Memory-Id")
print(json.dumps({
    "url": url, "offset_before_cut": offset_before_cut, "offset_after_cut": offset_after_cut,
    "resumed_at": resumed_at, "size": size, "memory_id": memory_id}))
