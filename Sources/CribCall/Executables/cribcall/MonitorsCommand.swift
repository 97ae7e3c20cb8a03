import ArgumentParser
import CanonicalJSON
import CribCallListener
import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import Logging
import QUIC

/// `cribcall monitors`: the monitors this listener trusts.
struct MonitorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitors",
        abstract: "List or forget the monitors this listener is paired with.",
        subcommands: [List.self, Forget.self]
    )

    /// `cribcall monitors list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the paired monitors.",
            discussion: """
                --json prints one object per line with "event":"monitor", the full fingerprint, the last known \
                address and the last alert received (seq).
                """
        )

        @OptionGroup var data: DataDirectoryOption

        @Flag(name: .long, help: "Print JSON lines instead of text.")
        var json = false

        func run() throws {
            try reportingFailures("monitors list") {
                let monitors = try data.existingDatabase()?.trustedMonitors() ?? []
                if json {
                    for monitor in monitors { print(MonitorsCommand.jsonObject(monitor).canonicalString) }
                } else {
                    print(MonitorsCommand.table(monitors))
                }
            }
        }
    }

    /// `cribcall monitors forget ID`.
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpair a monitor: tell it (UNPAIR) when it can be reached, and forget it here either way.",
            discussion:
                "ID is a monitorId from `cribcall monitors list`, a unique prefix of at least 4 characters, or its name."
        )

        @Argument(help: "The monitor's id, a unique prefix of it (at least 4 characters), or its name.")
        var id: String

        @OptionGroup var data: DataDirectoryOption

        func run() async throws {
            guard let database = try data.existingDatabase() else {
                throw fail(MonitorsCommand.unknown(id))
            }
            let monitor: TrustedMonitorRecord
            do {
                monitor = try MonitorsCommand.resolve(id, among: try database.trustedMonitors())
            } catch let error as CommandFailure {
                throw fail(error)
            }
            let identity = try DeviceIdentityStore(directory: data.url).loadOrCreate().identity
            let service = ListenerService(
                identity: identity, name: ProcessInfo.processInfo.hostName, database: database,
                connector: try QUICConnector(identity: identity))
            let label = "\"\(ListenersCommand.printable(monitor.name))\" (\(monitor.monitorId))"
            switch try await service.forget(monitor) {
            case .monitorConfirmed:
                print("Forgot \(label); the monitor confirmed it no longer trusts this listener.")
            case .monitorNotTold(let reason):
                print(
                    "Forgot \(label) here, but the monitor could not be told (\(reason)); "
                        + "revoke this listener there with `cribcall listeners revoke`.")
            }
        }

        private func fail(_ failure: CommandFailure) -> ExitCode {
            Logger(label: "cribcall monitors forget").warning("\(failure.message)")
            return ExitCode.failure
        }
    }

    /// Finds the monitor `id` names: an exact id or name, else a unique id prefix of at least 4 characters.
    static func resolve(_ id: String, among monitors: [TrustedMonitorRecord]) throws -> TrustedMonitorRecord {
        if let exact = monitors.first(where: { $0.monitorId == id }) { return exact }
        let named = monitors.filter { $0.name == id }
        if named.count == 1 { return named[0] }
        guard id.count >= ListenersCommand.minimumPrefixLength || named.count > 1 else { throw unknown(id) }
        let matches = named.count > 1 ? named : monitors.filter { $0.monitorId.hasPrefix(id) }
        switch matches.count {
        case 0:
            throw unknown(id)
        case 1:
            return matches[0]
        default:
            let list = matches.map { "\($0.monitorId) (\(ListenersCommand.printable($0.name)))" }
                .joined(separator: ", ")
            throw CommandFailure(
                "\(ListenersCommand.printable(id)) matches \(matches.count) monitors: \(list); give the id")
        }
    }

    static func unknown(_ id: String) -> CommandFailure {
        CommandFailure(
            "no paired monitor has id or name \(ListenersCommand.printable(id)); see `cribcall monitors list`")
    }

    static func jsonObject(_ monitor: TrustedMonitorRecord) -> JSONValue {
        .object([
            "event": "monitor",
            "monitorId": .string(monitor.monitorId),
            "name": .string(monitor.name),
            "certFingerprint": .string(monitor.fingerprint.hex),
            "host": monitor.lastKnownHost.map(JSONValue.string) ?? .null,
            "port": monitor.lastKnownPort.map { .number(Double($0)) } ?? .null,
            "lastSeq": .number(Double(monitor.lastSeq)),
            "createdAt": .string(ListenersCommand.timestamp(monitor.createdAt)),
        ])
    }

    /// The text listing: a header row and one aligned row per monitor, or how to pair one.
    static func table(_ monitors: [TrustedMonitorRecord]) -> String {
        guard !monitors.isEmpty else {
            return "No monitors are paired yet. Find one with `cribcall scan`, then `cribcall pair`."
        }
        let rows =
            [["MONITOR ID", "NAME", "ADDRESS", "FINGERPRINT", "PAIRED AT"]]
            + monitors.map { monitor in
                let address =
                    monitor.lastKnownHost.map { host in
                        (host.contains(":") ? "[\(host)]" : host) + (monitor.lastKnownPort.map { ":\($0)" } ?? "")
                    } ?? "unknown"
                return [
                    monitor.monitorId, ListenersCommand.printable(monitor.name), address,
                    String(monitor.fingerprint.hex.prefix(16)) + "…", ListenersCommand.timestamp(monitor.createdAt),
                ]
            }
        return TextTable.render(rows)
    }
}
