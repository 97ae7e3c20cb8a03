extension Pipeline {
    /// Plays a finite pipeline (a file converted into another) on the calling thread until EOS or the first
    /// ERROR, then tears it down. Blocks: call it from a thread of your own, never from the concurrency pool.
    ///
    /// - Parameter timeout: How long the whole run may take before it is abandoned.
    /// - Returns: nil once every sink had EOS; the ERROR otherwise (a timeout is reported as a core error).
    public func playToEnd(timeout: Duration) -> GStreamerFailure? {
        defer { tearDown() }
        guard setState(.playing) else {
            return bus.popError(timeout: .seconds(1))
                ?? GStreamerFailure(domain: .core, code: 0, message: "the pipeline refused to play")
        }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = bus.pop(timeout: .milliseconds(250)) else { continue }
            switch message.kind {
            case .error(let failure): return failure
            case .endOfStream: return nil
            default: continue
            }
        }
        return GStreamerFailure(domain: .core, code: 0, message: "the pipeline did not finish within \(timeout)")
    }
}
