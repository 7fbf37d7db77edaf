// swift-tools-version:6.2
import PackageDescription

// libFuzzer targets for every decoder of the Showroom wire contract, each driving the pure state
// machine that consumes what it decodes. Built and run by fuzz.sh, which passes
// `-sanitize=fuzzer` on the command line so that the Showroom modules (not just the fuzz
// targets) carry the coverage instrumentation libFuzzer steers by. Kept out of the root package so
// that its ordinary builds and tests never see the fuzzer flags.

/// A fuzz target is one file with `@main` (which hands libFuzzer its `LLVMFuzzerTestOneInput`),
/// so it is parsed as a library.
let fuzzTargetSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: "fuzz-\(name)",
        dependencies: ["FuzzSupport", "FuzzDriver"] + products.map { .product(name: $0, package: "Showroom") }
            + [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
        swiftSettings: fuzzTargetSettings
    )
}

let package = Package(
    name: "ShowroomFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Showroom", path: "../.."),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
    ],
    targets: [
        // Splitting one fuzz input into several frames, a deterministic random source, checks.
        .target(name: "FuzzSupport"),
        // Starts libFuzzer from a target's own `main` (only fuzz targets link it: it needs their
        // LLVMFuzzerTestOneInput).
        .target(name: "FuzzDriver", dependencies: ["CFuzzerDriver"]),
        // Declares libFuzzer's driver entry point.
        .target(name: "CFuzzerDriver"),
        fuzzTarget("envelope", ["ShowroomWire", "Membership", "Edge"]),
        fuzzTarget("gossip", ["ShowroomWire", "Membership"]),
        fuzzTarget("edge-session", ["ShowroomWire", "Edge"]),
        fuzzTarget("room-requests", ["ShowroomWire", "Rooms", "Routing"]),
        fuzzTarget("state-batch", ["ShowroomWire", "Rooms", "Routing"]),
        // Writes the seed corpus (Corpus/<target>/) from messages built with the project's encoders.
        .executableTarget(
            name: "make-fuzz-corpus",
            dependencies: [
                "FuzzSupport",
                .product(name: "ShowroomWire", package: "Showroom"),
                .product(name: "Membership", package: "Showroom"),
                .product(name: "Edge", package: "Showroom"),
                .product(name: "Rooms", package: "Showroom"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
    ]
)
