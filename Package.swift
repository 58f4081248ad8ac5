// swift-tools-version:6.0
// bedrud-bot: a headless meeting bot and recorder for Bedrud (LiveKit inside).
//
// Layers, lowest first. A target imports only targets listed above it here.
//   C shims           system libraries from Debian, one module.modulemap + shim.h each
//   BedrudProtocol    pure values and codecs: protobuf, LiveKit messages, JWT, links, config syntax
//   BedrudRuntime     what runs and waits: threads, locks, the monotonic clock, WakeSignal, the packet
//                     ring between threads, the process's logging
//   BedrudNet         TCP, TLS (OpenSSL), HTTP/1.1 client, WebSocket client, HMAC-SHA256
//   BedrudListener    serve's one listening port (libmicrohttpd); its own target, so that no other
//                     module's compile sees libmicrohttpd's copy of the socket headers
//   BedrudRTC         SDP, ICE (libnice), DTLS (OpenSSL), SRTP (libsrtp2), SCTP (usrsctp), RTP/RTCP
//   BedrudMedia       jitter buffer, Opus, Ogg, mixer, levels, media and writer threads
//   BedrudBench       the media and RTC benchmarks (`bedrud-bot bench`), kept out of the libraries
//   BedrudCore        the iOS app's Core/ made headless: API, Auth, LiveKit, Models
//   BedrudBot         the jobs: config model, CLI commands, recording session, transcript, smoke test
//   bedrud-bot        the executable: hands argv to BedrudBot and exits with its code
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

func shim(_ name: String, pkgConfig: String? = nil, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "bedrud-bot",
    products: [
        .executable(name: "bedrud-bot", targets: ["bedrud-bot"]),
    ],
    targets: [
        // MARK: - C libraries
        shim("COpus", pkgConfig: "opus", apt: "libopus-dev"),
        shim("COgg", pkgConfig: "ogg", apt: "libogg-dev"),
        shim("COpenSSL", pkgConfig: "openssl", apt: "libssl-dev"),
        shim("CSRTP", pkgConfig: "libsrtp2", apt: "libsrtp2-dev"),
        shim("CNice", pkgConfig: "nice", apt: "libnice-dev"),
        shim("CUsrsctp", pkgConfig: "usrsctp", apt: "libusrsctp-dev"),
        shim("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),

        // MARK: - Layers
        .target(name: "BedrudProtocol", swiftSettings: swiftSettings),
        .target(name: "BedrudRuntime", swiftSettings: swiftSettings),
        .target(name: "BedrudNet", dependencies: ["BedrudProtocol", "BedrudRuntime", "COpenSSL"], swiftSettings: swiftSettings),
        .target(name: "BedrudListener", dependencies: ["BedrudNet", "CMicroHTTPD"], swiftSettings: swiftSettings),
        .target(
            name: "BedrudRTC",
            dependencies: ["BedrudProtocol", "BedrudRuntime", "COpenSSL", "CSRTP", "CNice", "CUsrsctp"],
            swiftSettings: swiftSettings
        ),
        .target(name: "BedrudMedia", dependencies: ["BedrudProtocol", "BedrudRuntime", "COpus", "COgg"], swiftSettings: swiftSettings),
        .target(name: "BedrudBench", dependencies: ["BedrudProtocol", "BedrudRuntime", "BedrudRTC", "BedrudMedia", "COpus"], swiftSettings: swiftSettings),
        .target(
            name: "BedrudCore",
            dependencies: ["BedrudProtocol", "BedrudRuntime", "BedrudNet", "BedrudRTC"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BedrudBot",
            dependencies: ["BedrudProtocol", "BedrudRuntime", "BedrudNet", "BedrudListener", "BedrudRTC", "BedrudMedia", "BedrudBench", "BedrudCore"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "bedrud-bot", dependencies: ["BedrudBot"], swiftSettings: swiftSettings),

        // MARK: - Tests
        .target(
            name: "TestSupport",
            dependencies: ["BedrudProtocol", "BedrudRuntime", "BedrudNet", "BedrudCore"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BedrudProtocolTests",
            dependencies: ["BedrudProtocol", "TestSupport"],
            // LiveKit conformance fixtures written by scripts/livekit_fixtures.py.
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "BedrudRuntimeTests", dependencies: ["BedrudRuntime"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudNetTests", dependencies: ["BedrudNet", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudListenerTests", dependencies: ["BedrudListener"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudRTCTests", dependencies: ["BedrudRTC", "TestSupport", "COpus"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudMediaTests", dependencies: ["BedrudMedia", "BedrudBench", "TestSupport", "COpus", "COgg"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudBenchTests", dependencies: ["BedrudBench"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudCoreTests", dependencies: ["BedrudCore", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "BedrudBotTests", dependencies: ["BedrudBot", "BedrudBench", "TestSupport"], swiftSettings: swiftSettings),
    ]
)
