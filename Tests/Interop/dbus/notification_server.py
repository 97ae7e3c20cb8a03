#!/usr/bin/env python3
"""An independent freedesktop notification server for tests (jeepney==0.9.0, pure Python).

Connects to the bus at --address, owns org.freedesktop.Notifications, and prints one JSON object per line on
stdout: {"event": "ready", ...} once the name is owned, then {"event": "notify", ...} for every Notify call with
its arguments (app_name, replaces_id, app_icon, summary, body, actions — the flat [key, label, ...] list as
received —, hints, expire_timeout) and the id it returned. Ids increase from 1; a Notify that replaces a known id
keeps that id, as the specification says.

--no-reply-to-notify records Notify calls but never answers them (a hung daemon).
--capabilities lists what GetCapabilities returns (comma-separated; add "actions" for action buttons).
--click KEY plays a user who clicks the button KEY: right after answering a Notify whose actions contain KEY,
    the server emits ActionInvoked(id, KEY) and then NotificationClosed(id, 2), as unicast signals to the caller
    (as gnome-shell and dunst do), and prints {"event": "clicked", ...}.
--broadcast-signals emits those signals without a destination instead (servers that broadcast).
--signals-before-reply sends them (and the decoys) before the Notify reply instead of after it: the bus delivers
    them first, so the caller's libdbus has read and queued them by the time it returns the reply.
Before the genuine ActionInvoked of --click, each of these sends a decoy a client must ignore, with the key of
--decoy KEY (default: the clicked key; give another key the notification offers, so that a decoy taken for a click
would show):
--forge-first: a second connection (another unique name, not the owner of the service) sends ActionInvoked(id,
    DECOY) to the caller and as a broadcast, then waits for a reply from the bus to a call made after them, so that
    the bus has delivered both forged signals before the genuine one is even sent.
--unknown-id-first: the server sends ActionInvoked(DECOY) for an id it has not given to anyone and will not (a
    million above the next one: the next one may be the caller's next notification, and the caller cannot know
    whether a signal it reads with a Notify reply was sent before it).
--malformed-first: the server sends ActionInvoked with the wrong signatures (ss) and (u).
--click-after-close: after NotificationClosed, the server sends ActionInvoked(id, KEY) again, for a closed id.
Every signal sent is printed as {"event": "signal", ...}.
"""
import argparse
import json
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
EMITTER = DBusAddress(PATH, interface=NAME)
DISMISSED = 2  # NotificationClosed reason: dismissed by the user
UNKNOWN_ID_OFFSET = 1_000_000


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


def send_signal(connection, member, signature, body, destination, by="owner"):
    """Sends a signal of the notification interface; destination None broadcasts it."""
    signal = new_signal(EMITTER, member, signature, body)
    if destination is not None:
        signal.header.fields[HeaderFields.destination] = destination
    connection.send(signal)
    emit(event="signal", member=member, signature=signature, body=list(body), destination=destination, by=by)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--no-reply-to-notify", action="store_true")
    parser.add_argument("--capabilities", default="body,persistence")
    parser.add_argument("--click", metavar="KEY")
    parser.add_argument("--decoy", metavar="KEY")
    parser.add_argument("--broadcast-signals", action="store_true")
    parser.add_argument("--signals-before-reply", action="store_true")
    parser.add_argument("--forge-first", action="store_true")
    parser.add_argument("--unknown-id-first", action="store_true")
    parser.add_argument("--malformed-first", action="store_true")
    parser.add_argument("--click-after-close", action="store_true")
    args = parser.parse_args()

    connection = open_dbus_connection(bus=args.address)
    reply = connection.send_and_get_reply(message_bus.RequestName(NAME, 4))  # 4: DBUS_NAME_FLAG_DO_NOT_QUEUE
    if reply.body[0] != 1:  # 1: primary owner
        emit(event="error", message="could not own " + NAME, code=reply.body[0])
        return 1
    forger = open_dbus_connection(bus=args.address) if args.forge_first else None
    emit(event="ready", name=NAME, unique=connection.unique_name,
         forger=forger.unique_name if forger is not None else None)

    next_id = 1
    shown = set()
    capabilities = [c for c in args.capabilities.split(",") if c]

    def click(notification_id, caller):
        destination = None if args.broadcast_signals else caller
        key = args.click
        decoy = args.decoy or key
        if forger is not None:
            send_signal(forger, "ActionInvoked", "us", (notification_id, decoy), caller, by="forger")
            send_signal(forger, "ActionInvoked", "us", (notification_id, decoy), None, by="forger")
            forger.send_and_get_reply(message_bus.GetId())  # the bus has routed both signals before it answers
        if args.unknown_id_first:
            send_signal(connection, "ActionInvoked", "us", (next_id + UNKNOWN_ID_OFFSET, decoy), destination)
        if args.malformed_first:
            send_signal(connection, "ActionInvoked", "ss", (str(notification_id), decoy), destination)
            send_signal(connection, "ActionInvoked", "u", (notification_id,), destination)
        send_signal(connection, "ActionInvoked", "us", (notification_id, key), destination)
        send_signal(connection, "NotificationClosed", "uu", (notification_id, DISMISSED), destination)
        shown.discard(notification_id)
        if args.click_after_close:
            send_signal(connection, "ActionInvoked", "us", (notification_id, key), destination)
        emit(event="clicked", id=notification_id, key=key)

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
            clicked = args.click is not None and args.click in list(actions)[0::2]
            if clicked and args.signals_before_reply:
                click(notification_id, header.fields.get(HeaderFields.sender))
            if not args.no_reply_to_notify:
                connection.send(new_method_return(message, "u", (notification_id,)))
                if clicked and not args.signals_before_reply:
                    click(notification_id, header.fields.get(HeaderFields.sender))
        else:
            connection.send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (member or "",)))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (KeyboardInterrupt, BrokenPipeError, ConnectionResetError):
        pass
