import Foundation
import TestSupport
import Testing

/// CribAlert across a LAN of two network namespaces, with the real `cribcall` processes over QUIC: a monitor watching
/// its (test) camera, two parents listening in the other namespace. A triggered alert reaches both within a
/// second; one parent's "I am checking" reaches the other; an alert raised while the link is down is replayed
/// once it is back; a click on a desktop notification's button (a real session bus and notification server) acts
/// for everyone.
@Suite(.serialized, .heavy(cores: 1, "two network namespaces, avahi, a monitor with a camera, two listeners"))
struct CribAlertEndToEndTests {
    @Test("trigger → both listeners within a second; an action seen by the other parent; replayed after an outage")
    func alertsAcrossTheLAN() async throws {
        guard CribCallEndToEndTests.canRun("CribAlert end to end") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let lan = try TwoHouseholdDevices(network)
            defer { lan.removeData() }
            let dadDirectory = try Subprocess.temporaryDirectory("e2e-dad")
            defer { try? FileManager.default.removeItem(at: dadDirectory) }
            let (monitor, ready) = try await lan.startMonitor(
                ["--name", "Nursery", "--safety", "--video-source", "test"], audioSource: "test:silence")
            defer { Task { await monitor.stop() } }

            // Two parents pair by PIN, each typing the PIN the monitor shows.
            try await Self.pair("Mum", data: lan.listenerData, lan: lan, monitor: monitor, ready: ready)
            try await Self.pair(
                "Dad", data: ["--data-dir", dadDirectory.path], lan: lan, monitor: monitor, ready: ready)
            let mum = try network.start(network.b, lan.cribcall, ["listen", "--json"] + lan.listenerData)
            defer { Task { await mum.stop() } }
            // Dad's desktop: a session bus with a notification server (jeepney) that shows buttons and clicks
            // "mute" on the first bubble offering it.
            guard NotificationTestTools.available(for: "CribAlert's notification buttons end to end") else { return }
            let desktop = try await PrivateSessionBus.start()
            defer { Task { await desktop.stop() } }
            let notifications = try await NotificationServer.start(
                on: desktop, arguments: ["--capabilities", "body,actions", "--click", "mute"])
            defer { Task { await notifications.stop() } }
            let dad = try network.start(
                network.b, lan.cribcall, ["listen", "--json", "--data-dir", dadDirectory.path],
                environment: desktop.environment)
            defer { Task { await dad.stop() } }
            for listener in [mum, dad] {
                let active = await listener.line(timeout: .seconds(30)) { line in
                    lan.event(line) == "safety_status" && jsonObject(line)?["monitoring"] as? String == "active"
                }
                #expect(active != nil, "listen: \(listener.output.suffix(5)) \(listener.errorOutput)")
            }

            // A trigger reaches both parents within a second of the monitor raising it (the command returns once
            // it is raised).
            let started = ContinuousClock.now
            let trigger = try await Subprocess.run(
                lan.cribcall, ["alert", "trigger", "face_covered"] + lan.monitorData)
            #expect(trigger.status == 0, "trigger: \(trigger.stderrText)")
            var alertIds: [String] = []
            for listener in [mum, dad] {
                let alert = await listener.line(timeout: .seconds(1)) { line in
                    lan.event(line) == "safety_alert" && jsonObject(line)?["kind"] as? String == "face_covered"
                }
                #expect(alert != nil, "not within a second of the trigger: \(listener.output.suffix(4))")
                if let id = alert.flatMap(jsonObject)?["alertId"] as? String { alertIds.append(id) }
            }
            print(
                "CribAlert end to end: `cribcall alert trigger` started → both listeners: \(ContinuousClock.now - started)"
            )

            // Mum says she is checking; Dad's listener shows it.
            let id = try #require(alertIds.first)
            #expect(Set(alertIds).count == 1, "one alert: \(alertIds)")
            let act = try await network.run(
                network.b, lan.cribcall, ["alert", "act", "checking", id] + lan.listenerData)
            #expect(
                act.status == 0 && act.stdoutText.contains("Mum is checking"), "\(act.stdoutText) \(act.stderrText)")
            let seen = await dad.line(timeout: .seconds(5)) { line in
                lan.event(line) == "alert_updated" && jsonObject(line)?["by"] as? String == "Mum"
            }
            #expect(seen.flatMap(jsonObject)?["state"] as? String == "checking", "dad: \(dad.output.suffix(4))")

            // The link goes down; an alert raised meanwhile is replayed to both once it is back.
            try await network.setLink(up: false)
            let lost = await mum.line(timeout: .seconds(20)) { lan.event($0) == "link_lost" }
            #expect(lost != nil, "no link_lost: \(mum.output.suffix(4))")
            let during = try await Subprocess.run(lan.cribcall, ["alert", "trigger", "stillness"] + lan.monitorData)
            #expect(during.status == 0, "trigger during the outage: \(during.stderrText)")
            try await network.setLink(up: true)
            for listener in [mum, dad] {
                let replayed = await listener.line(timeout: .seconds(40)) { line in
                    let object = jsonObject(line)
                    return lan.event(line) == "safety_alert" && object?["kind"] as? String == "stillness"
                        && object?["replayed"] as? Bool == true
                }
                #expect(replayed != nil, "not replayed: \(listener.output.suffix(6)) \(listener.errorOutput)")
                let copies = listener.output.filter { line in
                    lan.event(line) == "safety_alert" && jsonObject(line)?["kind"] as? String == "stillness"
                }
                #expect(copies.count == 1, "shown once: \(copies)")
            }

            // Dad's desktop showed the alert with the seed's buttons; a click on "Mute for 5 minutes" on the crying
            // bubble mutes crying for everyone: Mum's listener shows it.
            let covered = notifications.notifications.first { ($0["summary"] as? String)?.contains("face") == true }
            #expect(
                covered?["actions"] as? [String]
                    == ["view", "View live camera", "checking", "I am checking", "okay", "Mark as okay"],
                "\(notifications.notifications)")
            let crying = try await Subprocess.run(lan.cribcall, ["alert", "trigger", "crying"] + lan.monitorData)
            #expect(crying.status == 0, "trigger crying: \(crying.stderrText)")
            let muted = await mum.line(timeout: .seconds(10)) { line in
                lan.event(line) == "alert_updated" && jsonObject(line)?["state"] as? String == "muted"
            }
            #expect(
                muted.flatMap(jsonObject)?["by"] as? String == "Dad",
                "mum: \(mum.output.suffix(4)); dad's desktop: \(notifications.events("clicked")) \(dad.errorOutput)")
        }
    }

    /// `cribcall pair --pin` in the listeners' namespace, typing the PIN the monitor shows for it.
    static func pair(
        _ name: String, data: [String], lan: TwoHouseholdDevices, monitor: BackgroundProcess,
        ready: TwoHouseholdDevices.Ready
    ) async throws {
        let shown = monitor.output.filter { lan.event($0) == "pin" }.count
        let pair = try lan.network.start(
            lan.network.b, lan.cribcall,
            [
                "pair", "--pin", "--address", "\(MDNSNetwork.addressA):\(ready.port)", "--fingerprint",
                ready.fingerprint,
                "--monitor-name", "Nursery", "--name", name,
            ] + data, acceptsInput: true)
        try await eventually("the monitor shows a PIN for \(name)", timeout: .seconds(20)) {
            monitor.output.filter { lan.event($0) == "pin" }.count > shown
        }
        let pin = try #require(monitor.output.last { lan.event($0) == "pin" }.flatMap(jsonObject)?["pin"] as? String)
        pair.send(pin + "\n")
        #expect(await pair.waitForExit(timeout: .seconds(20)) == 0, "pair \(name): \(pair.errorOutput)")
        await pair.stop()
    }
}
