// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Showroom",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "ShowroomWire", targets: ["ShowroomWire"]),
        .library(name: "MediaCodecs", targets: ["MediaCodecs"]),
        .library(name: "ShowroomAuth", targets: ["ShowroomAuth"]),
        .library(name: "ShowroomKit", targets: ["ShowroomKit"]),
        .library(name: "Membership", targets: ["Membership"]),
        .library(name: "EdgeProtocol", targets: ["EdgeProtocol"]),
        .library(name: "Edge", targets: ["Edge"]),
        .library(name: "Rooms", targets: ["Rooms"]),
        .library(name: "Routing", targets: ["Routing"]),
        .library(name: "Calls", targets: ["Calls"]),
        .executable(name: "showroom-edge", targets: ["showroom-edge"]),
        .executable(name: "showroom-coordinator", targets: ["showroom-coordinator"]),
        .executable(name: "showroom-callsignal", targets: ["showroom-callsignal"]),
        .executable(name: "showroomctl", targets: ["showroomctl"]),
        .executable(name: "showroom-bench", targets: ["showroom-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // System libraries (Debian: libzmq3-dev, libopus-dev, libvpx-dev, libavformat-dev).
        .systemLibrary(name: "CZeroMQ", pkgConfig: "libzmq", providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"]), .brew(["opus"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"]), .brew(["libvpx"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // FFmpeg's muxers (libavformat, with libavcodec and libavutil) for recordings.
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev"]), .brew(["ffmpeg"])]),
        // glibc's malloc controls (malloc_trim), part of libc itself.
        .systemLibrary(name: "CMalloc"),

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
        // Who owns a key: node roles, the alive members of a role and the owner and successor of a
        // key among them (rendezvous hashing). Shared by the servers and the client SDK. Pure: no I/O.
        .target(name: "Ownership", dependencies: ["ShowroomWire"]),
        // Where channels go: placement on edges and relays, for the servers (re-exports Ownership).
        // Pure: no I/O.
        .target(name: "Routing", dependencies: ["Ownership", "ShowroomWire"]),
        // Replicated ownership: keyed state held by each key's owner and successor among the alive
        // members of a role, with hand-over and catch-up, as pure value types.
        .target(name: "ReplicatedOwnership", dependencies: ["Routing"]),
        // CallAPI's vocabulary (a side's states, reasons and events, by number) and the client's
        // stale-notice filter: what the SDK's call client and the call-signal role share.
        .target(name: "CallAPI"),
        // 1v1 calls as the call-signal role holds them: the book of calls as a pure state machine
        // (re-exports CallAPI).
        .target(name: "Calls", dependencies: ["CallAPI", "ReplicatedOwnership"]),
        // AccessToken2 ("007...") tokens: build, parse, verify; compatible with Agora's token builders.
        .target(
            name: "ShowroomAuth",
            dependencies: ["CZlib", "ShowroomWire", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Cluster membership: SWIM with the Lifeguard refinements, as a pure state machine.
        .target(
            name: "Membership",
            dependencies: ["ShowroomWire", .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // What clients and edges say to each other: requests, replies, events, tracks, roles, media
        // options, and their wire codec. Shared by the edge and the client SDK.
        .target(
            name: "EdgeProtocol",
            dependencies: ["ShowroomWire", .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // The edge's channel plane as a pure state machine: sessions, channels, roles, grants,
        // forwarding decisions with GOP caches, volume indication.
        .target(
            name: "Edge",
            dependencies: ["EdgeProtocol", "ShowroomWire", .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // Opus and VP8 encode/decode and the synthetic media sources.
        .target(name: "MediaCodecs", dependencies: ["COpus", "CVPX"]),
        // Recordings: VP8 and Opus frames into WebM files as they were sent (no transcoding), on one
        // timeline, readable up to the last cluster after a crash; when a recording cuts its segments.
        .target(
            name: "Recording",
            dependencies: ["CAVFormat", "ShowroomWire", .product(name: "Logging", package: "swift-log")]
        ),
        // The client SDK: channel connections on the cluster's edges, local media capture and
        // encoding, remote media sinks, events.
        .target(
            name: "ShowroomKit",
            dependencies: [
                "ZeroMQ", "ShowroomWire", "EdgeProtocol", "MediaCodecs", "Ownership", "CallAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            // Its dependencies stay out of its public API unless a file imports one publicly.
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        // The admin HTTP port: Prometheus metrics, health and status for the server processes.
        .target(
            name: "AdminEndpoint",
            dependencies: [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the three server processes share: configuration, logging, the node loop, shutdown.
        .target(
            name: "NodeRuntime",
            dependencies: [
                "ZeroMQ", "ShowroomWire", "Membership", "AdminEndpoint", "Routing", "CMalloc",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),

        // The edge process's client side: the client ROUTER around the channel plane, token checks,
        // fan-out by reference.
        .target(
            name: "EdgeServer",
            dependencies: [
                "Edge", "ShowroomAuth", "ShowroomWire", "ZeroMQ", "NodeRuntime", "Membership", "Routing", "AdminEndpoint",
                "Recording",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        .executableTarget(name: "showroom-edge", dependencies: ["NodeRuntime", "EdgeServer", "ShowroomWire"]),
        // The room registry, channel event numbering and bans as pure state machines, and the records a
        // coordinator replicates (rooms with chat, event numbers, placements, bans).
        .target(
            name: "Rooms",
            dependencies: ["ShowroomWire", "Routing", "ReplicatedOwnership", .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // Where a coordinator keeps its rooms, chat, bans and placements: an embedded SQLite database.
        .target(
            name: "RoomStore",
            dependencies: ["Rooms", "ReplicatedOwnership", "ShowroomWire", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // Channel events for business servers: HTTP webhooks, signed, retried, in order per channel.
        .target(
            name: "Webhooks",
            dependencies: [
                "ShowroomWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The room-coordinator process's service: room requests (forwarded to their owner),
        // replication, channel placement, edge reports, events, kick and ban.
        .target(
            name: "Coordinator",
            dependencies: [
                "NodeRuntime", "Rooms", "RoomStore", "Webhooks", "ShowroomAuth", "ShowroomWire", "ZeroMQ", "Membership",
                "Routing", "ReplicatedOwnership", "ServerAPI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(name: "showroom-coordinator", dependencies: ["NodeRuntime", "Coordinator"]),
        // The server API for business servers: HTTP and JSON on every coordinator, generated from
        // proto/api/openapi.yaml (proto/generate-api.sh), answered through the coordinator's own
        // request handling.
        .target(
            name: "ServerAPI",
            dependencies: [
                "NodeRuntime", "AdminEndpoint", "ShowroomAuth", "ShowroomWire", "Rooms", "Ownership", "OperatorTools", "Webhooks",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["Generated/README.md"]
        ),
        // The call-signal process's shell: signaling sessions, calls and the routing between nodes.
        .target(
            name: "CallSignal",
            dependencies: [
                "NodeRuntime", "Calls", "ShowroomAuth", "ShowroomWire", "Routing", "Membership", "ReplicatedOwnership",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .executableTarget(name: "showroom-callsignal", dependencies: ["NodeRuntime", "CallSignal"]),
        // What the operator's tools share: app credentials from flags, environment or a run
        // directory, the operator's cluster keys, blocking work off the cooperative pool.
        .target(
            name: "OperatorTools",
            dependencies: [
                "NodeRuntime", "ShowroomAuth", "ShowroomWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "showroomctl",
            dependencies: [
                "NodeRuntime", "ZeroMQ", "ShowroomWire", "MediaCodecs", "CZeroMQ", "ShowroomAuth",
                "ShowroomKit", "Edge", "AdminEndpoint", "Webhooks", "Rooms", "Routing", "OperatorTools",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // The benchmarks: they start engines, fan-outs and clusters, and print their figures.
        .executableTarget(
            name: "showroom-bench",
            dependencies: [
                "ShowroomTesting", "NodeRuntime", "ZeroMQ", "CZeroMQ", "ShowroomWire", "MediaCodecs", "ShowroomAuth",
                "ShowroomKit", "Edge", "AdminEndpoint", "Routing", "OperatorTools", "Membership", "ClusterSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // The whole cluster in one process, deterministic for a seed: coordinators, call-signal
        // nodes, edges and SDK engines on a simulated network and clock, faults drawn from the
        // seed, the event log's digest, and the checks after every fault healed.
        .target(
            name: "ClusterSimulation",
            dependencies: [
                "NodeRuntime", "Coordinator", "CallSignal", "Calls", "CallAPI", "Rooms", "RoomStore", "Routing", "ShowroomWire", "Membership",
                "EdgeServer", "Edge", "EdgeProtocol", "ShowroomKit", "ShowroomAuth", "Ownership",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The test kit, for tests and the benchmarks only: real processes and clusters started and
        // stopped by pid with their logs captured (printed when a test fails), the test app and its
        // tokens, waits with deadlines, bare edge clients, a webhook receiver.
        .target(
            name: "ShowroomTesting",
            dependencies: [
                "NodeRuntime", "ZeroMQ", "ShowroomWire", "Edge", "Webhooks", "ShowroomKit", "Routing", "ShowroomAuth",
                "Membership", "OperatorTools",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "CZeroMQ"]),
        .testTarget(name: "MediaCodecsTests", dependencies: ["MediaCodecs"]),
        // WebM files checked with ffprobe and ffmpeg (Debian ffmpeg); the segment policy with plain values.
        .testTarget(name: "RecordingTests", dependencies: [
            "Recording", "MediaCodecs", "ShowroomWire", "ShowroomKit", "ShowroomTesting", "ShowroomAuth", "ServerAPI", "Ownership",
        ]),
        .testTarget(name: "ShowroomAuthTests", dependencies: ["ShowroomAuth", "ShowroomWire"]),
        .testTarget(
            name: "MembershipTests",
            dependencies: ["Membership", "ShowroomWire", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "EdgeProtocolTests", dependencies: ["EdgeProtocol", "ShowroomWire"]),
        .testTarget(name: "EdgeTests", dependencies: ["Edge", "ShowroomWire"]),
        .testTarget(
            name: "EdgeServerTests",
            dependencies: [
                "EdgeServer", "Edge", "ShowroomWire", "ShowroomAuth", "ZeroMQ", "ShowroomTesting", "NodeRuntime",
                "Membership", "Routing", "Recording",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "AdminEndpointTests",
            dependencies: [
                "AdminEndpoint",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ShowroomKitTests",
            dependencies: [
                "ShowroomKit", "EdgeServer", "Edge", "EdgeProtocol", "ShowroomWire", "ShowroomAuth", "MediaCodecs", "ZeroMQ", "Routing",
                "ShowroomTesting",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ShowLiveTests",
            dependencies: [
                "ShowroomKit", "ShowroomTesting", "Edge", "ShowroomAuth", "ShowroomWire", "MediaCodecs", "ZeroMQ",
            ]
        ),
        .testTarget(name: "RoomsTests", dependencies: ["Rooms", "RoomStore", "ShowroomWire", "ShowroomAuth", "Routing", "ShowroomTesting"]),
        .testTarget(name: "CallsTests", dependencies: ["Calls", "ReplicatedOwnership", "Membership"]),
        // The call-signal shell on an in-process network with a clock moved by hand.
        .testTarget(
            name: "CallSignalTests",
            dependencies: [
                "CallSignal", "Calls", "NodeRuntime", "ShowroomTesting", "ShowroomWire", "ShowroomAuth", "Routing",
                "ReplicatedOwnership", "Membership",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .testTarget(name: "OwnershipTests", dependencies: ["Ownership", "ShowroomWire"]),
        .testTarget(name: "RoutingTests", dependencies: ["Routing", "ShowroomWire", "ShowroomTesting"]),
        .testTarget(name: "ReplicatedOwnershipTests", dependencies: ["ReplicatedOwnership", "Routing"]),
        .testTarget(
            name: "WebhooksTests",
            dependencies: [
                "Webhooks", "ShowroomWire", "ShowroomTesting",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CoordinatorTests",
            dependencies: [
                "ShowroomKit", "ShowroomTesting", "Edge", "ShowroomAuth", "ShowroomWire", "MediaCodecs", "ZeroMQ", "NodeRuntime",
                "Webhooks", "Routing", "ServerAPI",
            ]
        ),
        // The coordinator's request handling on an in-process network with a clock moved by hand.
        .testTarget(
            name: "CoordinatorShellTests",
            dependencies: [
                "Coordinator", "NodeRuntime", "Rooms", "RoomStore", "Routing", "ShowroomTesting", "ShowroomWire",
                "ShowroomAuth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // Show → 1v1 on real processes with real media, through the SDK's CallClient.
        .testTarget(name: "CallTests", dependencies: ["ShowroomKit", "ShowroomTesting", "ShowroomAuth", "ShowroomWire", "Routing", "ServerAPI"]),
        // The deterministic simulation: generator, scheduler, network faults, same seed same digest.
        .testTarget(name: "ClusterSimulationTests", dependencies: ["ClusterSimulation", "ShowroomWire", "Calls", "Routing"]),
        .testTarget(name: "ClusterTests", dependencies: ["ShowroomTesting", "NodeRuntime", "ShowroomWire"]),
        .testTarget(name: "ShowroomWireTests", dependencies: ["ShowroomWire"]),
        // The server API: customer keys and request rates as plain values; every operation over
        // real HTTP against a real cluster.
        .testTarget(
            name: "ServerAPITests",
            dependencies: ["ServerAPI", "ShowroomTesting", "ShowroomKit", "ShowroomAuth", "ShowroomWire", "NodeRuntime"]
        ),
        .testTarget(
            name: "NodeRuntimeTests",
            dependencies: [
                "NodeRuntime", "ZeroMQ", "ShowroomWire", "ShowroomTesting", "Membership", "Routing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
    ]
)
