import Foundation
import ToukanCore
import ToukanTestSupport

/// Runs a client against the model until it completes, terminates, or the connection is "cut" (status 0).
enum TusDriver {
    enum Outcome: Equatable {
        case completed(String)
        case terminated
        case cut
    }

    static func run(
        _ client: inout TusClient, _ server: inout TusServerModel, file: [UInt8], first: TusClient.Action? = nil
    ) throws -> Outcome {
        var action = first ?? client.start()
        for _ in 0..<10_000 {
            switch action {
            case .send(let request):
                let response = server.handle(request)
                if response.status == 0 { return .cut }
                action = try client.receive(response, now: Date(timeIntervalSince1970: 0))
            case .readChunk(let range):
                action = try client.chunkRead(Array(file[Int(range.lowerBound)..<Int(range.upperBound)]))
            case .completed(let memory): return .completed(memory)
            case .terminated: return .terminated
            }
        }
        throw Failure("the client did not finish in 10,000 steps")
    }
}
