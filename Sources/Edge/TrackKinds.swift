/// A set of track kinds in one byte, for the per-connection "publishing" state.
struct TrackKinds: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    static let audio = TrackKinds(rawValue: 1)
    static let video = TrackKinds(rawValue: 2)

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init(_ kind: TrackKind) {
        self = kind == .audio ? .audio : .video
    }

    func contains(_ kind: TrackKind) -> Bool { contains(TrackKinds(kind)) }

    /// The kinds in the set, audio first.
    var kinds: [TrackKind] { TrackKind.allCases.filter { contains($0) } }
}
