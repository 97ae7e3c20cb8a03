public import Foundation

/// A packet capture by Wireshark's `dumpcap` (Debian's `tshark` package) on every interface of one network
/// namespace, into a pcapng file that names each interface.
public final class PacketCapture: Sendable {
    /// The capture file (`LABEL.pcapng`).
    public let file: URL
    /// The interfaces captured on.
    public let interfaces: [String]
    private let process: BackgroundProcess

    private init(file: URL, interfaces: [String], process: BackgroundProcess) {
        self.file = file
        self.interfaces = interfaces
        self.process = process
    }

    /// Why captures cannot run here (not root, dumpcap or tshark missing), or nil.
    public static func unavailableReason() -> String? {
        NetworkNamespace.unavailableReason(tools: ["ip", "dumpcap", "tshark"])
    }

    /// Starts capturing on every interface of `namespace` that is up (lo included; one that is down carries no
    /// packet, and dumpcap refuses it: a kernel may add tunnel devices such as tunl0 to every namespace) into
    /// `directory/LABEL.pcapng`, and waits until dumpcap says it is capturing on all of them.
    public static func start(in namespace: String, label: String, directory: URL) async throws -> PacketCapture {
        let listed = try await Subprocess.run("ip", ["-n", namespace, "-o", "link", "show", "up"])
        // "2: a@if3: <BROADCAST,…> …": the name is the second field, without the peer suffix.
        let interfaces = listed.stdoutText.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 1 else { return nil }
            return String(fields[1].split(separator: "@")[0].trimmingCharacters(in: CharacterSet(charactersIn: ":")))
        }
        guard !interfaces.isEmpty else {
            throw MissingValue(description: "no interfaces in \(namespace): \(listed.stderrText)")
        }
        let file = directory.appendingPathComponent("\(label).pcapng")
        let process = try BackgroundProcess(
            "ip",
            ["netns", "exec", namespace, try Subprocess.resolve("dumpcap"), "-q", "-n", "-w", file.path]
                + interfaces.flatMap { ["-i", $0] })
        do {
            try await eventually("dumpcap capturing in \(namespace)", timeout: .seconds(60)) {
                if process.status != nil {
                    throw MissingValue(description: "dumpcap exited: \(process.errorOutput)")
                }
                return process.errorOutput.contains("Capturing on")
            }
        } catch {
            await process.stop()
            throw error
        }
        return PacketCapture(file: file, interfaces: interfaces, process: process)
    }

    /// Stops the capture (SIGTERM: dumpcap finishes the file) and returns it.
    @discardableResult
    public func finish() async -> URL {
        await process.stop(grace: .seconds(10))
        return file
    }
}
