// Runs Toukan's upload loop (UploadLoop over the ledger in DATA_DIR, the uploader to SERVER_URL and the kernel's
// NetworkWatch) where a test puts it, e.g. `ip netns exec NS upload-loop-probe DATA_DIR SERVER_URL`. Prints
// {"event":"ready","online":B} once the network is watched; logs go to stderr. The periodic recheck is 30 s, so only
// a network event can start an upload sooner. Ends on SIGTERM.
import Foundation
import Logging
import NetworkWatch
import ToukanStore
import ToukanUploader
import ToukanUploads

let arguments = CommandLine.arguments
guard arguments.count == 3, let server = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: upload-loop-probe DATA_DIR SERVER_URL\n".utf8))
    exit(2)
}
LoggingSystem.bootstrap(StreamLogHandler.standardError)
do {
    let directory = URL(fileURLWithPath: arguments[1])
    let watch = try NetworkWatch()
    let uploader = ToukanUploader(configuration: .init(server: server, connectTimeout: .seconds(5)))
    let loop = UploadLoop(
        database: try ToukanDatabase(directory: directory), dataDirectory: directory, uploader: uploader,
        network: watch, recheckInterval: .seconds(30))
    FileHandle.standardOutput.write(Data(#"{"event":"ready","online":\#(watch.isOnline())}"#.utf8 + [0x0A]))
    try await loop.run()
} catch {
    FileHandle.standardError.write(Data("upload-loop-probe: \(error)\n".utf8))
    exit(1)
}
