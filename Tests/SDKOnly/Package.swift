// swift-tools-version:6.2
import PackageDescription

// An app that depends on ShowroomKit and nothing else, built by Tests/sdk-isolation.sh to prove
// that the client SDK links no server module. Kept out of the root package so that its build graph
// is the SDK's alone.
let package = Package(
    name: "SDKOnly",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(name: "Showroom", path: "../..")],
    targets: [
        .executableTarget(name: "sdk-only-app", dependencies: [.product(name: "ShowroomKit", package: "Showroom")]),
    ]
)
