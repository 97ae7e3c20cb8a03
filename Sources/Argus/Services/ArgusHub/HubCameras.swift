public import ArgusStore
public import Foundation

/// A picture from a camera now, or why there is none.
public enum CameraSnapshot: Sendable, Hashable {
    /// A JPEG within the snapshot limit (100 KB).
    case jpeg(Data)
    /// The camera is known but gives no picture now.
    case offline
    /// No camera of this hub has that id.
    case unknown
}

/// The cameras the hub watches in this run, as the API shows them.
public protocol HubCameras: Sendable {
    /// This run's cameras, in the order they were given.
    func cameras() async -> [Camera]
    func snapshot(cameraId: String) async -> CameraSnapshot
}

/// A hub with no camera (yet): the lists are empty, every id is unknown.
public struct NoCameras: HubCameras {
    public init() {}
    public func cameras() async -> [Camera] { [] }
    public func snapshot(cameraId _: String) async -> CameraSnapshot { .unknown }
}

/// Several sets of cameras as one (the `--camera` ones and the paired monitors).
public struct HubCameraGroup: HubCameras {
    let members: [any HubCameras]

    public init(_ members: [any HubCameras]) {
        self.members = members
    }

    /// Every member's cameras, by name (as people look for one).
    public func cameras() async -> [Camera] {
        var all: [Camera] = []
        for member in members { all += await member.cameras() }
        return all.sorted { ($0.name.lowercased(), $0.name, $0.id) < ($1.name.lowercased(), $1.name, $1.id) }
    }

    public func snapshot(cameraId: String) async -> CameraSnapshot {
        for member in members {
            let snapshot = await member.snapshot(cameraId: cameraId)
            if snapshot != .unknown { return snapshot }
        }
        return .unknown
    }
}
