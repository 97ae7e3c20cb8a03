import Foundation
import TestSupport
import Testing

/// A connection under 20 % packet loss in each direction, between two network namespaces.
///
/// The kernel here has no `sch_netem`, so the loss is made with nftables (`numgen random mod 100 < 20 drop` on each
/// namespace's input hook): random, independent drops, which is what netem's `loss 20%` does.
@Suite(
    "QUIC under 20 % packet loss", .serialized, .heavy("network namespaces with netem loss"),
    .enabled(if: NetworkNamespaces.available(for: "the packet-loss test")))
struct QUICLossTests {
    @Test("a connection completes and exchanges 1,000 frames with 20 % of packets dropped each way")
    func thousandFramesUnderLoss() async throws {
        let namespaces = try await NetworkNamespaces(lossPercent: 20)
        defer { namespaces.remove() }
        let probe = try Subprocess.builtProduct("quic-probe")
        let server = try BackgroundProcess(
            "ip",
            [
                "netns", "exec", namespaces.server, probe, "server",
                "--host", namespaces.serverAddress,
            ])
        defer { Task { await server.stop() } }
        let listening = try await server.ready("quic-probe server") { $0.contains(#""event":"listening""#) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listening.utf8)) as? [String: Any])
        let port = try #require(object["port"] as? Int)
        let fingerprint = try #require(object["fingerprint"] as? String)

        let client = try BackgroundProcess(
            "ip",
            [
                "netns", "exec", namespaces.client, probe, "client",
                "--host", namespaces.serverAddress, "--port", "\(port)",
                "--pin", fingerprint, "--frames", "1000",
            ])
        let status = await client.waitForExit(timeout: .seconds(120))
        #expect(status == 0, "client: \(client.output) \(client.errorOutput)")
        let result = client.output.first { $0.contains(#""event":"result""#) }
        #expect(result?.contains(#""frames":1000"#) == true, "\(client.output)")
        let dropped = await namespaces.droppedPackets()
        #expect(dropped > 100, "the loss rules must really have dropped packets (dropped \(dropped))")
        await server.stop()
        print("loss test: \(result ?? "-"), packets dropped by the loss rules: \(dropped)")
    }
}

struct SetupError: Error, CustomStringConvertible {
    var description: String
}

/// Two network namespaces joined by a veth pair, with random packet loss on both sides.
struct NetworkNamespaces {
    let server: String
    let client: String
    let serverAddress: String
    let clientAddress: String

    /// Whether the test can run: root, with `ip` and `nft`. When it cannot, says so loudly.
    static func available(for test: String) -> Bool {
        let root = getuid() == 0
        let tools = (try? Subprocess.resolve("ip")) != nil && (try? Subprocess.resolve("nft")) != nil
        if root && tools { return true }
        FileHandle.standardError.write(
            Data(
                "WARNING: SKIPPING \(test): it needs root and the ip and nft commands (make test installs them; CI runs as root)\n"
                    .utf8))
        return false
    }

    init(lossPercent: Int) async throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        server = "cc-s-\(tag)"
        client = "cc-c-\(tag)"
        let subnet = "10.\(Int.random(in: 64...127)).\(Int.random(in: 0...255))"
        serverAddress = "\(subnet).1"
        clientAddress = "\(subnet).2"
        let serverLink = "ccs\(tag.prefix(8))"
        let clientLink = "ccc\(tag.prefix(8))"
        let steps: [[String]] = [
            ["ip", "netns", "add", server],
            ["ip", "netns", "add", client],
            ["ip", "link", "add", serverLink, "type", "veth", "peer", "name", clientLink],
            ["ip", "link", "set", serverLink, "netns", server],
            ["ip", "link", "set", clientLink, "netns", client],
            ["ip", "-n", server, "addr", "add", "\(serverAddress)/24", "dev", serverLink],
            ["ip", "-n", client, "addr", "add", "\(clientAddress)/24", "dev", clientLink],
            ["ip", "-n", server, "link", "set", serverLink, "up"],
            ["ip", "-n", client, "link", "set", clientLink, "up"],
            ["ip", "-n", server, "link", "set", "lo", "up"],
            ["ip", "-n", client, "link", "set", "lo", "up"],
        ]
        for step in steps {
            let result = try await Subprocess.run(step[0], Array(step.dropFirst()))
            guard result.status == 0 else {
                Self.remove(server, client)
                throw SetupError(description: "\(step.joined(separator: " ")): \(result.stderrText)")
            }
        }
        let rules = """
            table inet cribcall_loss {
                chain input {
                    type filter hook input priority 0; policy accept;
                    meta l4proto udp numgen random mod 100 < \(lossPercent) counter drop
                }
            }
            """
        for namespace in [server, client] {
            let result = try await Subprocess.run(
                "ip", ["netns", "exec", namespace, "nft", "-f", "-"], stdin: Array(rules.utf8)
            )
            guard result.status == 0 else {
                Self.remove(server, client)
                throw SetupError(description: "nft in \(namespace): \(result.stderrText)")
            }
        }
    }

    /// Packets the loss rules dropped in both namespaces.
    func droppedPackets() async -> Int {
        var total = 0
        for namespace in [server, client] {
            let listing =
                (try? await Subprocess.run("ip", ["netns", "exec", namespace, "nft", "list", "ruleset"]))?
                .stdoutText ?? ""
            total +=
                listing.components(separatedBy: "counter packets ").dropFirst().first?
                .split(separator: " ").first.flatMap { Int($0) } ?? 0
        }
        return total
    }

    func remove() {
        Self.remove(server, client)
    }

    /// Blocking (it runs from `defer`): two quick `ip netns del`.
    static func remove(_ namespaces: String...) {
        for namespace in namespaces {
            _ = try? Subprocess.runBlocking("ip", ["netns", "del", namespace])
        }
    }
}
