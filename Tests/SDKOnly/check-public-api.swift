// Checks the client SDK's public API as an app sees it: run by Tests/sdk-isolation.sh as
// `swift check-public-api.swift DIR`, where DIR holds the symbol graphs (public symbols only) of
// ShowroomKit and ShowroomWire. Prints every public declaration that names a type an app has no
// business with, and exits 1 if there is one.
//
// An app sees ShowroomKit's public declarations and the types it re-exports (ShowroomError with its
// Code). Those may name only types of ShowroomKit itself, CallAPI (CallAPI's numbers), MediaCodecs
// (the frames sinks and sources exchange), ShowroomError, and the standard library, concurrency and
// Foundation. Anything else is a leak: a generated wire type (`Wire…`, `Admin…`, `Signal…`, all
// in ShowroomWire), or a type of a module apps must not see (EdgeProtocol, ZeroMQ, Ownership, and
// every server module). ShowroomKit's internals are not public either (the list below).

import Foundation

let allowedModules: Set<String> = [
    "Swift", "_Concurrency", "Foundation", "FoundationEssentials", "Synchronization", "Dispatch",
    "ShowroomKit", "CallAPI", "MediaCodecs",
]
/// ShowroomKit's own types that are not for apps (the engine's machinery, placement, test sinks).
let internalNames: Set<String> = [
    "EngineShell", "EngineState", "EngineDirective", "AnchorBook", "SwipeWindow", "ChannelPlacement",
    "ClusterPlacement", "CoordinatorPlacement", "FixedEdgePlacement", "EdgeAddress", "MemberAddress",
    "PlacementCredentials", "ClusterDirectory", "MemberClient", "CountingVideoSink", "CountingAudioSink",
    "ClosureVideoSink", "EdgeSession", "EventHub", "LoopConfined", "RejoinBackoff",
]

/// The module a Swift USR (`s:11ShowroomKit4RoomV`, `s:SS`, `s:s6UInt32V`) belongs to.
func module(of usr: String) -> String {
    guard usr.hasPrefix("s:") else { return "C" }  // clang USRs: C declarations
    let rest = usr.dropFirst(2)
    if rest.hasPrefix("So") || rest.hasPrefix("SC") { return "C" }
    if rest.hasPrefix("Sc") { return "_Concurrency" }
    if rest.hasPrefix("S") || rest.hasPrefix("s") { return "Swift" }
    let digits = rest.prefix { $0.isNumber }
    guard let length = Int(digits) else { return "?" }
    return String(rest.dropFirst(digits.count).prefix(length))
}

func load(_ url: URL) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: try Data(contentsOf: url)) as? [String: Any] ?? [:]
}

let directory = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ".")
let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
var symbols: [[String: Any]] = []
var relationships: [[String: Any]] = []
var showroomErrorUSR: String?
// ShowroomKit's graphs: its own symbols, and its extensions of other modules' types.
for file in files where file.hasPrefix("ShowroomKit") && file.hasSuffix(".symbols.json") {
    let graph = try load(directory.appendingPathComponent(file))
    symbols += graph["symbols"] as? [[String: Any]] ?? []
    relationships += graph["relationships"] as? [[String: Any]] ?? []
}
// ShowroomError and everything in it, which ShowroomKit re-exports.
let wire = try load(directory.appendingPathComponent("ShowroomWire.symbols.json"))
for symbol in wire["symbols"] as? [[String: Any]] ?? [] {
    let path = symbol["pathComponents"] as? [String] ?? []
    guard path.first == "ShowroomError" else { continue }
    symbols.append(symbol)
    if path.count == 1 { showroomErrorUSR = (symbol["identifier"] as? [String: Any])?["precise"] as? String }
}
guard let showroomErrorUSR, symbols.count > 100 else {
    print("check-public-api: FAILED: no ShowroomError or too few ShowroomKit symbols in \(directory.path)")
    exit(1)
}
let publicUSRs = Set(symbols.compactMap { ($0["identifier"] as? [String: Any])?["precise"] as? String })

/// Why an app may not see the type `usr` spelled `spelling`, or nil if it may.
func leak(_ usr: String, _ spelling: String) -> String? {
    let owner = module(of: usr)
    if owner == "ShowroomWire" { return usr.hasPrefix(showroomErrorUSR) ? nil : "the wire type ShowroomWire.\(spelling)" }
    if owner == "ShowroomKit" && internalNames.contains(spelling) { return "ShowroomKit's internal \(spelling)" }
    if spelling.hasPrefix("Wire") { return "the wire type \(owner).\(spelling)" }
    return allowedModules.contains(owner) ? nil : "\(owner).\(spelling)"
}

/// Every type a symbol's declaration and signature name.
func namedTypes(_ value: Any) -> [(usr: String, spelling: String)] {
    if let fragment = value as? [String: Any], fragment["kind"] as? String == "typeIdentifier",
       let usr = fragment["preciseIdentifier"] as? String {
        return [(usr, fragment["spelling"] as? String ?? "?")]
    }
    if let object = value as? [String: Any] { return object.values.flatMap(namedTypes) }
    if let array = value as? [Any] { return array.flatMap(namedTypes) }
    return []
}

var leaks: Set<String> = []
for symbol in symbols {
    let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
    if let components = symbol["pathComponents"] as? [String], components.count == 1, let name = components.first,
       internalNames.contains(name),
       module(of: (symbol["identifier"] as? [String: Any])?["precise"] as? String ?? "") == "ShowroomKit" {
        leaks.insert("\(path) is public: it is ShowroomKit's internal \(name)")
    }
    let named = namedTypes(symbol["declarationFragments"] as Any) + namedTypes(symbol["functionSignature"] as Any)
        + namedTypes(symbol["swiftGenerics"] as Any) + namedTypes(symbol["swiftExtension"] as Any)
    for (usr, spelling) in named {
        if let why = leak(usr, spelling) { leaks.insert("\(path) names \(why)") }
    }
}
// Conformances and inheritance: a public type may not conform to a protocol apps do not see.
for relationship in relationships {
    guard let source = relationship["source"] as? String, publicUSRs.contains(source),
          let target = relationship["target"] as? String else { continue }
    let spelling = relationship["targetFallback"] as? String ?? target
    if !publicUSRs.contains(target), let why = leak(target, spelling) {
        leaks.insert("\(source) \(relationship["kind"] as? String ?? "relates to") \(why)")
    }
}
if leaks.isEmpty {
    print("check-public-api: ok: \(symbols.count) public symbols name no wire, server or internal type")
} else {
    for line in leaks.sorted() { print("  \(line)") }
    print("check-public-api: FAILED: \(leaks.count) public declarations an app sees name types it must not")
    exit(1)
}
