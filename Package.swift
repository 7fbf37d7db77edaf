// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Showroom",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "ShowroomWire", targets: ["ShowroomWire"]),
        .library(name: "MediaCodecs", targets: ["MediaCodecs"]),
        .executable(name: "showroom-edge", targets: ["showroom-edge"]),
        .executable(name: "showroom-coordinator", targets: ["showroom-coordinator"]),
        .executable(name: "showroom-callsignal", targets: ["showroom-callsignal"]),
        .executable(name: "showroomctl", targets: ["showroomctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // System libraries (Debian: libzmq3-dev, libopus-dev, libvpx-dev).
        .systemLibrary(name: "CZeroMQ", pkgConfig: "libzmq", providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"]), .brew(["opus"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"]), .brew(["libvpx"])]),

        // The thin Swift wrapper over libzmq: sockets, messages, the event loop.
        .target(
            name: "ZeroMQ",
            dependencies: [
                "CZeroMQ",
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        // The wire contract: generated protobuf code plus the error type that travels on it.
        .target(
            name: "ShowroomWire",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            exclude: ["Generated/README.md"]
        ),
        // Opus and VP8 encode/decode and the synthetic media sources.
        .target(name: "MediaCodecs", dependencies: ["COpus", "CVPX"]),
        // What the three server processes share: configuration, logging, the node loop, shutdown.
        .target(
            name: "NodeRuntime",
            dependencies: [
                "ZeroMQ", "ShowroomWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        .executableTarget(name: "showroom-edge", dependencies: ["NodeRuntime"]),
        .executableTarget(name: "showroom-coordinator", dependencies: ["NodeRuntime"]),
        .executableTarget(name: "showroom-callsignal", dependencies: ["NodeRuntime"]),
        .executableTarget(
            name: "showroomctl",
            dependencies: [
                "NodeRuntime", "ZeroMQ", "ShowroomWire", "MediaCodecs", "CZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // What multi-process tests share: starting real processes and waiting for their events.
        .target(name: "ShowroomTestKit", dependencies: ["NodeRuntime", "ZeroMQ", "ShowroomWire"], path: "Tests/ShowroomTestKit"),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "CZeroMQ"]),
        .testTarget(name: "MediaCodecsTests", dependencies: ["MediaCodecs"]),
        .testTarget(name: "ShowroomWireTests", dependencies: ["ShowroomWire"]),
        .testTarget(name: "NodeRuntimeTests", dependencies: ["NodeRuntime", "ZeroMQ", "ShowroomWire", "ShowroomTestKit"]),
    ]
)
