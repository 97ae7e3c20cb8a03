import CribCallMonitor
import CribCallProtocol
import CribCallStore
import Foundation
import TestSupport
import Testing
import VideoCapture

/// The monitor's safety detectors on real video: frames pushed in real time through GStreamer (scaling, grey,
/// OpenCV's face detector) into the monitor — a room with a real face that gets covered, then a baby that turns
/// away with a large movement.
@Suite("Safety detectors on real video", .serialized, .heavy(cores: 0.75, "GStreamer, OpenCV and the monitor"))
struct SafetyCameraTests {
    /// A 320×240 RGB room: a patterned sheet, the head at (`x`, 60), optionally covered or turned.
    static func room(head: [UInt8], x: Int = 100, covered: Bool = false, turned: Bool = false) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: 320 * 240 * 3)
        for y in 0..<240 {
            for column in 0..<320 {
                let level: UInt8 = (column / 16 + y / 16) % 2 == 0 ? 110 : 140
                for channel in 0..<3 { pixels[(y * 320 + column) * 3 + channel] = level }
            }
        }
        for y in 0..<120 {
            for column in 0..<120 {
                let (sourceX, sourceY) = turned ? (y, 119 - column) : (column, y)
                for channel in 0..<3 {
                    pixels[((60 + y) * 320 + x + column) * 3 + channel] = head[(sourceY * 120 + sourceX) * 3 + channel]
                }
            }
        }
        if covered {
            for y in 70..<170 {
                for column in (x + 10)..<(x + 110) {
                    for channel in 0..<3 { pixels[(y * 320 + column) * 3 + channel] = 90 }
                }
            }
        }
        return pixels
    }

    /// A 320×240 RGB room with the head (a `size`×`size` RGB picture) turned by `angle` radians in the picture (a
    /// head lying askew in the cot) and drawn `scale` times its size, centred at (`centerX`, `centerY`).
    static func room(
        head: [UInt8], size: Int = 120, angle: Double, scale: Double = 1, centerX: Double = 160, centerY: Double = 120
    ) -> [UInt8] {
        var pixels = room(head: head, x: 100)
        // the sheet alone, then the head over it
        for y in 60..<180 {
            for column in 100..<220 {
                let level: UInt8 = (column / 16 + y / 16) % 2 == 0 ? 110 : 140
                for channel in 0..<3 { pixels[(y * 320 + column) * 3 + channel] = level }
            }
        }
        let half = Double(size) * scale / 2 * 1.5
        for y in max(0, Int(centerY - half))..<min(240, Int(centerY + half)) {
            for column in max(0, Int(centerX - half))..<min(320, Int(centerX + half)) {
                // where this pixel comes from in the head picture: turned back and scaled down
                let dx = (Double(column) - centerX) / scale
                let dy = (Double(y) - centerY) / scale
                let sourceX = Int((dx * cos(angle) + dy * sin(angle) + Double(size) / 2).rounded(.down))
                let sourceY = Int((-dx * sin(angle) + dy * cos(angle) + Double(size) / 2).rounded(.down))
                guard (0..<size).contains(sourceX), (0..<size).contains(sourceY) else { continue }
                for channel in 0..<3 {
                    pixels[(y * 320 + column) * 3 + channel] = head[(sourceY * size + sourceX) * 3 + channel]
                }
            }
        }
        return pixels
    }

    /// A monitor watching a capture that frames are pushed into (320×240, OpenCV's faces), and the watching task.
    static func watchedCapture() throws -> (MonitorHarness, VideoCapture, Task<Void, Never>) {
        let harness = try MonitorHarness()
        let capture = try VideoCapture(source: .pushed(width: 320, height: 240))
        try #require(capture.detectsFaces, "facedetect (gstreamer1.0-opencv) and opencv-data must be installed")
        let service = harness.service
        return (harness, capture, Task { await service.watchSafety(camera: capture) })
    }

    /// Pushes `scene(frameNumber)` into the capture at 5 frames a second, in real time, for `seconds`.
    static func play(_ capture: VideoCapture, seconds: Double, from start: Int, scene: (Int) -> [UInt8]) async {
        let count = Int(seconds * 5)
        for index in start..<(start + count) {
            capture.push(rgb: scene(index), at: .milliseconds(200 * index))
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The status once it says the face is visible, playing `scene` a second at a time for up to 7 s more (frame
    /// numbers from `next` on, which it advances).
    static func playUntilFaceVisible(
        _ capture: VideoCapture, _ service: MonitorService, from next: inout Int, scene: () -> [UInt8]
    ) async -> SafetyStatus? {
        var status = await service.safetyStatus
        for _ in 0..<7 where status?.faceVisible != true {
            await play(capture, seconds: 1, from: next) { _ in scene() }
            next += 5
            status = await service.safetyStatus
        }
        return status
    }

    @Test("a face seen, then covered: face_covered 5 s after it was last seen; seen again: on back")
    func coveredFace() async throws {
        guard let head = try await FacePicture.head(size: 120, for: "the covered-face test") else { return }
        let (harness, capture, watching) = try Self.watchedCapture()
        let service = harness.service
        defer { watching.cancel() }
        let visible = Self.room(head: head)
        let covered = Self.room(head: head, covered: true)
        await Self.play(capture, seconds: 3, from: 0) { _ in visible }
        // A loaded machine may still be finding the face in the latest frames (seen once in a fresh-clone run
        // beside make soak: on back, face not visible yet): the cot goes on as it is, a second at a time, up to 7 s.
        var next = 15
        let seen = await Self.playUntilFaceVisible(capture, service, from: &next) { visible }
        #expect(seen?.faceVisible == true && seen?.position == .onBack, "\(String(describing: seen))")
        let coveredAt = ContinuousClock.now
        let watch = Task {
            while !Task.isCancelled {
                if harness.events.contains(where: {
                    if case .safetyAlert(let alert) = $0 { return alert.kind == .faceCovered }
                    return false
                }) {
                    return ContinuousClock.now
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return ContinuousClock.now
        }
        await Self.play(capture, seconds: 8, from: next) { _ in covered }
        next += 40
        watch.cancel()
        let alertAt: ContinuousClock.Instant? = await watch.value
        let alerts = harness.events.compactMap { if case .safetyAlert(let alert) = $0 { alert } else { nil } }
        #expect(alerts.map(\.kind) == [.faceCovered], "\(alerts)")
        if let alertAt, !alerts.isEmpty {  // nil never: the watch returns when cancelled
            let delay = alertAt - coveredAt
            // 5 s after the face was last seen, i.e. in the frame before the cover (200 ms earlier).
            #expect(delay >= .milliseconds(4_700) && delay <= .seconds(7), "covered → alert: \(delay)")
        }
        #expect(alerts.first?.severity == .high && (alerts.first?.confidence ?? 0) > 0.8)
        #expect(alerts.first?.evidence?.jpegBytes?.starts(with: [0xFF, 0xD8]) == true, "the picture goes with it")
        await Self.play(capture, seconds: 2, from: next) { _ in visible }
        next += 10
        let again = await Self.playUntilFaceVisible(capture, service, from: &next) { visible }
        #expect(again?.faceVisible == true && again?.position == .onBack, "\(String(describing: again))")
        await harness.stop()
    }

    @Test("a baby that turns away with a large movement: on_stomach (high), position on stomach")
    func turnsOver() async throws {
        guard let head = try await FacePicture.head(size: 120, for: "the turning test") else { return }
        let (harness, capture, watching) = try Self.watchedCapture()
        let service = harness.service
        defer { watching.cancel() }
        await Self.play(capture, seconds: 3, from: 0) { _ in Self.room(head: head) }
        // The turn: the head moves across the cot over a second, then stays turned away.
        await Self.play(capture, seconds: 8, from: 15) { index in
            Self.room(head: head, x: min(180, 100 + (index - 15) * 20), turned: true)
        }
        let alerts = harness.events.compactMap { if case .safetyAlert(let alert) = $0 { alert } else { nil } }
        #expect(alerts.map(\.kind) == [.onStomach], "\(alerts)")
        let turned = await service.safetyStatus
        #expect(turned?.position == .onStomach, "\(String(describing: turned))")
        await harness.stop()
    }

    @Test("a head lying askew or turning in the cot (20°, 35°, −45°) is still seen: no face alert")
    func headAskew() async throws {
        guard let head = try await FacePicture.head(size: 120, for: "the head-turn test") else { return }
        let (harness, capture, watching) = try Self.watchedCapture()
        let service = harness.service
        defer { watching.cancel() }
        await Self.play(capture, seconds: 3, from: 0) { _ in Self.room(head: head, angle: 0) }
        // The head turns over a second, lies askew, turns the other way.
        await Self.play(capture, seconds: 4, from: 15) { index in
            Self.room(head: head, angle: min(0.35, Double(index - 15) * 0.07))
        }
        await Self.play(capture, seconds: 4, from: 35) { _ in Self.room(head: head, angle: 0.61) }
        await Self.play(capture, seconds: 4, from: 55) { _ in Self.room(head: head, angle: -0.8) }
        let alerts = harness.events.compactMap { if case .safetyAlert(let alert) = $0 { alert } else { nil } }
        #expect(alerts.isEmpty, "\(alerts.map(\.kind))")
        let status = await service.safetyStatus
        #expect(status?.faceVisible == true && status?.position == .onBack, "\(String(describing: status))")
        await harness.stop()
    }

    @Test("an adult leaning in (a face twice the baby's) hides the baby's face: no face alert")
    func adultLeaningIn() async throws {
        guard let head = try await FacePicture.head(size: 120, for: "the adult test") else { return }
        let (harness, capture, watching) = try Self.watchedCapture()
        let service = harness.service
        defer { watching.cancel() }
        await Self.play(capture, seconds: 4, from: 0) { _ in Self.room(head: head, angle: 0, scale: 0.7) }
        let baby = await service.safetyStatus
        #expect(baby?.faceVisible == true, "\(String(describing: baby))")
        // A parent leans over the cot, face to the camera, hiding the baby; then leans back out of view.
        await Self.play(capture, seconds: 5, from: 25) { _ in
            Self.room(head: head, angle: 0, scale: 1.6, centerX: 150, centerY: 110)
        }
        await Self.play(capture, seconds: 6, from: 55) { _ in Self.room(head: head, angle: 0, scale: 0) }
        let alerts = harness.events.compactMap { if case .safetyAlert(let alert) = $0 { alert } else { nil } }
        #expect(alerts.isEmpty, "\(alerts.map(\.kind))")
        await harness.stop()
    }
}
