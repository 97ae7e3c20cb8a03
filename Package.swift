// swift-tools-version:6.1
//
// One package, several products, one shared platform: see docs/ARCHITECTURE.md and the map in docs/development.md.
//
// The folders are the architecture: Sources/<area>/<layer>/<module>, where <area> is Platform (shared by every
// product) or a product (CribCall, BeMyEars, …) and <layer> is, from the bottom up,
//   CBindings -> Core -> Adapters -> Services -> Executables
// Imports only point downward (ArchitectureTests checks it from these folders). Tools (benchmarks, probes, the fuzz
// target) sit in Sources/Tools and may use any layer. Tests mirror Sources: Tests/<area>/<layer>/<module>Tests.
//
// Adding a module is one line in its area's list below.

import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    // https://github.com/apple/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// MARK: - Packages from the mirror

let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let asyncHTTPClient: Target.Dependency = .product(name: "AsyncHTTPClient", package: "async-http-client")
let asn1: Target.Dependency = .product(name: "SwiftASN1", package: "swift-asn1")
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")
let openAPIAsyncHTTPClient: Target.Dependency = .product(
    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
let hummingbirdCore: Target.Dependency = .product(name: "HummingbirdCore", package: "hummingbird")
let hummingbirdTLS: Target.Dependency = .product(name: "HummingbirdTLS", package: "hummingbird")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let hummingbirdTesting: Target.Dependency = .product(name: "HummingbirdTesting", package: "hummingbird")
let openAPIRuntime: Target.Dependency = .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
let openAPIHummingbird: Target.Dependency = .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird")
let jwtKit: Target.Dependency = .product(name: "JWTKit", package: "jwt-kit")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let nioWebSocket: Target.Dependency = .product(name: "NIOWebSocket", package: "swift-nio")
let nioHTTPTypes: Target.Dependency = .product(name: "NIOHTTPTypes", package: "swift-nio-extras")
let nioHTTPTypesHTTP1: Target.Dependency = .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras")
let postgresNIO: Target.Dependency = .product(name: "PostgresNIO", package: "postgres-nio")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals: Target.Dependency = .product(name: "UnixSignals", package: "swift-service-lifecycle")
let x509: Target.Dependency = .product(name: "X509", package: "swift-certificates")

// MARK: - How a folder becomes a target

enum Layer: String {
    case cBindings = "CBindings"
    case core = "Core"
    case adapters = "Adapters"
    case services = "Services"
    case executables = "Executables"
}

/// A module's README.md is documentation, not a source: excluded wherever it exists.
func readme(at path: String) -> [String] {
    FileManager.default.fileExists(atPath: "\(Context.packageDirectory)/\(path)/README.md") ? ["README.md"] : []
}

/// One area of the tree (Platform or a product): its modules, its tests and its test support.
struct Area {
    let name: String

    func module(
        _ layer: Layer,
        _ name: String,
        _ dependencies: [Target.Dependency] = [],
        resources: [Resource]? = nil
    ) -> Target {
        let path = "Sources/\(self.name)/\(layer.rawValue)/\(name)"
        if layer == .executables {
            return .executableTarget(
                name: name, dependencies: dependencies, path: path, exclude: readme(at: path),
                swiftSettings: swiftSettings
            )
        }
        return .target(
            name: name, dependencies: dependencies, path: path, exclude: readme(at: path), resources: resources,
            swiftSettings: swiftSettings
        )
    }

    func core(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
        module(.core, name, dependencies)
    }

    func adapter(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
        module(.adapters, name, dependencies)
    }

    func service(_ name: String, _ dependencies: [Target.Dependency] = [], resources: [Resource]? = nil) -> Target {
        module(.services, name, dependencies, resources: resources)
    }

    func executable(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
        module(.executables, name, dependencies)
    }

    /// A C library from Debian: `Sources/<area>/CBindings/<name>/module.modulemap` (+ shim.h).
    func cBinding(_ name: String, pkgConfig: String? = nil, apt: [String] = []) -> Target {
        .systemLibrary(
            name: name, path: "Sources/\(self.name)/CBindings/\(name)", pkgConfig: pkgConfig,
            providers: apt.isEmpty ? nil : [.apt(apt)]
        )
    }

    /// `<module>Tests` in Tests/<area>/<layer>/, depending on the module, the shared TestSupport and the area's own.
    func tests(_ layer: Layer, _ module: String, _ dependencies: [Target.Dependency] = []) -> Target {
        let name = "\(module)Tests"
        return .testTarget(
            name: name,
            dependencies: [.target(name: module), "TestSupport"] + supportDependency + dependencies,
            path: "Tests/\(self.name)/\(layer.rawValue)/\(name)",
            swiftSettings: swiftSettings
        )
    }

    /// Tests of a whole area's behaviour rather than one module's (end-to-end, command line).
    func tests(_ layer: Layer, named name: String, _ dependencies: [Target.Dependency]) -> Target {
        .testTarget(
            name: name,
            dependencies: ["TestSupport"] + supportDependency + dependencies,
            path: "Tests/\(self.name)/\(layer.rawValue)/\(name)",
            swiftSettings: swiftSettings
        )
    }

    /// Helpers shared by this area's test targets: Tests/<area>/<area>TestSupport (TestSupport for Platform).
    var supportName: String { name == "Platform" ? "TestSupport" : "\(name)TestSupport" }

    private var supportDependency: [Target.Dependency] { name == "Platform" ? [] : [.target(name: supportName)] }

    func testSupport(_ dependencies: [Target.Dependency]) -> Target {
        .target(
            name: supportName, dependencies: dependencies, path: "Tests/\(name)/\(supportName)",
            swiftSettings: swiftSettings
        )
    }
}

/// Benchmarks, probes for interop tests and the fuzz target: Sources/Tools/<name>.
func tool(_ name: String, _ dependencies: [Target.Dependency] = [], library: Bool = false) -> Target {
    let path = "Sources/Tools/\(name)"
    if library {
        return .target(name: name, dependencies: dependencies, path: path, swiftSettings: swiftSettings)
    }
    return .executableTarget(name: name, dependencies: dependencies, path: path, swiftSettings: swiftSettings)
}

// MARK: - Platform: what every product stands on

let platform = Area(name: "Platform")
let platformTargets: [Target] = [
    platform.cBinding("CDBus", pkgConfig: "dbus-1", apt: ["libdbus-1-dev"]),
    platform.cBinding("CDNSSD", pkgConfig: "avahi-compat-libdns_sd", apt: ["libavahi-compat-libdnssd-dev"]),
    platform.cBinding(
        "CGStreamer", pkgConfig: "gstreamer-app-1.0", apt: ["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"]
    ),
    platform.cBinding("CLibFuzzer"),
    platform.cBinding(
        "CNGTCP2", pkgConfig: "libngtcp2_crypto_gnutls",
        apt: ["libngtcp2-dev", "libngtcp2-crypto-gnutls-dev", "libgnutls28-dev"]
    ),
    // The kernel's rtnetlink headers (linux-libc-dev): links and routes, for NetworkWatch.
    platform.cBinding("CNetlink"),
    platform.cBinding("CQREncode", pkgConfig: "libqrencode", apt: ["libqrencode-dev"]),

    platform.core("CanonicalJSON"),
    platform.core("CPace", [crypto]),
    platform.core("DeviceIdentity", [crypto, x509, asn1]),
    platform.core("SoundDetection"),

    // Owns CGStreamer: one initialisation, element checks that name the Debian package, pipelines, the bus, appsink.
    platform.adapter("GStreamer", ["CGStreamer"]),
    // A daemon's control socket: Unix-domain, 0600, one JSON request per connection, answered by JSON lines.
    platform.adapter("ControlSocket", ["CanonicalJSON", nioCore, nioPosix, serviceLifecycle]),
    // A long-running program's parts as services in one group: started in order, stopped in reverse on a signal.
    platform.adapter("ProgramLifecycle", [logging, serviceLifecycle, unixSignals]),
    // Background jobs shared by workers: SQLite on one machine (PostgreSQL for several: PostgresJobQueue).
    platform.adapter("JobQueue", [grdb, "Postgres", "SQLiteFiles", postgresNIO, logging]),
    // A product's SQLite file: created 0600 without a raw open beside a live database, one pool per file per process.
    platform.adapter("SQLiteFiles", [grdb]),
    // PostgreSQL connection settings from a postgres:// URL, for every adapter that uses PostgreSQL.
    platform.adapter("Postgres", [postgresNIO, logging]),
    platform.adapter("AudioCapture", ["GStreamer", "SoundDetection"]),
    // A camera captured continuously at a low rate: grey frames, faces (OpenCV through facedetect), a JPEG.
    platform.adapter("VideoCapture", ["GStreamer"]),
    platform.adapter("DesktopNotifications", ["CDBus"]),
    platform.adapter("DeviceIdentityStore", ["DeviceIdentity", asn1]),
    // Connectivity from the kernel (rtnetlink link and route events, not polling) and an online judgement.
    platform.adapter("NetworkWatch", ["CNetlink"]),
    platform.adapter("QRCode", ["CQREncode"]),
    platform.adapter("ServiceDiscovery", ["CDNSSD", logging, serviceLifecycle]),
    platform.adapter("SystemdUnit"),
    // Single key presses on an interactive terminal (raw mode through termios).
    platform.adapter("Terminal", [logging]),
    // A web app for the person at this machine: loopback only, a per-run secret in every address, security
    // headers, static files, Server-Sent Events (Hummingbird).
    platform.adapter("LocalWebApp", [hummingbird, logging, nioCore, serviceLifecycle]),
    // Slow and greedy HTTP clients kept in check: a deadline for each request head, connections per address.
    platform.adapter("ConnectionGuard", [hummingbirdCore, logging, nioCore, nioHTTPTypes]),
]
let platformTests: [Target] = [
    platform.testSupport(["CanonicalJSON", asyncHTTPClient, nioCore, nioHTTP1]),
    platform.tests(.core, "CanonicalJSON"),
    platform.tests(.core, "CPace"),
    platform.tests(.core, "DeviceIdentity", ["DeviceIdentityStore", crypto, x509]),
    platform.tests(.core, "SoundDetection"),
    platform.tests(.adapters, "GStreamer"),
    platform.tests(.adapters, "ControlSocket", ["CanonicalJSON"]),
    platform.tests(.adapters, "JobQueue"),
    platform.tests(.adapters, "SQLiteFiles", [grdb]),
    platform.tests(.adapters, "Postgres"),
    platform.tests(.adapters, "AudioCapture", ["GStreamer", "CGStreamer", "SoundDetection"]),
    platform.tests(.adapters, "VideoCapture", ["GStreamer"]),
    platform.tests(.adapters, "DesktopNotifications"),
    platform.tests(.adapters, "NetworkWatch", ["network-watch-probe"]),
    platform.tests(.adapters, "QRCode"),
    platform.tests(.adapters, "ServiceDiscovery", ["mdns-probe"]),
    platform.tests(.adapters, "SystemdUnit"),
    platform.tests(.adapters, "Terminal", [logging]),
    platform.tests(.adapters, "LocalWebApp", [hummingbird, nioCore]),
    .testTarget(
        name: "ArchitectureTests", dependencies: ["TestSupport", "SafetyDetection"], swiftSettings: swiftSettings),
]

// MARK: - CribCall: the baby monitor

let cribCall = Area(name: "CribCall")
let cribCallTargets: [Target] = [
    cribCall.core("CribCallProtocol", ["CanonicalJSON", "CPace", "DeviceIdentity", crypto, nioCore]),
    // CribAlert's judgement (PROTOCOL.md §11): frames and faces in, status and alerts out; no camera, no clock.
    cribCall.core("SafetyDetection", ["CribCallProtocol"]),

    // The control channel as the services see it (QUIC implements it; in-memory twin inside).
    cribCall.adapter("ControlTransport", ["CribCallProtocol", "DeviceIdentity", nioCore]),
    // The media side of live streams as the services see it (Media implements it; in-memory twin inside).
    cribCall.adapter("StreamMedia", ["CribCallProtocol"]),
    cribCall.adapter(
        "CribCallStore",
        [grdb, "SQLiteFiles", "DeviceIdentity", "CribCallProtocol", "SafetyDetection", "SoundDetection"]),
    // PROTOCOL.md §10 over the generic DNS-SD adapter: monitors advertised, browsed and merged.
    cribCall.adapter("CribCallDiscovery", ["CribCallProtocol", "ServiceDiscovery"]),
    // `cribcall monitor` / `cribcall listen` as systemd user services, over the generic SystemdUnit.
    cribCall.adapter("CribCallSystemd", ["SystemdUnit"]),
    cribCall.adapter(
        "QUIC",
        ["CNGTCP2", "ControlTransport", "DeviceIdentity", crypto, logging, nioCore, nioPosix, x509, asn1]
    ),
    cribCall.adapter(
        "Media",
        [
            "GStreamer", "StreamMedia", "CribCallProtocol", "DeviceIdentity", "AudioCapture", "SoundDetection",
            "VideoCapture", logging,
        ]
    ),

    cribCall.service("CribCallControl", ["ControlTransport", "CribCallProtocol", "DeviceIdentity", logging, nioCore]),
    cribCall.service(
        "CribCallMonitor",
        [
            "AudioCapture", "CanonicalJSON", "ControlTransport", "CribCallControl", "CribCallDiscovery",
            "CribCallProtocol", "CribCallStore", "DeviceIdentity", "QRCode", "SafetyDetection", "ServiceDiscovery",
            "SoundDetection", "StreamMedia", "VideoCapture", logging,
        ]
    ),
    cribCall.service(
        "CribCallListener",
        [
            "CanonicalJSON", "ControlTransport", "CribCallDiscovery", "CribCallProtocol", "CribCallStore",
            "DesktopNotifications", "DeviceIdentity", "SafetyDetection", "ServiceDiscovery", "StreamMedia", logging,
        ]
    ),

    // The app for parents (CribCall's and CribAlert's screens) as a local web app: its state, API and files.
    cribCall.service(
        "CribCallWeb",
        [
            "CanonicalJSON", "ControlTransport", "CribCallListener", "CribCallMonitor", "CribCallProtocol",
            "CribCallStore", "DeviceIdentity", "LocalWebApp", "QRCode", "SafetyDetection", "ServiceDiscovery",
            "StreamMedia", hummingbird, logging, nioCore,
        ],
        resources: [.copy("Public")]
    ),

    // What any program that is a CribCall device needs, without command-line text (cribcall's commands and the
    // Argus hub): the data directory, pairing, the paired monitors.
    cribCall.service(
        "CribCallRuntime",
        [
            "CanonicalJSON", "CribCallListener", "CribCallProtocol", "CribCallStore", "DeviceIdentity",
            "DeviceIdentityStore", "QUIC", "ServiceDiscovery",
        ]
    ),

    // The cribcall program's commands as callable functions: composes the services with their adapters.
    cribCall.service(
        "CribCallApp",
        [
            "AudioCapture", "CanonicalJSON", "CribCallDiscovery", "CribCallListener", "CribCallMonitor",
            "CribCallProtocol", "CribCallRuntime", "CribCallStore", "CribCallSystemd", "DesktopNotifications",
            "DeviceIdentity",
            "DeviceIdentityStore", "Media", "QRCode", "QUIC", "ServiceDiscovery", "SoundDetection", "StreamMedia",
            "SystemdUnit", "Terminal", "ControlSocket", "VideoCapture", "CribCallWeb", "LocalWebApp",
            "ProgramLifecycle", logging, serviceLifecycle,
        ]
    ),

    cribCall.executable("cribcall", ["CribCallApp", "CribCallRuntime", argumentParser, logging]),
]
let cribCallTests: [Target] = [
    cribCall.testSupport(["CribCallMonitor", "CribCallProtocol", "CribCallStore", "DeviceIdentity", "SafetyDetection"]),
    cribCall.tests(
        .core, "CribCallProtocol", ["CanonicalJSON", "CPace", "DeviceIdentity", "FuzzHarness", nioCore, crypto]),
    cribCall.tests(.core, "SafetyDetection", ["CribCallProtocol", "SoundDetection"]),
    cribCall.tests(.adapters, "ControlTransport", ["CribCallProtocol", "DeviceIdentity", nioCore]),
    cribCall.tests(.adapters, "CribCallStore", ["DeviceIdentity", "CribCallProtocol", "SoundDetection"]),
    cribCall.tests(.adapters, "CribCallDiscovery", ["CribCallProtocol", "ServiceDiscovery", "mdns-probe"]),
    cribCall.tests(.adapters, "CribCallSystemd", ["SystemdUnit"]),
    cribCall.tests(
        .adapters, "QUIC",
        [
            "quic-probe", "CribCallControl", "CribCallMonitor", "CribCallStore", "DeviceIdentityStore",
            "SoundDetection",
            "ControlTransport", "CribCallProtocol", "DeviceIdentity", nioCore,
        ]
    ),
    cribCall.tests(
        .adapters, "Media",
        [
            "GStreamer", "CGStreamer", "StreamMedia", "CribCallProtocol", "DeviceIdentity", "AudioCapture",
            "SoundDetection", "VideoCapture",
            "CribCallMonitor", "CribCallListener", "CribCallStore", "QUIC",
        ]
    ),
    cribCall.tests(.services, "CribCallControl", ["ControlTransport", "CribCallProtocol", "DeviceIdentity", nioCore]),
    cribCall.tests(
        .services, "CribCallMonitor",
        [
            "AudioCapture", "CribCallDiscovery", "ServiceDiscovery", "StreamMedia", "ControlTransport",
            "CribCallProtocol", "CribCallStore", "DeviceIdentity", "SafetyDetection", "SoundDetection", "VideoCapture",
            nioCore,
        ]
    ),
    cribCall.tests(
        .services, "CribCallListener",
        [
            "DesktopNotifications", "StreamMedia", "CribCallMonitor", "ControlTransport", "CribCallDiscovery",
            "CribCallProtocol", "CribCallStore", "DeviceIdentity", "SafetyDetection", "ServiceDiscovery",
            "SoundDetection",
        ]
    ),
    cribCall.tests(.services, "CribCallApp", ["CribCallRuntime", "CribCallStore", "DeviceIdentity"]),
    cribCall.tests(.services, "CribCallRuntime", ["CribCallProtocol", "CribCallStore", "DeviceIdentity"]),
    cribCall.tests(
        .services, "CribCallWeb",
        [
            "CanonicalJSON", "ControlTransport", "CribCallListener", "CribCallMonitor", "CribCallProtocol",
            "CribCallStore", "DeviceIdentity", "LocalWebApp", "StreamMedia",
        ]
    ),
    cribCall.tests(
        .executables, named: "CribCallCLITests",
        [
            "cribcall", "CanonicalJSON", "ControlTransport", "CribCallProtocol", "CribCallStore", "DeviceIdentity",
            "QUIC",
        ]
    ),
    cribCall.tests(.executables, named: "CribCallEndToEndTests", ["cribcall"]),
]

// MARK: - BeMyEars: video calls with sign-language interpreters

let beMyEars = Area(name: "BeMyEars")
let beMyEarsTargets: [Target] = [
    // The signaling logic of BEMYEARS-PROTOCOL.md, over a store protocol (in memory or PostgreSQL).
    beMyEars.core("BeMyEarsCore", ["CanonicalJSON"]),
    beMyEars.adapter("BeMyEarsPostgres", ["BeMyEarsCore", "CanonicalJSON", "Postgres", postgresNIO, logging]),
    beMyEars.service(
        "BeMyEarsServer",
        [
            "BeMyEarsCore", "BeMyEarsPostgres", "CanonicalJSON", "ConnectionGuard", "DeviceIdentityStore",
            "LocalWebApp",
            "ServiceDiscovery", crypto, nioCore, nioHTTP1, nioHTTPTypes, nioHTTPTypesHTTP1,
            nioPosix,
            nioWebSocket,
            hummingbird,
            hummingbirdCore, logging, serviceLifecycle,
        ],
        resources: [.copy("Public")]
    ),
    beMyEars.executable("bemyears-server", ["BeMyEarsServer", argumentParser]),
]
let beMyEarsTests: [Target] = [
    beMyEars.testSupport(["BeMyEarsCore"]),
    beMyEars.tests(.core, "BeMyEarsCore", ["CanonicalJSON"]),
    beMyEars.tests(.adapters, "BeMyEarsPostgres", ["BeMyEarsCore", "CanonicalJSON"]),
    beMyEars.tests(
        .services, "BeMyEarsServer",
        ["BeMyEarsCore", "BeMyEarsPostgres", "bemyears-server", hummingbirdTesting, logging, nioCore, nioPosix]
    ),
]

// MARK: - Toukan: the recorder that never loses audio, its upload queue and its backend

let toukan = Area(name: "Toukan")
let toukanTargets: [Target] = [
    // The ledger, the upload queue policy, naming, replies, the POST /upload and tus 1.0 contracts (both sides).
    toukan.core("ToukanCore", ["CanonicalJSON", crypto]),
    // Crash-safe recording (fragmented AAC .m4a) over the GStreamer adapter; lost inputs become gap markers.
    toukan.adapter("ToukanRecorder", ["ToukanCore", "GStreamer", "AudioCapture"]),
    // The client side: the ledger in SQLite (GRDB, WAL, 0600).
    toukan.adapter("ToukanStore", ["ToukanCore", "SQLiteFiles", grdb]),
    // The client side: POST /upload and tus 1.0 over async-http-client, streamed from disk.
    toukan.adapter("ToukanUploader", ["ToukanCore", asyncHTTPClient, nioCore, nioHTTP1, nioPosix, nioSSL]),
    // The upload queue running: ToukanCore's decisions over the store, the uploader and the network watch.
    toukan.service("ToukanUploads", ["ToukanCore", "ToukanStore", "ToukanUploader", "NetworkWatch", logging]),
    // `toukan`'s work: the recorder daemon behind its control socket, started on first use; the commands.
    toukan.service(
        "ToukanApp",
        [
            "CanonicalJSON", "ControlSocket", "DeviceIdentityStore", "NetworkWatch", "SystemdUnit", "Terminal",
            "ToukanCore", "ToukanRecorder", "ToukanStore", "ToukanUploader", "ToukanUploads", "ProgramLifecycle",
            logging, serviceLifecycle,
        ]
    ),
    toukan.executable("toukan", ["ToukanApp", argumentParser, logging]),
    // The backend: memories in SQLite, decoding, loudness and PocketSphinx transcription, the HTTP server.
    // The server's memories and tus uploads: SQLite on one machine, PostgreSQL for several.
    toukan.adapter("ToukanMemoryStore", [grdb, "SQLiteFiles", "Postgres", postgresNIO, nioCore, logging]),
    toukan.adapter("AudioAnalysis", ["GStreamer", "ToukanCore"]),
    toukan.service(
        "ToukanServer",
        [
            "AudioAnalysis", "CanonicalJSON", "ConnectionGuard", "DeviceIdentityStore", "JobQueue", "Postgres",
            "ToukanCore",
            "ToukanMemoryStore", crypto, hummingbird, hummingbirdCore, logging, nioCore, postgresNIO, serviceLifecycle,
        ],
        resources: [.copy("Public")]
    ),
    toukan.executable("toukan-server", ["ToukanServer", argumentParser]),
]
let toukanTests: [Target] = [
    toukan.testSupport(["ToukanCore", "ToukanUploader", "TestSupport", hummingbird, nioCore, nioPosix, logging]),
    toukan.tests(.core, "ToukanCore", ["CanonicalJSON", "FuzzHarness", crypto]),
    toukan.tests(.adapters, "ToukanRecorder", ["AudioCapture", "ToukanCore", "toukan-record-probe"]),
    toukan.tests(.adapters, "ToukanStore", ["ToukanCore"]),
    toukan.tests(.adapters, "ToukanMemoryStore"),
    toukan.tests(.adapters, "ToukanUploader", ["ToukanCore"]),
    toukan.tests(
        .services, "ToukanUploads",
        ["ToukanCore", "ToukanStore", "ToukanUploader", "NetworkWatch", "upload-loop-probe", logging]
    ),
    toukan.tests(.executables, named: "ToukanCLITests", ["toukan", "toukan-server", "ToukanCore"]),
    toukan.tests(
        .services, "ToukanServer",
        [
            "AudioAnalysis", "CanonicalJSON", "JobQueue", "ToukanCore", "ToukanMemoryStore", "ToukanUploader",
            "toukan-server", hummingbirdTesting, logging, nioCore,
        ]
    ),
]

// MARK: - Argus: the home camera hub and its mobile API

let argus = Area(name: "Argus")
let argusTargets: [Target] = [
    // Pairing codes, refresh-token rotation and attempt limits: pure rules, the clock passed in.
    argus.core("ArgusAuth", ["DeviceIdentity", crypto]),
    // Motion in a camera's picture by frame differencing, with where it was in words.
    argus.core("ArgusVision"),
    // Access tokens: JWTs signed with the hub's Ed25519 key (jwt-kit), everything else refused.
    argus.adapter("ArgusTokens", [jwtKit]),
    // The mobile API's types, server protocol and client, generated from docs/api/mobile-api.yaml at build time.
    .target(
        name: "ArgusAPI", dependencies: [openAPIRuntime], path: "Sources/Argus/Adapters/ArgusAPI",
        exclude: ["README.md"], swiftSettings: swiftSettings,
        plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
    ),
    // JPEGs made to fit a byte limit (thumbnails ≤ 50 KB, snapshots ≤ 100 KB) down a ladder of sizes (GStreamer).
    argus.adapter("ArgusPictures", ["GStreamer"]),
    // Push notifications through APNs: HTTP/2 (async-http-client), ES256 provider tokens (jwt-kit).
    argus.adapter("ArgusPush", [asyncHTTPClient, jwtKit, logging, nioCore, nioHTTP1, nioSSL]),
    // An app's HTTP transport to one hub: its self-signed certificate pinned by fingerprint (AsyncHTTPClient).
    argus.adapter(
        "ArgusClientTransport", ["DeviceIdentity", asyncHTTPClient, nioCore, nioPosix, nioSSL, openAPIAsyncHTTPClient]),
    // The hub's SQLite database (GRDB): devices, refresh tokens, pairing codes, cameras, events and thumbnails.
    argus.adapter("ArgusStore", ["ArgusAuth", "SQLiteFiles", grdb]),
    // CribCall monitors as cameras: the hub is a CribCall listener (Argus builds on CribCall's services).
    argus.service(
        "ArgusCribCall",
        [
            "CribCallListener", "CribCallProtocol", "CribCallRuntime", "CribCallStore", "DeviceIdentity",
            "DeviceIdentityStore", "Media",
            "QUIC",
            "SafetyDetection",
            logging,
        ]),
    // The hub: the generated API served by Hummingbird over the store, the tokens and the cameras.
    argus.service(
        "ArgusHub",
        [
            "ArgusAPI", "ArgusAuth", "ArgusCribCall", "ArgusPictures", "ArgusPush", "ArgusStore", "ArgusTokens",
            "CribCallRuntime",
            "ArgusVision", "DeviceIdentity",
            "DeviceIdentityStore", "ConnectionGuard", "LocalWebApp", "QRCode", "ServiceDiscovery", "VideoCapture",
            crypto, hummingbird,
            hummingbirdCore,
            hummingbirdTLS, jwtKit,
            logging,
            nioSSL, openAPIHummingbird, openAPIRuntime, prometheus, serviceLifecycle,
        ],
        resources: [.copy("Public")]),
    // An app's side of the mobile API (pairing, tokens refreshed and rotated, retries) over the generated client.
    argus.service("ArgusClient", ["ArgusAPI", "ArgusAuth", "ArgusClientTransport", openAPIRuntime, httpTypes]),
    argus.executable("argus-hub", ["ArgusHub", argumentParser]),
    argus.executable("argus", ["ArgusClient", argumentParser]),
]
let argusTests: [Target] = [
    argus.testSupport(["ArgusHub", "ArgusPush", "ArgusTokens", "TestSupport", hummingbird, jwtKit, logging]),
    argus.tests(.core, "ArgusAuth"),
    argus.tests(.core, "ArgusVision"),
    argus.tests(.adapters, "ArgusTokens", ["ArgusAuth", crypto, jwtKit]),
    argus.tests(.adapters, "ArgusStore", ["ArgusAuth"]),
    argus.tests(.adapters, "ArgusPictures"),
    argus.tests(.adapters, "ArgusPush", [logging]),
    argus.tests(
        .services, "ArgusHub",
        [
            "ArgusAuth", "ArgusPush", "ArgusStore", "ArgusTokens", "ConnectionGuard", "VideoCapture", crypto, jwtKit,
            nioCore,
        ]),
    argus.tests(.services, "ArgusClient", ["ArgusAPI", "ArgusClientTransport", "ArgusHub"]),
    argus.tests(.services, "ArgusCribCall", ["CribCallListener", "CribCallProtocol", logging]),
    argus.tests(.executables, named: "ArgusCLITests", ["argus-hub", "argus", "cribcall"]),
]

// MARK: - Tools: benchmarks, interop probes, fuzzing

let tools: [Target] = [
    tool("BenchmarkSupport", library: true),
    tool("FuzzHarness", ["CanonicalJSON", "CribCallProtocol", "ToukanCore", nioCore], library: true),
    tool("fuzz-parsers", ["FuzzHarness", "CLibFuzzer"]),
    tool("toukan-record-probe", ["ToukanRecorder", "ToukanCore", "AudioCapture"]),
    tool("mdns-probe", ["ServiceDiscovery", "CribCallDiscovery", "CribCallProtocol"]),
    tool(
        "quic-probe",
        ["QUIC", "CribCallControl", "ControlTransport", "CribCallProtocol", "DeviceIdentity", "DeviceIdentityStore"]
    ),
    tool("network-watch-probe", ["NetworkWatch"]),
    tool("upload-loop-probe", ["NetworkWatch", "ToukanStore", "ToukanUploader", "ToukanUploads", logging]),
    tool("sound-detection-benchmark", ["SoundDetection"]),
    tool(
        "quic-benchmark",
        ["BenchmarkSupport", "QUIC", "CribCallControl", "ControlTransport", "CribCallProtocol", "DeviceIdentity"]
    ),
    tool(
        "alert-benchmark",
        [
            "AudioCapture", "BenchmarkSupport", "ControlTransport", "CribCallListener", "CribCallMonitor",
            "CribCallProtocol", "CribCallStore", "DeviceIdentity", "QUIC", "SoundDetection",
        ]
    ),
    tool(
        "stream-benchmark",
        [
            "AudioCapture", "BenchmarkSupport", "CribCallListener", "CribCallMonitor", "CribCallProtocol",
            "CribCallStore",
            "DeviceIdentity", "Media", "QUIC", "SoundDetection", "StreamMedia",
        ]
    ),
    tool("bemyears-benchmark", ["BenchmarkSupport", nioCore, nioPosix]),
    tool("toukan-benchmark", ["BenchmarkSupport", "ToukanCore", "ToukanUploader", nioCore, nioPosix]),
    tool(
        "argus-benchmark",
        [
            "ArgusClientTransport", "ArgusStore", "BenchmarkSupport", asyncHTTPClient, nioCore, nioHTTP1,
            .product(name: "NIOFoundationCompat", package: "swift-nio"),
        ]),
    tool(
        "safety-benchmark",
        [
            "AudioCapture", "BenchmarkSupport", "CribCallListener", "CribCallMonitor", "CribCallProtocol",
            "CribCallStore", "DeviceIdentity", "QUIC", "SafetyDetection", "SoundDetection", "VideoCapture",
        ]
    ),
]

// MARK: - The package

let targets =
    platformTargets + cribCallTargets + beMyEarsTargets + toukanTargets + argusTargets + tools + platformTests
    + cribCallTests + beMyEarsTests + toukanTests + argusTests

/// Every core module is a library an Apple app can use; the executables and benchmarks are the runnable products.
let coreLibraries: [Product] = targets.filter { $0.path?.contains("/Core/") == true && $0.type == .regular }
    .map { .library(name: $0.name, targets: [$0.name]) }
let runnable =
    [
        "cribcall", "bemyears-server", "sound-detection-benchmark", "quic-benchmark", "alert-benchmark",
        "stream-benchmark",
        "bemyears-benchmark", "toukan", "toukan-server", "toukan-benchmark", "safety-benchmark", "argus-hub", "argus",
        "argus-benchmark",
    ]

let package = Package(
    name: "HomeApps",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: runnable.map { .executable(name: $0, targets: [$0]) } + coreLibraries,
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: targets
)
