import SafetyDetection
public import VideoCapture

/// The Platform's video capture as the camera the safety detectors watch.
extension VideoCapture: SafetyCamera {
    public func safetyEvents() -> AsyncStream<SafetyCameraEvent> {
        let events = events()
        return AsyncStream { continuation in
            let task = Task {
                for await event in events {
                    switch event {
                    case .started:
                        continue
                    case .frame(let frame):
                        let faces = frame.faces?.map {
                            FaceBox(x: $0.x, y: $0.y, width: $0.width, height: $0.height)
                        }
                        continuation.yield(
                            .frame(
                                GrayFrame(width: frame.width, height: frame.height, pixels: frame.pixels),
                                faces: faces, at: frame.capturedAt))
                    case .lost(let reason):
                        continuation.yield(.lost(reason))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public var latestEvidence: (width: Int, height: Int, jpeg: [UInt8])? {
        latestPicture.map { ($0.width, $0.height, $0.jpeg) }
    }
}
