// Runs NetworkWatch where a test puts it (e.g. `ip netns exec NS network-watch-probe`) and prints, one JSON object a
// line: {"event":"ready","online":B} once subscribed, then {"event":"change","change":"link|route|unknown",
// "online":B} for every event the kernel sends. Ends on SIGTERM or when stdin closes.
import Foundation
import NetworkWatch

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func online() -> Bool {
    (try? NetworkWatch.isOnline()) ?? false
}

do {
    let watch = try NetworkWatch()
    emit(#"{"event":"ready","online":\#(online())}"#)
    for await change in watch.changes {
        let kind =
            switch change {
            case .link: "link"
            case .route: "route"
            case .unknown: "unknown"
            }
        emit(#"{"event":"change","change":"\#(kind)","online":\#(online())}"#)
    }
} catch {
    FileHandle.standardError.write(Data("network-watch-probe: \(error)\n".utf8))
    exit(1)
}
