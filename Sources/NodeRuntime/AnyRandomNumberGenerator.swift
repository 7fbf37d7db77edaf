/// Any random number generator as one concrete type, for a shell that takes its generator from
/// outside (the system's in production, a seeded one in a simulation) and passes it to the pure
/// state machines' generic `using:` entry points.
public struct AnyRandomNumberGenerator: RandomNumberGenerator {
    private var base: any RandomNumberGenerator

    /// Wraps `base`.
    public init(_ base: any RandomNumberGenerator) {
        self.base = base
    }

    public mutating func next() -> UInt64 { base.next() }
}
