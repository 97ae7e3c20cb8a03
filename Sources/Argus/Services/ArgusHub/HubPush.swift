public import ArgusPush
import ArgusStore
import Foundation
import Logging
import Prometheus
import ServiceLifecycle

/// Every event pushed to every paired device that registered a token, at once and side by side; a token APNs
/// calls unregistered or bad is forgotten. Nothing here ever holds up the API or the cameras: the camera set hands
/// events over without waiting.
actor HubPush {
    private let client: APNsClient
    private let database: ArgusDatabase
    private let logger: Logger
    private let metrics: HubMetrics

    init(client: APNsClient, database: ArgusDatabase, metrics: HubMetrics, logger: Logger) {
        self.client = client
        self.database = database
        self.metrics = metrics
        self.logger = logger
    }

    func notify(_ event: CameraEvent) async {
        let devices: [PairedDevice]
        do {
            devices = try database.pushTargets()
        } catch {
            logger.error("no push sent: the paired devices could not be read", metadata: ["reason": "\(error)"])
            return
        }
        let targets = devices.compactMap { device in
            device.apnsToken.map { (deviceId: device.deviceId, token: $0) }
        }
        guard !targets.isEmpty else { return }
        let notification = PushNotification(
            title: event.cameraName, body: event.description ?? "Something happened", threadId: event.cameraId,
            data: ["event_id": event.id, "camera_id": event.cameraId])
        let client = client
        let results = await withTaskGroup(of: (String, String, PushResult).self) { group in
            for target in targets {
                group.addTask { (target.deviceId, target.token, await client.send(notification, to: target.token)) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (deviceId, token, result) in results {
            switch result {
            case .delivered:
                metrics.pushSent.increment()
            case .unregistered, .badDeviceToken:
                logger.info(
                    "APNs says a device's push token is no longer valid: forgotten", metadata: ["device": "\(deviceId)"]
                )
                do {
                    try database.forgetPushToken(token, deviceId: deviceId)
                } catch {
                    logger.error("the dead push token could not be forgotten", metadata: ["reason": "\(error)"])
                }
            case .rejected(let status, let reason):
                logger.error("APNs refused a push", metadata: ["status": "\(status)", "reason": "\(reason)"])
            case .failed(let reason):
                logger.warning("a push was not delivered", metadata: ["reason": "\(reason)"])
            }
        }
    }
}

extension HubPush: Service {
    /// Holds the APNs connection for the hub's lifetime and closes it on shutdown.
    nonisolated func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes the APNs connection (once the hub stops, or when it could not start).
    nonisolated func close() async {
        await client.shutdown()
    }
}
