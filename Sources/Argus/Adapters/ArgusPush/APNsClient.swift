public import AsyncHTTPClient
public import Foundation
import JWTKit
public import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// How the hub reaches Apple's Push Notification service: token-based (a `.p8` key), over HTTP/2.
public struct APNsConfiguration: Sendable {
    /// Apple's production server.
    public static let production = URL(string: "https://api.push.apple.com")!
    /// Apple's development server (apps built for development).
    public static let sandbox = URL(string: "https://api.sandbox.push.apple.com")!

    /// The 10-character Team ID of the developer account.
    public var teamId: String
    /// The 10-character Key ID of the `.p8` key.
    public var keyId: String
    /// The `.p8` key (PKCS#8 PEM, P-256).
    public var privateKeyPEM: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    public var server: URL = production
    /// PEM certificates to trust instead of the system's (a private stand-in in tests); nil: the system's.
    public var trustRootsPEM: String?

    public init(teamId: String, keyId: String, privateKeyPEM: String, topic: String) {
        self.teamId = teamId
        self.keyId = keyId
        self.privateKeyPEM = privateKeyPEM
        self.topic = topic
    }
}

/// A notification for one device.
public struct PushNotification: Sendable, Hashable {
    public var title: String
    public var body: String
    /// Groups notifications in Notification Center (a camera's id).
    public var threadId: String?
    /// Extra top-level keys the app reads (`event_id`, `camera_id`).
    public var data: [String: String] = [:]

    public init(title: String, body: String, threadId: String? = nil, data: [String: String] = [:]) {
        self.title = title
        self.body = body
        self.threadId = threadId
        self.data = data
    }

    /// The APNs payload: `aps.alert`, a sound, the thread, then `data`'s keys.
    var payload: Data {
        var aps: [String: Any] = ["alert": ["title": title, "body": body], "sound": "default"]
        if let threadId { aps["thread-id"] = threadId }
        var root: [String: Any] = ["aps": aps]
        for (key, value) in data where key != "aps" { root[key] = value }
        return (try? JSONSerialization.data(withJSONObject: root, options: .sortedKeys)) ?? Data("{}".utf8)
    }
}

/// How one push ended.
public enum PushResult: Sendable, Hashable {
    case delivered(apnsId: String?)
    /// 410: the app was removed or the token is no longer valid; forget it.
    case unregistered
    /// 400 BadDeviceToken: the token will never work; forget it.
    case badDeviceToken
    /// Refused for a reason that is the hub's (its key, its topic, the payload): status and APNs's reason.
    case rejected(status: Int, reason: String)
    /// Not delivered now (network, 429, 5xx): may be tried again later.
    case failed(String)
}

/// Sends notifications to APNs over one HTTP/2 connection (AsyncHTTPClient negotiates h2 by ALPN), with a
/// provider token (ES256 JWT: `kid` the key id, `iss` the team, `iat`) made once and reused for at most 50 minutes
/// (Apple refuses tokens older than an hour and throttles new ones made more often than every 20 minutes).
public actor APNsClient {
    /// Provider tokens are remade after this long.
    public static let tokenLifetime: TimeInterval = 50 * 60

    private let configuration: APNsConfiguration
    private let client: HTTPClient
    private let keys: JWTKeyCollection
    private let logger: Logger
    private let now: @Sendable () -> Date
    private var token: (jwt: String, madeAt: Date)?
    /// A token being made: pushes sent side by side wait for the same one (Apple throttles a key whose tokens
    /// change too often).
    private var making: Task<String, any Error>?

    /// - Throws: ``PushConfigurationError`` when the key is not a P-256 PKCS#8 key or the trust roots do not parse.
    public init(
        _ configuration: APNsConfiguration, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws {
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: configuration.privateKeyPEM)
        } catch {
            throw PushConfigurationError("the APNs key is not a P-256 .p8 key (PKCS#8 PEM): \(error)")
        }
        keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: configuration.keyId))
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let pem = configuration.trustRootsPEM {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
            } catch {
                throw PushConfigurationError("the APNs trust roots are not PEM certificates: \(error)")
            }
        }
        var http = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        http.timeout = .init(connect: .seconds(10), read: .seconds(20))
        http.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        self.configuration = configuration
        self.logger = logger
        self.now = now
    }

    /// Sends `notification` to `deviceToken` (hex). A refused provider token is remade and the push tried once more.
    public func send(_ notification: PushNotification, to deviceToken: String) async -> PushResult {
        let first = await attempt(notification, to: deviceToken)
        if case .rejected(403, let reason) = first, reason == "ExpiredProviderToken" || reason == "InvalidProviderToken"
        {
            token = nil
            return await attempt(notification, to: deviceToken)
        }
        return first
    }

    private func attempt(_ notification: PushNotification, to deviceToken: String) async -> PushResult {
        guard deviceToken.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return .badDeviceToken
        }
        let jwt: String
        do {
            jwt = try await providerToken()
        } catch {
            return .rejected(status: 0, reason: "the provider token could not be made: \(error)")
        }
        let id = UUID().uuidString.lowercased()
        var request = HTTPClientRequest(url: configuration.server.absoluteString + "/3/device/" + deviceToken)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(jwt)")
        request.headers.add(name: "apns-topic", value: configuration.topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-expiration", value: String(Int(now().timeIntervalSince1970) + 3600))
        request.headers.add(name: "apns-id", value: id)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: notification.payload))
        do {
            let response = try await client.execute(request, timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 16 * 1024)
            let reason =
                (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])?[
                    "reason"] as? String ?? ""
            switch response.status.code {
            case 200: return .delivered(apnsId: response.headers.first(name: "apns-id"))
            case 410: return .unregistered
            case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic": return .badDeviceToken
            case 429, 500...599: return .failed("APNs answered \(response.status.code) \(reason)")
            default: return .rejected(status: Int(response.status.code), reason: reason)
            }
        } catch {
            return .failed("APNs could not be reached: \(error)")
        }
    }

    /// The current provider token, made anew when older than ``tokenLifetime``; one at a time.
    private func providerToken() async throws -> String {
        let at = now()
        if let token, at.timeIntervalSince(token.madeAt) < Self.tokenLifetime { return token.jwt }
        if let making { return try await making.value }
        let claims = ProviderClaims(
            iss: IssuerClaim(value: configuration.teamId),
            iat: IssuedAtClaim(value: Date(timeIntervalSince1970: at.timeIntervalSince1970.rounded(.down))))
        let keys = keys
        let kid = JWKIdentifier(string: configuration.keyId)
        let task = Task { try await keys.sign(claims, kid: kid) }
        making = task
        defer { making = nil }
        let jwt = try await task.value
        token = (jwt, at)
        logger.debug("APNs provider token made")
        return jwt
    }

    /// Closes the connection.
    public func shutdown() async {
        try? await client.shutdown()
    }
}

/// The claims of a provider token: the team, and when it was made.
struct ProviderClaims: JWTPayload {
    var iss: IssuerClaim
    var iat: IssuedAtClaim

    func verify(using _: some JWTAlgorithm) async throws {}
}

/// Why the push configuration cannot be used.
public struct PushConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) { self.description = description }
}
