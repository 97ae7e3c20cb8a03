import ArgusAPI
import ArgusAuth
import ArgusStore
import ArgusTokens
import DeviceIdentity
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus

/// The mobile API of docs/api/mobile-api.yaml, behind the generated `APIProtocol`: who may call what, the limits,
/// and every refusal as the spec's `Error` with a message that says what to do.
struct HubAPI: APIProtocol {
    let database: ArgusDatabase
    let tokens: AccessTokens
    let adminKey: String
    let limits: HubLimits
    let cameras: any HubCameras
    let version: String
    let metrics: HubMetrics
    let logger: Logger
    let now: @Sendable () -> Date

    typealias Problem = Components.Schemas._Error

    // MARK: health and pairing

    func getHealth(_: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        if let wait = await limits.admit("getHealth", key: caller.address, now: now()) {
            return .tooManyRequests(Self.tooMany(wait))
        }
        return .ok(.init(body: .json(.init(status: .ok, version: version))))
    }

    func createPairingCode(_: Operations.CreatePairingCode.Input) async throws -> Operations.CreatePairingCode.Output {
        let caller = caller
        guard caller.isLoopback, let key = caller.adminKey,
            ConstantTime.equals(Array(key.utf8), Array(adminKey.utf8))
        else {
            return .forbidden(
                .init(
                    body: .json(
                        Problem(
                            detail: "Only the hub's owner can make a pairing code: on the hub, run `argus-hub pair`.",
                            code: "forbidden"))))
        }
        if let wait = await limits.admit("createPairingCode", key: caller.address, now: now()) {
            return .tooManyRequests(Self.tooMany(wait))
        }
        metrics.pairingRequests.increment()
        let (code, expiresAt) = try database.createPairingCode(now: now())
        logger.info("pairing code made", metadata: ["expiresAt": "\(expiresAt)"])  // never the code itself
        return .ok(
            .init(
                body: .json(
                    .init(
                        pairingCode: code, expiresAt: expiresAt, expiresInSeconds: Int(PairingCode.lifetime)))))
    }

    func verifyPairingCode(_ input: Operations.VerifyPairingCode.Input) async throws
        -> Operations.VerifyPairingCode.Output
    {
        let client = caller.address
        guard case .json(let request) = input.body else { return .unprocessableContent(Self.invalid("no JSON body")) }
        if let problem = Self.check(deviceId: request.deviceId) ?? Self.check(deviceName: request.deviceName) {
            return .unprocessableContent(Self.invalid(problem))
        }
        guard PairingCode.isWellFormed(request.pairingCode) else {
            return .unprocessableContent(Self.invalid("pairing_code must be the 6 digits the hub shows."))
        }
        let at = now()
        if let wait = await limits.verifyWait(client: client, now: at) {
            return .tooManyRequests(Self.tooMany(wait))
        }
        let device = DeviceRequest(
            deviceId: request.deviceId, deviceName: request.deviceName,
            deviceType: (request.deviceType ?? .iphone).rawValue)
        switch try database.verifyPairingCode(request.pairingCode, device: device, now: at) {
        case .paired(let refreshToken):
            metrics.pairingSuccess.increment()
            logger.info("device paired", metadata: ["device": "\(request.deviceId)"])
            return .ok(.init(body: .json(try await pair(deviceId: request.deviceId, refreshToken: refreshToken, at))))
        case .expired:
            metrics.pairingFailed.increment()
            await limits.verifyFailed(client: client, now: at)
            return .badRequest(
                .init(body: .json(Problem(detail: "Pairing code expired", code: "pairing_code_expired"))))
        case .invalid(let voided):
            metrics.pairingFailed.increment()
            await limits.verifyFailed(client: client, now: at)
            if voided > 0 { logger.warning("a pairing code was voided after 5 wrong guesses") }
            return .badRequest(
                .init(body: .json(Problem(detail: "Invalid pairing code", code: "pairing_code_invalid"))))
        }
    }

    func refreshTokens(_ input: Operations.RefreshTokens.Input) async throws -> Operations.RefreshTokens.Output {
        guard case .json(let request) = input.body else { return .unprocessableContent(Self.invalid("no JSON body")) }
        if let problem = Self.check(deviceId: request.deviceId) {
            return .unprocessableContent(Self.invalid(problem))
        }
        guard RefreshToken.isWellFormed(request.refreshToken) else {
            return .unprocessableContent(
                Self.invalid("refresh_token must be the 43 characters /auth/verify or /auth/refresh gave."))
        }
        let at = now()
        let client = caller.address
        metrics.tokenRefresh.increment()
        // Nobody without the device's refresh token can use up its allowance or lock it out: a device is charged
        // only for the refreshes its token proved, and a valid token is honoured whoever else shares its address.
        // Refused refreshes (a lookup of a hash, cheap) are counted per client address; past the limit they are
        // answered 429.
        let device = "device:" + request.deviceId
        if let wait = await limits.wait("refreshTokens", key: device, now: at) {
            return .tooManyRequests(Self.tooMany(wait))
        }
        switch try database.refresh(request.refreshToken, deviceId: request.deviceId, now: at) {
        case .rotated(let refreshToken):
            await limits.charge("refreshTokens", key: device, now: at)
            return .ok(.init(body: .json(try await pair(deviceId: request.deviceId, refreshToken: refreshToken, at))))
        case .reuseDetected:
            await limits.refreshRefused(client: client, now: at)
            logger.warning(
                "a used refresh token came back: the device is unpaired, every token of it revoked",
                metadata: ["device": "\(request.deviceId)"])
            return .unauthorized(Self.refreshRefused)
        case .refused:
            if let wait = await limits.refreshWait(client: client, now: at) {
                return .tooManyRequests(Self.tooMany(wait))
            }
            await limits.refreshRefused(client: client, now: at)
            return .unauthorized(Self.refreshRefused)
        }
    }

    /// The spec's one refusal of a refresh: `invalid_refresh_token`, whatever the reason (a thief learns nothing).
    static let refreshRefused = Operations.RefreshTokens.Output.Unauthorized(
        headers: .init(wwwAuthenticate: "Bearer"),
        body: .json(
            Problem(
                detail: "Invalid or expired refresh token: pair the device again if it keeps being refused.",
                code: "invalid_refresh_token")))

    private func pair(deviceId: String, refreshToken: String, _ at: Date) async throws -> Components.Schemas.TokenPair {
        .init(
            accessToken: try await tokens.issue(deviceId: deviceId, now: at), refreshToken: refreshToken,
            tokenType: .bearer, expiresIn: Int(AccessClaims.lifetime), refreshExpiresIn: Int(RefreshToken.lifetime))
    }

    // MARK: events

    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        switch try await admit("listEvents") {
        case .allowed: break
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        let page = input.query.page ?? 1
        let limit = input.query.limit ?? 20
        guard page >= 1, page <= 100_000 else { return .unprocessableContent(Self.invalid("page starts at 1.")) }
        guard (1...100).contains(limit) else { return .unprocessableContent(Self.invalid("limit is 1 to 100.")) }
        if let asOf = input.query.asOf, asOf < 0 {
            return .unprocessableContent(Self.invalid("as_of is the number the first page gave (0 or more)."))
        }
        let result = try database.events(page: page, limit: limit, asOf: input.query.asOf)
        return .ok(
            .init(
                body: .json(
                    .init(
                        events: result.events.map(Self.mobile), total: Int64(result.total), page: page, limit: limit,
                        hasNext: page * limit < result.total, asOf: result.asOf))))
    }

    func recentEvents(_ input: Operations.RecentEvents.Input) async throws -> Operations.RecentEvents.Output {
        switch try await admit("recentEvents") {
        case .allowed: break
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        let limit = input.query.limit ?? 5
        guard (1...20).contains(limit) else { return .unprocessableContent(Self.invalid("limit is 1 to 20.")) }
        let events = try database.recentEvents(limit: limit).map {
            Components.Schemas.RecentEvent(
                id: $0.id, cameraName: $0.cameraName, description: $0.description, createdAt: $0.createdAt)
        }
        return .ok(.init(body: .json(.init(events: events))))
    }

    func getEvent(_ input: Operations.GetEvent.Input) async throws -> Operations.GetEvent.Output {
        switch try await admit("getEvent") {
        case .allowed: break
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        guard let eventId = Self.id(input.path.eventId), let event = try database.event(eventId) else {
            return .notFound(Self.notFound("No event has this id (it may have been removed after 30 days)."))
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        id: event.id, cameraId: event.cameraId, cameraName: event.cameraName,
                        description: event.description, thumbnailUrl: Self.thumbnailURL(event.id),
                        createdAt: event.createdAt, smartDetectionType: Self.kind(event.smartDetectionType),
                        confidenceScore: event.confidence, hasVideo: event.hasVideo))))
    }

    func getEventThumbnail(_ input: Operations.GetEventThumbnail.Input) async throws
        -> Operations.GetEventThumbnail.Output
    {
        switch try await admit("getEventThumbnail") {
        case .allowed: break
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        guard let eventId = Self.id(input.path.eventId), let jpeg = try database.thumbnail(eventId: eventId) else {
            return .notFound(Self.notFound("No thumbnail for this id: the event is unknown or has no picture."))
        }
        return .ok(
            .init(
                headers: .init(contentLength: Int64(jpeg.count), cacheControl: "private, max-age=86400"),
                body: .jpeg(HTTPBody(jpeg))))
    }

    // MARK: cameras

    func listCameras(_: Operations.ListCameras.Input) async throws -> Operations.ListCameras.Output {
        switch try await admit("listCameras") {
        case .allowed: break
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        let list = await cameras.cameras().map { camera in
            Components.Schemas.Camera(
                id: camera.id, name: camera.name,
                sourceType: Components.Schemas.CameraSourceType(rawValue: camera.sourceType) ?? .test,
                isOnline: camera.isOnline, lastEventAt: camera.lastEventAt)
        }
        return .ok(.init(body: .json(.init(cameras: list))))
    }

    func getCameraSnapshot(_ input: Operations.GetCameraSnapshot.Input) async throws
        -> Operations.GetCameraSnapshot.Output
    {
        switch try await admit("getCameraSnapshot") {
        case .allowed: break
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        var snapshot = CameraSnapshot.unknown
        if let cameraId = Self.id(input.path.cameraId) { snapshot = await cameras.snapshot(cameraId: cameraId) }
        switch snapshot {
        case .jpeg(let jpeg):
            return .ok(
                .init(
                    headers: .init(contentLength: Int64(jpeg.count), cacheControl: "no-store"),
                    body: .jpeg(HTTPBody(jpeg))))
        case .offline:
            return .serviceUnavailable(
                .init(
                    body: .json(
                        Problem(
                            detail: "The camera gives no picture right now; try again in a moment.",
                            code: "camera_offline"))))
        case .unknown:
            return .notFound(Self.notFound("No camera of this hub has this id: list them with /cameras."))
        }
    }

    // MARK: push

    func registerPushToken(_ input: Operations.RegisterPushToken.Input) async throws
        -> Operations.RegisterPushToken.Output
    {
        let deviceId: String
        switch try await admit("registerPushToken") {
        case .allowed(let id): deviceId = id
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        guard case .json(let request) = input.body else { return .unprocessableContent(Self.invalid("no JSON body")) }
        guard request.deviceId == deviceId else { return .forbidden(Self.notYours) }
        let token = request.apnsToken
        guard (64...200).contains(token.utf8.count), token.utf8.allSatisfy(\.isHexDigit) else {
            return .unprocessableContent(Self.invalid("apns_token is the device token in hex (64 to 200 digits)."))
        }
        try database.setPushToken(token.lowercased(), deviceId: deviceId)
        return .ok(.init(body: .json(.init(registered: true))))
    }

    func unregisterPushToken(_ input: Operations.UnregisterPushToken.Input) async throws
        -> Operations.UnregisterPushToken.Output
    {
        let deviceId: String
        switch try await admit("unregisterPushToken") {
        case .allowed(let id): deviceId = id
        case .unauthorized(let answer): return .unauthorized(answer)
        case .limited(let answer): return .tooManyRequests(answer)
        }
        guard case .json(let request) = input.body else { return .unprocessableContent(Self.invalid("no JSON body")) }
        guard request.deviceId == deviceId else { return .forbidden(Self.notYours) }
        try database.setPushToken(nil, deviceId: deviceId)
        return .ok(.init(body: .json(.init(unregistered: true))))
    }

    // MARK: who may call

    var caller: Caller { Caller.current ?? Caller(address: "unknown", isLoopback: false) }

    enum Admission {
        case allowed(deviceId: String)
        case unauthorized(Components.Responses.Unauthorized)
        case limited(Components.Responses.TooManyRequests)
    }

    /// A bearer call: a valid access token of a device still paired, within `operation`'s limit.
    /// - Throws: The store's error when whether the device is paired cannot be read (the gate answers 503: a
    ///   failing disk never tells a paired device it is not).
    func admit(_ operation: String) async throws -> Admission {
        guard let token = caller.bearer else {
            return .unauthorized(
                Self.unauthorized("Send Authorization: Bearer <access_token> (from /auth/verify or /auth/refresh)."))
        }
        let at = now()
        let claims: AccessClaims
        do {
            claims = try await tokens.verify(token, now: at)
        } catch .expired {
            return .unauthorized(
                .init(
                    headers: .init(wwwAuthenticate: #"Bearer error="invalid_token""#),
                    body: .json(
                        Problem(
                            detail: "Access token expired: get a new one from /auth/refresh.", code: "token_expired"))))
        } catch {
            return .unauthorized(Self.unauthorized("The access token is not valid: pair again or refresh."))
        }
        guard try database.activeDevice(claims.deviceId) != nil else {
            return .unauthorized(
                Self.unauthorized("This device is no longer paired with the hub: pair it again with a new code."))
        }
        if let wait = await limits.admit(operation, key: "device:" + claims.deviceId, now: at) {
            return .limited(Self.tooMany(wait))
        }
        return .allowed(deviceId: claims.deviceId)
    }

    // MARK: answers

    static func unauthorized(_ detail: String) -> Components.Responses.Unauthorized {
        .init(headers: .init(wwwAuthenticate: "Bearer"), body: .json(Problem(detail: detail, code: "unauthorized")))
    }

    static func tooMany(_ seconds: Int) -> Components.Responses.TooManyRequests {
        .init(
            headers: .init(retryAfter: seconds),
            body: .json(Problem(detail: "Too many requests: try again in \(seconds) s.", code: "rate_limited")))
    }

    static func invalid(_ detail: String) -> Components.Responses.InvalidRequest {
        .init(body: .json(Problem(detail: "The request does not match the API: \(detail)", code: "invalid_request")))
    }

    static func notFound(_ detail: String) -> Components.Responses.NotFound {
        .init(body: .json(Problem(detail: detail, code: "not_found")))
    }

    static let notYours = Components.Responses.Forbidden(
        body: .json(Problem(detail: "device_id is not the device this token belongs to.", code: "forbidden")))

    // MARK: checks and shapes

    /// 1–128 of `A-Z a-z 0-9 . _ : -` (the spec's DeviceId).
    static func check(deviceId: String) -> String? {
        let ok =
            (1...128).contains(deviceId.utf8.count)
            && deviceId.utf8.allSatisfy {
                $0.isASCIIAlphanumeric || $0 == 0x2E || $0 == 0x5F || $0 == 0x3A || $0 == 0x2D
            }
        return ok ? nil : "device_id is 1 to 128 letters, digits, '.', '_', ':' or '-'."
    }

    /// 1–64 characters (Unicode scalars, as JSON Schema counts them), none of them a control character.
    static func check(deviceName: String) -> String? {
        let ok =
            (1...64).contains(deviceName.unicodeScalars.count)
            && !deviceName.unicodeScalars.contains { $0.properties.generalCategory == .control }
        return ok ? nil : "device_name is 1 to 64 characters (no control characters)."
    }

    /// A UUID in either case (the spec: "paths accept either case"), lowercased as the hub writes its ids; nil for
    /// anything else, which names nothing here.
    static func id(_ text: String) -> String? {
        guard text.utf8.count == 36, UUID(uuidString: text) != nil else { return nil }
        return text.lowercased()
    }

    static func thumbnailURL(_ id: String) -> String { "/api/v1/mobile/events/\(id)/thumbnail" }

    static func kind(_ text: String?) -> Components.Schemas.SmartDetectionType? {
        text.flatMap(Components.Schemas.SmartDetectionType.init(rawValue:))
    }

    static func mobile(_ event: CameraEvent) -> Components.Schemas.MobileEvent {
        .init(
            id: event.id, cameraId: event.cameraId, cameraName: event.cameraName, description: event.description,
            thumbnailUrl: thumbnailURL(event.id), createdAt: event.createdAt,
            smartDetectionType: kind(event.smartDetectionType))
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
