// swift-tools-version:6.1
//
// One package, several products, one shared platform: see ../shared/design/ARCHITECTURE.md.
// Layers (imports only point downward):
//   executables  -> services -> adapters -> core -> C bindings
// Every core module builds on Linux and Apple platforms and does no I/O.

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

let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")

let package = Package(
    name: "HomeApps",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "cribcall", targets: ["cribcall"]),
        .executable(name: "sound-detection-benchmark", targets: ["sound-detection-benchmark"]),
        .executable(name: "quic-benchmark", targets: ["quic-benchmark"]),
        .executable(name: "alert-benchmark", targets: ["alert-benchmark"]),
        .executable(name: "stream-benchmark", targets: ["stream-benchmark"]),
        .executable(name: "bemyears-server", targets: ["bemyears-server"]),
        .executable(name: "bemyears-benchmark", targets: ["bemyears-benchmark"]),
        .library(name: "CanonicalJSON", targets: ["CanonicalJSON"]),
        .library(name: "CPace", targets: ["CPace"]),
        .library(name: "DeviceIdentity", targets: ["DeviceIdentity"]),
        .library(name: "CribCallProtocol", targets: ["CribCallProtocol"]),
        .library(name: "SoundDetection", targets: ["SoundDetection"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // MARK: core (pure: no sockets, files, clocks or threads)
        .target(name: "CanonicalJSON", exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(name: "CPace", dependencies: [crypto], exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(
            name: "DeviceIdentity",
            dependencies: [
                crypto,
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CribCallProtocol",
            dependencies: ["CanonicalJSON", "CPace", "DeviceIdentity", crypto, nioCore],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(name: "SoundDetection", exclude: ["README.md"], swiftSettings: swiftSettings),
        // BeMyEars: the signaling logic of BEMYEARS-PROTOCOL.md, over a store protocol (in memory or PostgreSQL).
        .target(name: "BeMyEarsCore", exclude: ["README.md"], swiftSettings: swiftSettings),

        // MARK: adapters
        .target(
            name: "AudioCapture",
            dependencies: ["CGStreamer", "SoundDetection"],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(name: "DesktopNotifications", dependencies: ["CDBus"], exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(name: "SystemdUnit", exclude: ["README.md"], swiftSettings: swiftSettings),
        // The media side of live streams as the services see it (implemented by Media; in-memory twin inside).
        .target(name: "StreamMedia", dependencies: ["CribCallProtocol"], swiftSettings: swiftSettings),
        .target(
            name: "Media",
            dependencies: ["CGStreamer", "StreamMedia", "CribCallProtocol", "DeviceIdentity", "AudioCapture", "SoundDetection"],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(name: "QRCode", dependencies: ["CQREncode"], exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(name: "ServiceDiscovery", dependencies: ["CDNSSD"], exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(
            name: "CribCallStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"), "DeviceIdentity", "CribCallProtocol", "SoundDetection",
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ControlTransport",
            dependencies: ["CribCallProtocol", "DeviceIdentity", nioCore],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "DeviceIdentityStore",
            dependencies: ["DeviceIdentity", .product(name: "SwiftASN1", package: "swift-asn1")],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "QUIC",
            dependencies: [
                "CNGTCP2", "ControlTransport", "CribCallProtocol", "DeviceIdentity", crypto, nioCore,
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // MARK: services
        .target(
            name: "CribCallControl",
            dependencies: ["ControlTransport", "CribCallProtocol", "DeviceIdentity", nioCore],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "CribCallMonitor",
            dependencies: [
                "AudioCapture", "CanonicalJSON", "ControlTransport", "CribCallControl", "CribCallProtocol",
                "CribCallStore", "DeviceIdentity", "ServiceDiscovery", "SoundDetection", "StreamMedia",
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "CribCallListener",
            dependencies: [
                "ControlTransport", "CribCallProtocol", "CribCallStore", "DesktopNotifications", "DeviceIdentity",
                "ServiceDiscovery", "StreamMedia",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: executables (argument parsing only)
        .executableTarget(
            name: "cribcall",
            dependencies: [
                "CanonicalJSON", "CribCallListener", "CribCallMonitor", "CribCallProtocol", "CribCallStore",
                "DeviceIdentity", "DeviceIdentityStore", "QRCode", "QUIC", "ServiceDiscovery", "SoundDetection",
                "AudioCapture", "DesktopNotifications", "Media", "StreamMedia", "SystemdUnit", argumentParser,
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fuzz-control-channel",
            dependencies: ["FuzzHarness", "CLibFuzzer"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "mdns-probe", dependencies: ["ServiceDiscovery"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "quic-probe",
            dependencies: [
                "QUIC", "CribCallControl", "ControlTransport", "CribCallProtocol", "DeviceIdentity", "DeviceIdentityStore",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "alert-benchmark",
            dependencies: [
                "AudioCapture", "BenchmarkSupport", "ControlTransport", "CribCallListener", "CribCallMonitor", "CribCallProtocol", "CribCallStore",
                "DeviceIdentity", "QUIC", "SoundDetection",
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "BenchmarkSupport", path: "Sources/BenchmarkSupport", swiftSettings: swiftSettings),
        .executableTarget(
            name: "stream-benchmark",
            dependencies: [
                "AudioCapture", "BenchmarkSupport", "CribCallListener", "CribCallMonitor", "CribCallProtocol", "CribCallStore",
                "DeviceIdentity", "Media", "QUIC", "SoundDetection", "StreamMedia",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "quic-benchmark",
            dependencies: ["BenchmarkSupport", "QUIC", "CribCallControl", "ControlTransport", "CribCallProtocol", "DeviceIdentity"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "sound-detection-benchmark",
            dependencies: ["SoundDetection"],
            swiftSettings: swiftSettings
        ),

        // MARK: C bindings
        .systemLibrary(
            name: "CGStreamer",
            path: "Sources/CGStreamer",
            pkgConfig: "gstreamer-app-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(name: "CDBus", path: "Sources/CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        .systemLibrary(
            name: "CQREncode",
            path: "Sources/CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(
            name: "CDNSSD",
            path: "Sources/CDNSSD",
            pkgConfig: "avahi-compat-libdns_sd",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        .systemLibrary(
            name: "CNGTCP2",
            path: "Sources/CNGTCP2",
            pkgConfig: "libngtcp2_crypto_gnutls",
            providers: [.apt(["libngtcp2-dev", "libngtcp2-crypto-gnutls-dev", "libgnutls28-dev"])]
        ),

        // MARK: tests
        .target(
            name: "FuzzHarness",
            dependencies: ["CanonicalJSON", "CribCallProtocol", nioCore],
            path: "Tests/FuzzHarness",
            swiftSettings: swiftSettings
        ),
        .target(name: "TestSupport", dependencies: ["CanonicalJSON"], path: "Tests/TestSupport", swiftSettings: swiftSettings),
        // MARK: BeMyEars (adapters, service, executable)
        .target(
            name: "BeMyEarsPostgres",
            dependencies: ["BeMyEarsCore", .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "Logging", package: "swift-log")],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BeMyEarsServer",
            dependencies: [
                "BeMyEarsCore", "BeMyEarsPostgres", "ServiceDiscovery", crypto, nioCore,
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"],
            resources: [.copy("Public")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "bemyears-benchmark",
            dependencies: [
                "BenchmarkSupport", .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "bemyears-server",
            dependencies: ["BeMyEarsServer", "BeMyEarsPostgres", "BeMyEarsCore", argumentParser],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "CanonicalJSONTests",
            dependencies: ["CanonicalJSON", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CPaceTests", dependencies: ["CPace", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "DeviceIdentityTests",
            dependencies: ["DeviceIdentity", "DeviceIdentityStore", "TestSupport", crypto,
                           .product(name: "X509", package: "swift-certificates")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallProtocolTests",
            dependencies: [
                "CribCallProtocol", "CanonicalJSON", "CPace", "DeviceIdentity", "FuzzHarness", "TestSupport", nioCore,
                crypto,
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallCLITests",
            dependencies: [
                "cribcall", "CanonicalJSON", "CribCallProtocol", "CribCallStore", "DeviceIdentity", "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ArchitectureTests", dependencies: ["TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ControlTransportTests",
            dependencies: ["ControlTransport", "CribCallProtocol", "DeviceIdentity", "TestSupport", nioCore],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallControlTests",
            dependencies: ["CribCallControl", "ControlTransport", "CribCallProtocol", "DeviceIdentity", "TestSupport", nioCore],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QUICTests",
            dependencies: ["QUIC", "quic-probe", "CribCallControl", "DeviceIdentityStore", "ControlTransport", "CribCallProtocol", "DeviceIdentity", "TestSupport", nioCore],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallStoreTests",
            dependencies: ["CribCallStore", "TestSupport", "DeviceIdentity", "CribCallProtocol", "SoundDetection"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallMonitorTests",
            dependencies: [
                "AudioCapture", "CribCallMonitor", "ServiceDiscovery", "StreamMedia", "ControlTransport", "CribCallProtocol", "CribCallStore", "DeviceIdentity",
                "SoundDetection", "TestSupport", nioCore,
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallListenerTests",
            dependencies: [
                "CribCallListener", "DesktopNotifications", "StreamMedia", "CribCallMonitor", "ControlTransport", "CribCallProtocol", "CribCallStore",
                "DeviceIdentity", "ServiceDiscovery", "SoundDetection", "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ServiceDiscoveryTests",
            dependencies: ["ServiceDiscovery", "mdns-probe", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CribCallEndToEndTests",
            dependencies: ["cribcall", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AudioCaptureTests",
            dependencies: ["AudioCapture", "CGStreamer", "SoundDetection", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DesktopNotificationsTests",
            dependencies: ["DesktopNotifications", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MediaTests",
            dependencies: [
                "Media", "CGStreamer", "StreamMedia", "CribCallProtocol", "DeviceIdentity", "AudioCapture",
                "SoundDetection", "TestSupport", "CribCallMonitor", "CribCallListener", "CribCallStore", "QUIC",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SystemdUnitTests", dependencies: ["SystemdUnit", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "SoundDetectionTests", dependencies: ["SoundDetection", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "BeMyEarsCoreTests", dependencies: ["BeMyEarsCore"], swiftSettings: swiftSettings),
        .testTarget(name: "BeMyEarsPostgresTests", dependencies: ["BeMyEarsPostgres", "BeMyEarsCore", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "BeMyEarsServerTests",
            dependencies: [
                "BeMyEarsServer", "BeMyEarsCore", "BeMyEarsPostgres", "TestSupport", "bemyears-server",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
