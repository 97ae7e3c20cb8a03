#!/usr/bin/env python3
"""An independent freedesktop notification server for tests (jeepney==0.9.0, pure Python).

Connects to the bus at --address, owns org.freedesktop.Notifications, and prints one JSON object per line on
stdout: {"event": "ready", ...} once the name is owned, then {"event": "notify", ...} for every Notify call with
its arguments (app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout) and the id it
returned. Ids increase from 1; a Notify that replaces a known id keeps that id, as the specification says.

--no-reply-to-notify records Notify calls but never answers them (a hung daemon).
--capabilities lists what GetCapabilities returns (comma-separated).
"""
import argparse
import json
import sys

from jeepney import HeaderFields, MessageType, new_error, new_method_return
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


def emit(**fields):
    sys.stdout.write(json.dumps(fields, sort_keys=True) + "\n")
    sys.stdout.flush()


def plain(value):
    """Variants arrive as (signature, value) tuples; JSON gets [signature, value]."""
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--no-reply-to-notify", action="store_true")
    parser.add_argument("--capabilities", default="body,persistence")
    args = parser.parse_args()

    connection = open_dbus_connection(bus=args.address)
    reply = connection.send_and_get_reply(message_bus.RequestName(NAME, 4))  # 4: DBUS_NAME_FLAG_DO_NOT_QUEUE
    if reply.body[0] != 1:  # 1: primary owner
        emit(event="error", message="could not own " + NAME, code=reply.body[0])
        return 1
    emit(event="ready", name=NAME, unique=connection.unique_name)

    next_id = 1
    shown = set()
    capabilities = [c for c in args.capabilities.split(",") if c]
    while True:
        message = connection.receive()
        header = message.header
        if header.message_type != MessageType.method_call:
            continue
        member = header.fields.get(HeaderFields.member)
        interface = header.fields.get(HeaderFields.interface)
        path = header.fields.get(HeaderFields.path)
        if path != PATH or interface not in (NAME, None):
            connection.send(new_error(message, "org.freedesktop.DBus.Error.UnknownObject", "s", ("no such object",)))
            continue
        if member == "GetCapabilities":
            connection.send(new_method_return(message, "as", (capabilities,)))
        elif member == "GetServerInformation":
            connection.send(new_method_return(message, "ssss", ("homeapps-test-server", "HomeApps", "1.0", "1.2")))
        elif member == "CloseNotification":
            shown.discard(message.body[0])
            connection.send(new_method_return(message))
        elif member == "Notify":
            app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout = message.body
            if replaces_id in shown:
                notification_id = replaces_id
            else:
                notification_id = next_id
                next_id += 1
            shown.add(notification_id)
            emit(event="notify", signature=header.fields.get(HeaderFields.signature), app_name=app_name,
                 replaces_id=replaces_id, app_icon=app_icon, summary=summary, body=body, actions=list(actions),
                 hints={k: plain(v) for k, v in hints.items()}, expire_timeout=expire_timeout,
                 id=None if args.no_reply_to_notify else notification_id)
            if not args.no_reply_to_notify:
                connection.send(new_method_return(message, "u", (notification_id,)))
        else:
            connection.send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (member or "",)))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (KeyboardInterrupt, BrokenPipeError, ConnectionResetError):
        pass
