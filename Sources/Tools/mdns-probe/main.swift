// mdns-probe: drives the discovery adapters from the command line for tests (inside network namespaces).
// Prints one JSON object per line on stdout, each with an "event" field.
//
// Generic DNS-SD (the ServiceDiscovery adapter):
//   mdns-probe register --name NAME --type TYPE [--type TYPE…] --port P [--txt KEY=VALUE…]
//                       [--set-txt KEY=VALUE… --after S]
//   mdns-probe browse --type TYPE [--type TYPE…] [--seconds S]
// CribCall monitors (PROTOCOL.md §10, the CribCallDiscovery adapter over it):
//   mdns-probe advertise-monitor --id ID --name NAME --fingerprint FP --port P [--rename NEW --after S]
//   mdns-probe browse-monitors [--seconds S]
import CribCallDiscovery
import CribCallProtocol
import Foundation
import ServiceDiscovery

func emit(_ object: [String: Any]) {
    guard
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

func fail(_ error: ServiceDiscoveryError) -> Never {
    emit(["event": "error", "code": error.code.description, "message": error.message])
    exit(1)
}

func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            """
            usage: mdns-probe register --name NAME --type TYPE… --port P [--txt KEY=VALUE…] [--set-txt KEY=VALUE… --after S]
                   mdns-probe browse --type TYPE… [--seconds SECONDS]
                   mdns-probe advertise-monitor --id ID --name NAME --fingerprint FP --port P [--rename NEW --after S]
                   mdns-probe browse-monitors [--seconds SECONDS]

            """.utf8))
    exit(2)
}

func json(_ monitor: DiscoveredMonitor) -> [String: Any] {
    [
        "monitorId": monitor.monitorId, "monitorName": monitor.monitorName,
        "certFingerprint": monitor.certFingerprint, "port": monitor.port, "hosts": monitor.hosts,
        "serviceTypes": monitor.serviceTypes.sorted(),
    ]
}

func json(_ instance: ServiceInstance) -> [String: Any] {
    [
        "type": instance.id.type, "name": instance.id.name, "port": instance.port, "addresses": instance.addresses,
        "txt": instance.txt.entries.map { entry in entry.value.map { "\(entry.key)=\($0)" } ?? entry.key },
    ]
}

/// `KEY=VALUE` arguments as a TXT record, in order.
func txt(_ arguments: [String]) -> TXTRecord {
    TXTRecord(
        arguments.map { argument in
            guard let equals = argument.firstIndex(of: "=") else { usage() }
            return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
        })
}

func sleep(seconds: Double) async {
    try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
}

/// Reports what `events` yields for `seconds`, then `done`.
func report<Element: Sendable>(
    _ events: AsyncThrowingStream<Element, any Error>,
    for seconds: Double,
    _ line: @escaping @Sendable (Element) -> [String: Any]
) async {
    let browse = Task {
        do {
            for try await event in events { emit(line(event)) }
        } catch let error as ServiceDiscoveryError {
            fail(error)
        }
    }
    await sleep(seconds: seconds)
    browse.cancel()
    emit(["event": "done"])
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { usage() }
var options: [String: [String]] = [:]
var index = 1
while index < arguments.count {
    guard arguments[index].hasPrefix("--"), index + 1 < arguments.count else { usage() }
    options[String(arguments[index].dropFirst(2)), default: []].append(arguments[index + 1])
    index += 2
}

@MainActor func value(_ option: String) -> String? { options[option]?.last }
let after = value("after").flatMap(Double.init) ?? 1
let seconds = value("seconds").flatMap(Double.init) ?? 10

let discovery = DNSSDServiceDiscovery()
switch command {
case "register":
    guard let name = value("name"), let types = options["type"], let port = value("port").flatMap(Int.init) else {
        usage()
    }
    var advertisement = ServiceAdvertisement(name: name, types: types, port: port, txt: txt(options["txt"] ?? []))
    let handle: any AdvertisementHandle
    do {
        handle = try await discovery.advertise(advertisement)
    } catch {
        fail(error)
    }
    emit(["event": "registered", "name": name])
    if let entries = options["set-txt"] {
        await sleep(seconds: after)
        advertisement.txt = txt(entries)
        do {
            try await handle.update(advertisement)
        } catch {
            fail(error)
        }
        emit(["event": "updated", "name": name])
    }
    while true { try? await Task.sleep(for: .seconds(3600)) }
case "browse":
    guard let types = options["type"] else { usage() }
    await report(discovery.browse(types), for: seconds) { instances in
        ["event": "instances", "instances": instances.map(json)]
    }
case "advertise-monitor":
    guard let id = value("id"), let name = value("name"), let fingerprint = value("fingerprint"),
        let port = value("port").flatMap(Int.init)
    else { usage() }
    let advertisement = MonitorAdvertisement(monitorId: id, monitorName: name, certFingerprint: fingerprint, port: port)
    let handle: MonitorAdvertisementHandle
    do {
        handle = try await discovery.advertise(advertisement)
    } catch {
        fail(error)
    }
    emit(["event": "advertised", "monitorId": id, "monitorName": name])
    if let newName = value("rename") {
        await sleep(seconds: after)
        var renamed = advertisement
        renamed.monitorName = newName
        do {
            try await handle.update(renamed)
        } catch {
            fail(error)
        }
        emit(["event": "renamed", "monitorId": id, "monitorName": newName])
    }
    while true { try? await Task.sleep(for: .seconds(3600)) }
case "browse-monitors":
    await report(discovery.browseMonitors(), for: seconds) { event in
        switch event {
        case .found(let monitor): json(monitor).merging(["event": "found"]) { $1 }
        case .updated(let monitor): json(monitor).merging(["event": "updated"]) { $1 }
        case .lost(let monitorId): ["event": "lost", "monitorId": monitorId]
        }
    }
default:
    usage()
}
