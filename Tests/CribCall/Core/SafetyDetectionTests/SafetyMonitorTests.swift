import CribCallProtocol
import SafetyDetection
import Testing

/// The judgement over time, fed measurements directly (the frames themselves are FrameAnalyzerTests' business).
@Suite("SafetyMonitor: states, movement, stillness, face, position, crying, mutes")
struct SafetyMonitorTests {
    static func measurement(
        changed: Double = 0, places: [FrameAnalyzer.Place] = [], judgement: FrameAnalyzer.Judgement = .judgeable
    ) -> FrameAnalyzer.Measurement {
        FrameAnalyzer.Measurement(
            meanLevel: 120, spread: 30, changedFraction: changed, changedPlaces: places, lightChanged: false,
            edgeFraction: 0.2, judgement: judgement)
    }

    static let face = FaceBox(x: 0.45, y: 0.4, width: 0.1, height: 0.12)

    /// A monitor fed at 5 frames a second: `feed(seconds:)` runs frames (with `changed` and `faces` per frame time)
    /// and returns every action, stamped with its time.
    struct Run {
        var monitor: SafetyMonitor
        var now: Duration = .zero
        var actions: [(at: Duration, action: SafetyMonitor.Action)] = []

        init(settings: SafetyMonitor.Settings = SafetyMonitor.Settings()) {
            monitor = SafetyMonitor(settings: settings)
        }

        mutating func send(_ event: SafetyMonitor.Event) {
            for action in monitor.handle(event) { actions.append((now, action)) }
        }

        mutating func feed(
            seconds: Double, changed: (Duration) -> Double = { _ in 0 },
            places: [FrameAnalyzer.Place] = [],
            judgement: FrameAnalyzer.Judgement = .judgeable, faces: (Duration) -> [FaceBox]? = { _ in nil }
        ) {
            let end = now + .milliseconds(Int(seconds * 1000))
            while now < end {
                now += .milliseconds(200)
                let changedNow = changed(now)
                send(
                    .frame(
                        measurement(changed: changedNow, places: changedNow > 0 ? places : [], judgement: judgement),
                        faces: faces(now), at: now))
            }
        }

        mutating func wait(seconds: Double) {
            let end = now + .milliseconds(Int(seconds * 1000))
            while now < end {
                now += .milliseconds(250)
                send(.tick(at: now))
            }
        }

        var alerts: [(at: Duration, kind: SafetyAlertKind, confidence: Double, detector: String)] {
            actions.compactMap { entry in
                if case .alert(let kind, let confidence, let detector) = entry.action {
                    return (entry.at, kind, confidence, detector)
                }
                return nil
            }
        }

        var statuses: [(at: Duration, status: SafetyMonitor.Status)] {
            actions.compactMap { entry in
                if case .status(let status) = entry.action { return (entry.at, status) }
                return nil
            }
        }

        var lastStatus: SafetyMonitor.Status? { statuses.last?.status }
    }

    @Test("paused until frames come, active with them, paused within 2 s of the last, active again by itself")
    func cameraComesAndGoes() {
        var run = Run()
        run.send(.tick(at: .zero))
        #expect(run.lastStatus == .init(monitoring: .paused, reason: "waiting for the camera"))
        run.feed(seconds: 1)
        #expect(run.lastStatus?.monitoring == .active)
        let lastFrame = run.now
        run.wait(seconds: 3)
        let paused = run.statuses.first { $0.status.monitoring == .paused && $0.at > lastFrame }
        #expect(paused?.status.reason == "camera disconnected")
        #expect(paused.map { $0.at - lastFrame <= .milliseconds(2_250) } == true, "within 2 s (a tick later)")
        #expect(paused?.status.movement == .unknown && paused?.status.faceVisible == nil)
        run.feed(seconds: 1)
        #expect(run.lastStatus?.monitoring == .active)
    }

    @Test("the camera's own report of its loss pauses at once, with its words")
    func cameraLost() {
        var run = Run()
        run.feed(seconds: 1)
        run.send(.cameraLost(reason: "camera unplugged", at: run.now))
        #expect(run.lastStatus == .init(monitoring: .paused, reason: "camera unplugged"))
    }

    @Test(
        "too dark, too bright, nothing in the sleep area: stale with the reason, and no alert, not even a trigger",
        arguments: [
            (FrameAnalyzer.Judgement.tooDark, "too dark to judge"), (.tooBright, "too bright to judge"),
            (.empty, "nothing seen in the sleep area"),
        ])
    func stale(judgement: FrameAnalyzer.Judgement, reason: String) {
        var run = Run()
        run.feed(seconds: 2, judgement: judgement)
        #expect(run.lastStatus == .init(monitoring: .stale, reason: reason))
        run.send(.trigger(.faceCovered, at: run.now))
        run.send(.crying(confidence: 0.9, detector: "cry", at: run.now))
        #expect(run.alerts.isEmpty)
        #expect(run.actions.last.map { "\($0.action)" }?.contains("monitoring is stale: \(reason)") == true)
    }

    @Test(
        "judgeable 3 s, not 3 s, for 4 min (a ball rolling in and out of the area): one change of state, no alert")
    func hysteresis() {
        var run = Run()
        run.feed(seconds: 1, faces: { _ in [Self.face] })
        for _ in 0..<40 {
            run.feed(seconds: 3, changed: { _ in 0.02 }, faces: { _ in [Self.face] })
            run.feed(seconds: 3, judgement: .empty, faces: { _ in [] })
        }
        let states = run.statuses.map(\.status.monitoring)
        let changes = zip(states, states.dropFirst()).filter { $0 != $1 }.map(\.1)
        #expect(changes.count <= 1, "\(changes)")
        #expect(run.alerts.isEmpty, "a face unseen while the picture cannot be judged is not a face lost")
    }

    @Test("stale turns active only after 10 s of judgeable pictures, active turns stale after 3 s of unjudgeable ones")
    func dwell() {
        var run = Run()
        run.feed(seconds: 5)
        run.feed(seconds: 2.8, judgement: .tooDark)
        #expect(run.lastStatus?.monitoring == .active, "not yet")
        run.feed(seconds: 0.4, judgement: .tooDark)
        #expect(run.lastStatus == .init(monitoring: .stale, reason: "too dark to judge"))
        run.feed(seconds: 9.8)
        #expect(run.lastStatus?.monitoring == .stale, "not yet")
        run.feed(seconds: 0.4)
        #expect(run.lastStatus?.monitoring == .active)
        // A short spell of unjudgeable pictures is not counted as time without the face.
        run.feed(seconds: 3, faces: { _ in [Self.face] })
        run.feed(seconds: 2.6, judgement: .tooDark, faces: { _ in [] })
        run.feed(seconds: 3, faces: { _ in [] })
        #expect(run.alerts.isEmpty, "the face unseen for 3 judged seconds: \(run.alerts.map(\.kind))")
        run.feed(seconds: 2.4, faces: { _ in [] })
        #expect(run.alerts.map(\.kind) == [.faceCovered])
    }

    @Test("a new sleep area is judged afresh: stale in the old one, active with the first judgeable frame of the new")
    func newAreaJudgedAfresh() {
        var run = Run()
        run.feed(seconds: 5, judgement: .empty)
        #expect(run.lastStatus?.monitoring == .stale)
        var settings = run.monitor.settings
        settings.area = try! SleepArea(x: 0.1, y: 0.1, width: 0.8, height: 0.8)
        run.send(.settings(settings, at: run.now))
        run.feed(seconds: 1)
        #expect(run.lastStatus?.monitoring == .active, "no 10 s dwell carried over from the old area")
    }

    @Test("unable to judge for 3 minutes: said once (not while alerts are off or held); judging again: said too")
    func cannotJudgeNotice() {
        func told(_ run: Run) -> [String] {
            run.actions.compactMap { entry in
                switch entry.action {
                case .cannotJudge(let reason, let duration): "cannot \(reason) \(duration)"
                case .judgingAgain: "again"
                default: nil
                }
            }
        }
        var run = Run()
        run.feed(seconds: 5)
        run.feed(seconds: 3 + 2 * 60 + 55, judgement: .tooDark)
        #expect(told(run).isEmpty, "not yet: stale for 2 min 55 s")
        run.feed(seconds: 10, judgement: .tooDark)
        #expect(told(run) == ["cannot too dark to judge 180.0 seconds"])
        run.feed(seconds: 10 * 60, judgement: .tooDark)
        #expect(told(run).count == 1, "once per spell")
        run.feed(seconds: 11)
        #expect(told(run).last == "again")
        // A camera gone for 3 minutes is said too.
        run.wait(seconds: 3 * 60 + 5)
        #expect(told(run).last == "cannot camera disconnected 180.0 seconds")

        var settings = SafetyMonitor.Settings()
        settings.alertsEnabled = false
        var off = Run(settings: settings)
        off.feed(seconds: 5 * 60, judgement: .tooDark)
        settings.alertsEnabled = true
        settings.alertsHeld = "setup is not finished"
        var held = Run(settings: settings)
        held.feed(seconds: 5 * 60, judgement: .tooDark)
        #expect(told(off).isEmpty && told(held).isEmpty)
    }

    @Test(
        "moving while the area changes, still 3 s after; unusual stillness once after 20 minutes, again after movement")
    func stillness() {
        var run = Run()
        run.feed(seconds: 10, changed: { _ in 0.05 })
        #expect(run.lastStatus?.movement == .moving)
        let quietFrom = run.now
        run.feed(seconds: 4)
        #expect(run.lastStatus?.movement == .still)
        run.feed(seconds: 20 * 60)
        let alerts = run.alerts
        #expect(alerts.count == 1 && alerts.first?.kind == .stillness, "\(alerts.map(\.kind))")
        if let alert = alerts.first {
            #expect(alert.at - quietFrom >= .seconds(20 * 60) && alert.at - quietFrom < .seconds(20 * 60 + 1))
            #expect(alert.confidence == 1 && alert.detector == "frame-difference")
        }
        run.feed(seconds: 1, changed: { _ in 0.05 })
        run.feed(seconds: 20 * 60 + 1)
        #expect(run.alerts.filter { $0.kind == .stillness }.count == 2)
    }

    @Test(
        "switched off: paused for that reason, nothing raised or triggered, no cannot-judge notice; on again, stillness counts afresh"
    )
    func switchedOff() {
        var run = Run()
        run.feed(seconds: 15 * 60)
        var settings = run.monitor.settings
        settings.switchedOff = true
        run.send(.settings(settings, at: run.now))
        run.feed(seconds: 30 * 60, faces: { _ in [] })
        #expect(run.lastStatus?.monitoring == .paused && run.lastStatus?.reason == "monitoring is turned off")
        run.send(.crying(confidence: 0.9, detector: "cry", at: run.now))
        run.send(.trigger(.faceCovered, at: run.now))
        #expect(run.alerts.isEmpty, "\(run.alerts.map(\.kind))")
        #expect(run.actions.contains { $0.action == .notRaised(.faceCovered, reason: "monitoring is turned off") })
        #expect(!run.actions.contains { if case .cannotJudge = $0.action { true } else { false } })
        settings.switchedOff = false
        run.send(.settings(settings, at: run.now))
        run.feed(seconds: 1)
        #expect(run.lastStatus?.monitoring == .active)
        run.feed(seconds: 10 * 60)
        #expect(run.alerts.isEmpty, "the 15 quiet minutes before the switch do not count")
        run.feed(seconds: 10 * 60 + 1)
        #expect(run.alerts.map(\.kind) == [.stillness])
    }

    @Test("stillness is never counted across a paused camera: 15 min, a gap, 10 min is no alert")
    func stillnessAcrossAGap() {
        var run = Run()
        run.feed(seconds: 15 * 60)
        run.wait(seconds: 60)
        run.feed(seconds: 10 * 60)
        #expect(run.alerts.isEmpty)
        run.feed(seconds: 10 * 60 + 1)
        #expect(run.alerts.map(\.kind) == [.stillness])
    }

    @Test("a face seen, then not for 5 s without a roll: one high face_covered alert; the face back: on back again")
    func faceCovered() {
        var run = Run()
        run.feed(seconds: 10, changed: { _ in 0.02 }, faces: { _ in [Self.face] })
        #expect(run.lastStatus?.faceVisible == true && run.lastStatus?.position == .onBack)
        let lost = run.now
        run.feed(seconds: 8, faces: { _ in [] })
        let alerts = run.alerts
        #expect(alerts.map(\.kind) == [.faceCovered])
        #expect(alerts.first.map { $0.at - lost >= .seconds(5) && $0.at - lost <= .seconds(6) } == true)
        #expect(alerts.first.map { $0.confidence > 0.9 } == true, "the face was tracked in every frame before")
        #expect(run.lastStatus?.faceVisible == false && run.lastStatus?.position == .unknown)
        run.feed(seconds: 1, faces: { _ in [Self.face] })
        #expect(run.lastStatus?.faceVisible == true && run.lastStatus?.position == .onBack)
    }

    @Test("an adult's face leaning in (much wider than the baby's) hides the baby's: no alert until it is seen again")
    func adultLeaningIn() {
        var run = Run()
        run.feed(seconds: 10, faces: { _ in [Self.face] })
        let adult = FaceBox(x: 0.3, y: 0.2, width: 0.3, height: 0.35)
        run.feed(seconds: 4, faces: { _ in [adult] })
        run.feed(seconds: 12, faces: { _ in [] })
        #expect(run.alerts.isEmpty, "someone was at the cot: \(run.alerts.map(\.kind))")
        run.feed(seconds: 8, faces: { _ in [Self.face] })
        run.feed(seconds: 6, faces: { _ in [] })
        #expect(run.alerts.map(\.kind) == [.faceCovered])
    }

    @Test("a face seen in few frames (a head turning, the detector unsure), then not: the alert waits 15 s, not 5")
    func unsureFace() {
        var run = Run()
        run.feed(seconds: 10, faces: { Int($0 / .milliseconds(200)) % 4 == 0 ? [Self.face] : [] })
        run.feed(seconds: 8, faces: { _ in [] })
        #expect(run.alerts.isEmpty, "\(run.alerts.map(\.kind))")
        run.feed(seconds: 8, faces: { _ in [] })
        #expect(run.alerts.map(\.kind) == [.faceCovered])
    }

    @Test("a face lost with a roll: on_stomach (high), the position on stomach")
    func roll() {
        var run = Run()
        run.feed(seconds: 10, faces: { _ in [Self.face] })
        let turning = run.now
        run.feed(seconds: 8, changed: { $0 - turning < .seconds(1) ? 0.2 : 0.0 }, faces: { _ in [] })
        #expect(run.alerts.map(\.kind) == [.onStomach])
        #expect(run.lastStatus?.position == .onStomach)
    }

    @Test("a large change over the face only (something put over it) is a cover, not a roll")
    func coverIsNotARoll() {
        var run = Run()
        run.feed(seconds: 10, faces: { _ in [Self.face] })
        let covering = run.now
        // 20 % of the area changed, all of it within the face's neighbourhood.
        let overFace = [FrameAnalyzer.Place(x: 0.5, y: 0.45), FrameAnalyzer.Place(x: 0.45, y: 0.5)]
        run.feed(
            seconds: 8, changed: { $0 - covering < .seconds(1) ? 0.2 : 0 }, places: overFace, faces: { _ in [] })
        #expect(run.alerts.map(\.kind) == [.faceCovered])
    }

    @Test("no alert about a face never seen, a face outside the sleep area, or without a face detector")
    func noFaceNoAlert() {
        var never = Run()
        never.feed(seconds: 20, faces: { _ in [] })
        #expect(never.alerts.isEmpty && never.lastStatus?.faceVisible == false)

        var settings = SafetyMonitor.Settings()
        settings.area = try! SleepArea(x: 0.6, y: 0.1, width: 0.35, height: 0.8)
        var outside = Run(settings: settings)
        outside.feed(seconds: 10, faces: { _ in [Self.face] })
        outside.feed(seconds: 10, faces: { _ in [] })
        #expect(outside.alerts.isEmpty)

        var blind = Run()
        blind.feed(seconds: 20)
        #expect(blind.alerts.isEmpty && blind.lastStatus?.faceVisible == nil && blind.lastStatus?.position == .unknown)
    }

    @Test("crying: an alert, then none for 2 minutes; muted for 5 minutes by a listener, then alerts again")
    func cryingAndMutes() {
        var run = Run()
        run.feed(seconds: 1)
        run.send(.crying(confidence: 0.8, detector: "cry-pitch", at: run.now))
        run.feed(seconds: 60)
        run.send(.crying(confidence: 0.8, detector: "cry-pitch", at: run.now))
        #expect(run.alerts.map(\.kind) == [.crying])
        run.send(.mute(.crying, duration: .seconds(300), at: run.now))
        run.feed(seconds: 90)
        run.send(.crying(confidence: 0.8, detector: "cry-pitch", at: run.now))
        run.send(.trigger(.crying, at: run.now))
        #expect(run.alerts.count == 1)
        #expect("\(run.actions.last!.action)".contains("crying alerts are muted for 4 more minutes"))
        run.feed(seconds: 211)
        run.send(.crying(confidence: 0.8, detector: "cry-pitch", at: run.now))
        #expect(run.alerts.count == 2)
    }

    @Test("a trigger raises any kind at once with confidence 1 while active; refused while paused, saying why")
    func triggers() {
        var run = Run()
        run.feed(seconds: 1)
        for kind in SafetyAlertKind.known { run.send(.trigger(kind, at: run.now)) }
        #expect(run.alerts.map(\.kind) == SafetyAlertKind.known)
        #expect(run.alerts.allSatisfy { $0.confidence == 1 && $0.detector == "trigger" })
        run.wait(seconds: 3)
        run.send(.trigger(.onStomach, at: run.now))
        guard case .notRaised(.onStomach, let reason)? = run.actions.last?.action else {
            Issue.record("expected a refusal, got \(String(describing: run.actions.last))")
            return
        }
        #expect(reason == "monitoring is paused: camera disconnected")
        var settings = SafetyMonitor.Settings()
        settings.alertsEnabled = false
        run.feed(seconds: 1)
        run.send(.settings(settings, at: run.now))
        run.send(.trigger(.crying, at: run.now))
        #expect("\(run.actions.last!.action)".contains("safety alerts are turned off"))
    }

    @Test("status changes go out at most twice a second; the last one is never lost")
    func statusRate() {
        var run = Run()
        run.send(.tick(at: .zero))
        run.now = .milliseconds(100)
        run.send(.frame(Self.measurement(), faces: nil, at: run.now))  // active: within 500 ms of the first
        #expect(run.statuses.count == 1)
        run.now = .milliseconds(300)
        run.send(.tick(at: run.now))
        #expect(run.statuses.count == 1)
        run.now = .milliseconds(550)
        run.send(.tick(at: run.now))
        #expect(run.statuses.count == 2 && run.lastStatus?.monitoring == .active)
        let gaps = zip(run.statuses, run.statuses.dropFirst()).map { $1.at - $0.at }
        #expect(gaps.allSatisfy { $0 >= .milliseconds(500) })
    }

    @Test("moving the sleep area starts the detectors afresh: no stillness counted from before it")
    func newSleepArea() {
        var run = Run()
        run.feed(seconds: 19 * 60)
        var settings = SafetyMonitor.Settings()
        settings.area = try! SleepArea(x: 0.1, y: 0.1, width: 0.5, height: 0.5)
        run.send(.settings(settings, at: run.now))
        run.feed(seconds: 5 * 60)
        #expect(run.alerts.isEmpty)
    }
}
