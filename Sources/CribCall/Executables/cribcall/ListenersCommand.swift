import ArgumentParser
import CanonicalJSON
import CribCallStore
import DeviceIdentity
import Foundation

/// `cribcall listeners`: the listeners this monitor trusts.
struct ListenersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listeners",
        abstract: "List or revoke the listeners paired with this monitor.",
        discussion: """
            Works while `cribcall monitor` runs with the same data directory: a revoked listener is disconnected \
            within a second.
            """,
        subcommands: [List.self, Revoke.self]
    )

    /// `cribcall listeners list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the paired listeners.",
            discussion: """
                Text shows the certificate fingerprint shortened; --json prints one object per line with \
                "event":"listener" and the full fingerprint. Creates nothing when the data directory is empty.
                """
        )

        @OptionGroup var data: DataDirectoryOption

        @Flag(name: .long, help: "Print JSON lines instead of text.")
        var json = false

        func run() throws {
            try reportingFailures("listeners list") {
                let listeners = try data.existingDatabase()?.trustedListeners() ?? []
                if json {
                    for listener in listeners {
                        print(ListenersCommand.jsonObject(listener).canonicalString)
                    }
                } else {
                    print(ListenersCommand.table(listeners))
                }
            }
        }
    }

    /// `cribcall listeners revoke ID`.
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpair a listener; a running monitor disconnects it within a second.",
            discussion:
                "ID is a listenerId from `cribcall listeners list`, or a unique prefix of at least 4 characters."
        )

        @Argument(help: "The listener's id, or a unique prefix of it (at least 4 characters).")
        var id: String

        @OptionGroup var data: DataDirectoryOption

        func run() throws {
            try reportingFailures("listeners revoke") {
                // Nothing to revoke in a database that does not exist: do not create it just to say so.
                guard let database = try data.existingDatabase() else { throw ListenersCommand.unknown(id) }
                let listener = try ListenersCommand.resolve(id, among: try database.trustedListeners())
                guard try database.revokeListener(id: listener.listenerId) else {
                    // Revoked by someone else between the lookup and now.
                    throw ListenersCommand.unknown(id)
                }
                print(
                    "Revoked \(ListenersCommand.printable(listener.name)) (\(ListenersCommand.printable(listener.listenerId)))."
                        + " A running monitor disconnects it within a second."
                )
            }
        }
    }

    /// The shortest prefix accepted in place of a full listener id.
    static let minimumPrefixLength = 4

    /// Finds the listener `id` names: an exact id, else a unique prefix of at least ``minimumPrefixLength`` characters.
    static func resolve(_ id: String, among listeners: [TrustedListenerRecord]) throws -> TrustedListenerRecord {
        if let exact = listeners.first(where: { $0.listenerId == id }) { return exact }
        guard id.count >= minimumPrefixLength else { throw unknown(id) }
        let matches = listeners.filter { $0.listenerId.hasPrefix(id) }
        switch matches.count {
        case 0:
            throw unknown(id)
        case 1:
            return matches[0]
        default:
            let list = matches.map { "\(printable($0.listenerId)) (\(printable($0.name)))" }.joined(separator: ", ")
            throw CommandFailure("\(id) matches \(matches.count) listeners: \(list); give more of the id")
        }
    }

    static func unknown(_ id: String) -> CommandFailure {
        CommandFailure("no paired listener has id \(printable(id)); see `cribcall listeners list`")
    }

    /// `text` with control characters (which a listener could put in its name) shown as `\u{…}` escapes, so
    /// printing it cannot drive the terminal.
    static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func jsonObject(_ listener: TrustedListenerRecord) -> JSONValue {
        .object([
            "event": "listener",
            "listenerId": .string(listener.listenerId),
            "name": .string(listener.name),
            "certFingerprint": .string(listener.fingerprint.hex),
            "createdAt": .string(timestamp(listener.createdAt)),
        ])
    }

    /// ISO 8601 in UTC with milliseconds (the database's precision), e.g. `2025-01-31T08:15:00.000Z`.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The text listing: a header row and one aligned row per listener, or how to pair one.
    static func table(_ listeners: [TrustedListenerRecord]) -> String {
        guard !listeners.isEmpty else {
            return "No listeners are paired yet. Pair one with `cribcall monitor` and the CribCall listener app."
        }
        let rows =
            [["LISTENER ID", "NAME", "FINGERPRINT", "PAIRED AT"]]
            + listeners.map { listener in
                [
                    printable(listener.listenerId), printable(listener.name),
                    String(listener.fingerprint.hex.prefix(16)) + "…",
                    timestamp(listener.createdAt),
                ]
            }
        return TextTable.render(rows)
    }
}
