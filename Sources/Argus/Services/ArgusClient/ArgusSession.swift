public import ArgusAPI
public import Foundation
import HTTPTypes
public import OpenAPIRuntime

/// What an app keeps once paired (the refresh token is a secret: a 0600 file here, the Keychain on iOS).
public struct StoredSession: Codable, Sendable, Hashable {
    public var hub: URL
    public var fingerprint: String
    public var deviceId: String
    public var deviceName: String
    public var accessToken: String
    public var refreshToken: String
    public var accessExpiresAt: Date
}

/// Where the session is kept between runs.
public protocol SessionStore: Sendable {
    func load() throws -> StoredSession?
    func save(_ session: StoredSession) throws
    func clear() throws
}

/// Why a call did not give what was asked, in words for the person using the app.
public enum ArgusClientError: Error, Equatable, Sendable, CustomStringConvertible {
    case notPaired
    /// The hub refused the pairing code (wrong, expired, or too many tries).
    case pairingRefused(String)
    /// The device is no longer paired (revoked, or its tokens were revoked): pair again.
    case unauthorized(String)
    case notFound(String)
    case hub(status: Int, detail: String)
    case unreachable(String)
    /// The hub's certificate is not the pinned one: nothing was sent.
    case untrusted(String)
    /// What was given cannot be used (an address, a fingerprint).
    case invalid(String)

    public var description: String {
        switch self {
        case .notPaired: "not paired with a hub yet: run `argus pair` with the code and fingerprint the hub shows"
        case .pairingRefused(let detail): "the hub refused the code: \(detail)"
        case .unauthorized(let detail): "the hub no longer accepts this device (\(detail)): pair it again"
        case .notFound(let detail): detail
        case .hub(let status, let detail): "the hub answered \(status): \(detail)"
        case .unreachable(let why): "the hub cannot be reached: \(why)"
        case .untrusted(let why): why
        case .invalid(let why): why
        }
    }
}

/// A paired app's side of the mobile API, over the generated `Client` and any transport (AsyncHTTPClient with a
/// pinned certificate here, URLSession on iOS): tokens refreshed a minute before they expire (and once more when
/// the hub says 401), the rotated refresh token saved at once, transient failures (network, 429 with a short
/// `Retry-After`, 503) tried again with a short backoff, and every refusal as an ``ArgusClientError``.
public actor ArgusSession {
    private let client: Client
    private let store: any SessionStore
    private var session: StoredSession
    private let now: @Sendable () -> Date
    private let pause: @Sendable (Duration) async throws -> Void

    /// How many times a transient failure is tried again.
    static let retries = 2

    /// Pairs this device with the hub at `client`'s server using `code`, and saves the session.
    public static func pair(
        code: String, deviceName: String, deviceId: String, deviceType: Components.Schemas.DeviceType = .iphone,
        hub: URL, fingerprint: String, transport: any ClientTransport, store: any SessionStore,
        now: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> ArgusSession {
        let client = Client(serverURL: hub, transport: transport)
        let answer: Operations.VerifyPairingCode.Output
        do {
            answer = try await client.verifyPairingCode(
                body: .json(
                    .init(pairingCode: code, deviceName: deviceName, deviceId: deviceId, deviceType: deviceType)))
        } catch {
            throw ArgusClientError.unreachable("\(error)")
        }
        let pair: Components.Schemas.TokenPair
        switch answer {
        case .ok(let ok): pair = try ok.body.json
        case .badRequest(let refused): throw ArgusClientError.pairingRefused(try refused.body.json.detail)
        case .tooManyRequests(let limited):
            throw ArgusClientError.pairingRefused("too many tries; wait \(limited.headers.retryAfter) s")
        case .unprocessableContent(let invalid): throw ArgusClientError.pairingRefused(try invalid.body.json.detail)
        case .contentTooLarge: throw ArgusClientError.pairingRefused("the request was too large")
        case .undocumented(let status, _): throw ArgusClientError.hub(status: status, detail: "unexpected answer")
        }
        let session = StoredSession(
            hub: hub, fingerprint: fingerprint, deviceId: deviceId, deviceName: deviceName,
            accessToken: pair.accessToken, refreshToken: pair.refreshToken,
            accessExpiresAt: now().addingTimeInterval(TimeInterval(pair.expiresIn)))
        try store.save(session)
        return ArgusSession(session: session, transport: transport, store: store, now: now)
    }

    /// A session from the store (nil: not paired).
    public static func resume(
        transport: any ClientTransport, store: any SessionStore, now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> ArgusSession? {
        try store.load().map { ArgusSession(session: $0, transport: transport, store: store, now: now) }
    }

    init(
        session: StoredSession, transport: any ClientTransport, store: any SessionStore,
        now: @escaping @Sendable () -> Date,
        pause: @escaping @Sendable (Duration) async throws -> Void = {
            try await Task.sleep(for: $0)
        }
    ) {
        self.session = session
        self.store = store
        self.now = now
        self.pause = pause
        let bearer = BearerMiddleware()
        client = Client(serverURL: session.hub, transport: transport, middlewares: [bearer])
        bearerMiddleware = bearer
    }

    private let bearerMiddleware: BearerMiddleware

    public var deviceId: String { session.deviceId }

    // MARK: calls

    public func events(page: Int = 1, limit: Int = 20, asOf: Int64? = nil) async throws -> Components.Schemas.EventPage
    {
        try await call { client in
            switch try await client.listEvents(query: .init(page: page, limit: limit, asOf: asOf)) {
            case .ok(let ok): return .value(try ok.body.json)
            case .unauthorized(let no): return .unauthorized(try no.body.json.detail)
            case .tooManyRequests(let limited): return .retry(after: limited.headers.retryAfter)
            case .unprocessableContent(let invalid):
                return .failed(.hub(status: 422, detail: try invalid.body.json.detail))
            case .undocumented(let status, _): return .status(status)
            }
        }
    }

    public func recent(limit: Int = 5) async throws -> [Components.Schemas.RecentEvent] {
        try await call { client in
            switch try await client.recentEvents(query: .init(limit: limit)) {
            case .ok(let ok): return .value(try ok.body.json.events)
            case .unauthorized(let no): return .unauthorized(try no.body.json.detail)
            case .tooManyRequests(let limited): return .retry(after: limited.headers.retryAfter)
            case .unprocessableContent(let invalid):
                return .failed(.hub(status: 422, detail: try invalid.body.json.detail))
            case .undocumented(let status, _): return .status(status)
            }
        }
    }

    public func thumbnail(eventId: String) async throws -> Data {
        try await call { client in
            switch try await client.getEventThumbnail(path: .init(eventId: eventId)) {
            case .ok(let ok): return .value(try await Data(collecting: try ok.body.jpeg, upTo: 1 << 20))
            case .unauthorized(let no): return .unauthorized(try no.body.json.detail)
            case .tooManyRequests(let limited): return .retry(after: limited.headers.retryAfter)
            case .notFound(let missing): return .failed(.notFound(try missing.body.json.detail))
            case .undocumented(let status, _): return .status(status)
            }
        }
    }

    public func cameras() async throws -> [Components.Schemas.Camera] {
        try await call { client in
            switch try await client.listCameras() {
            case .ok(let ok): return .value(try ok.body.json.cameras)
            case .unauthorized(let no): return .unauthorized(try no.body.json.detail)
            case .tooManyRequests(let limited): return .retry(after: limited.headers.retryAfter)
            case .undocumented(let status, _): return .status(status)
            }
        }
    }

    public func snapshot(cameraId: String) async throws -> Data {
        try await call { client in
            switch try await client.getCameraSnapshot(path: .init(cameraId: cameraId)) {
            case .ok(let ok): return .value(try await Data(collecting: try ok.body.jpeg, upTo: 1 << 20))
            case .unauthorized(let no): return .unauthorized(try no.body.json.detail)
            case .tooManyRequests(let limited): return .retry(after: limited.headers.retryAfter)
            case .notFound(let missing): return .failed(.notFound(try missing.body.json.detail))
            case .serviceUnavailable: return .retry(after: 1)
            case .undocumented(let status, _): return .status(status)
            }
        }
    }

    public func registerPush(token: String) async throws {
        let deviceId = session.deviceId
        try await call { client in
            switch try await client.registerPushToken(body: .json(.init(apnsToken: token, deviceId: deviceId))) {
            case .ok: return .value(())
            case .unauthorized(let no): return .unauthorized(try no.body.json.detail)
            case .forbidden(let no): return .failed(.hub(status: 403, detail: try no.body.json.detail))
            case .tooManyRequests(let limited): return .retry(after: limited.headers.retryAfter)
            case .unprocessableContent(let invalid):
                return .failed(.hub(status: 422, detail: try invalid.body.json.detail))
            case .contentTooLarge: return .failed(.hub(status: 413, detail: "too large"))
            case .undocumented(let status, _): return .status(status)
            }
        }
    }

    // MARK: tokens and retries

    enum Outcome<T: Sendable>: Sendable {
        case value(T)
        case unauthorized(String)
        case retry(after: Int)
        case failed(ArgusClientError)
        case status(Int)
    }

    /// Runs `body` with a fresh access token; refreshes once on 401; tries transient failures again.
    private func call<T: Sendable>(_ body: @Sendable (Client) async throws -> Outcome<T>) async throws -> T {
        var refreshed = false
        var attempt = 0
        while true {
            if session.accessExpiresAt.timeIntervalSince(now()) < 60 {
                try await refresh()
                refreshed = true
            }
            bearerMiddleware.token.set(session.accessToken)
            let outcome: Outcome<T>
            do {
                outcome = try await body(client)
            } catch {
                guard attempt < Self.retries else { throw ArgusClientError.unreachable("\(error)") }
                attempt += 1
                try await pause(.milliseconds(500 * attempt))
                continue
            }
            switch outcome {
            case .value(let value):
                return value
            case .unauthorized(let detail):
                guard !refreshed else { throw ArgusClientError.unauthorized(detail) }
                try await refresh()
                refreshed = true
            case .retry(let seconds):
                guard attempt < Self.retries, seconds <= 10 else {
                    throw ArgusClientError.hub(status: 429, detail: "busy: try again in \(seconds) s")
                }
                attempt += 1
                try await pause(.seconds(max(1, seconds)))
            case .failed(let error):
                throw error
            case .status(let status):
                throw ArgusClientError.hub(status: status, detail: "an answer the API does not describe")
            }
        }
    }

    /// A new token pair for the refresh token (rotated: the new one is saved before anything else happens).
    private func refresh() async throws {
        let answer = try await client.refreshTokens(
            body: .json(.init(refreshToken: session.refreshToken, deviceId: session.deviceId)))
        switch answer {
        case .ok(let ok):
            let pair = try ok.body.json
            session.accessToken = pair.accessToken
            session.refreshToken = pair.refreshToken
            session.accessExpiresAt = now().addingTimeInterval(TimeInterval(pair.expiresIn))
            try store.save(session)
        case .unauthorized(let no):
            throw ArgusClientError.unauthorized(try no.body.json.detail)
        case .tooManyRequests(let limited):
            throw ArgusClientError.hub(status: 429, detail: "too many refreshes; wait \(limited.headers.retryAfter) s")
        case .unprocessableContent(let invalid):
            throw ArgusClientError.hub(status: 422, detail: try invalid.body.json.detail)
        case .contentTooLarge:
            throw ArgusClientError.hub(status: 413, detail: "too large")
        case .undocumented(let status, _):
            throw ArgusClientError.hub(status: status, detail: "an answer the API does not describe")
        }
    }
}

/// Puts `Authorization: Bearer <token>` on every call but the two that must not carry one.
final class BearerMiddleware: ClientMiddleware {
    let token = TokenBox()

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if operationID != "refreshTokens" && operationID != "verifyPairingCode", let token = token.get() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

/// The current access token, for the middleware.
final class TokenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: String?

    func set(_ token: String) { lock.withLock { value = token } }
    func get() -> String? { lock.withLock { value } }
}
