// mdns-probe: drives the ServiceDiscovery adapter from the command line for tests (inside network namespaces).
// Prints one JSON object per line on stdout, each with an "event" field.
//
//   mdns-probe advertise --id ID --name NAME --fingerprint FP --port P [--rename NEW --after S]
//   mdns-probe browse [--seconds S]
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
            usage: mdns-probe advertise --id ID --name NAME --fingerprint FP --port P [--rename NEW --after SECONDS]
                   mdns-probe browse [--seconds SECONDS]

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

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { usage() }
var options: [String: String] = [:]
var index = 1
while index < arguments.count {
    guard arguments[index].hasPrefix("--"), index + 1 < arguments.count else { usage() }
    options[String(arguments[index].dropFirst(2))] = arguments[index + 1]
    index += 2
}

let discovery = DNSSDServiceDiscovery()
switch command {
case "advertise":
    guard let id = options["id"], let name = options["name"], let fingerprint = options["fingerprint"],
        let port = options["port"].flatMap(Int.init)
    else { usage() }
    let advertisement = MonitorAdvertisement(monitorId: id, monitorName: name, certFingerprint: fingerprint, port: port)
    let handle: any AdvertisementHandle
    do {
        handle = try await discovery.advertise(advertisement)
    } catch {
        fail(error)
    }
    emit(["event": "advertised", "monitorId": id, "monitorName": name])
    if let newName = options["rename"] {
        let seconds = options["after"].flatMap(Double.init) ?? 1
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
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
case "browse":
    let seconds = options["seconds"].flatMap(Double.init) ?? 10
    let browse = Task {
        do {
            for try await event in discovery.browse() {
                switch event {
                case .found(let monitor): emit(json(monitor).merging(["event": "found"]) { $1 })
                case .updated(let monitor): emit(json(monitor).merging(["event": "updated"]) { $1 })
                case .lost(let monitorId): emit(["event": "lost", "monitorId": monitorId])
                }
            }
        } catch let error as ServiceDiscoveryError {
            fail(error)
        }
    }
    try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
    browse.cancel()
    emit(["event": "done"])
default:
    usage()
}
