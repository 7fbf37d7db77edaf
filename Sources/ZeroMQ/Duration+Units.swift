extension Duration {
    /// Whole milliseconds, rounded down; negative durations give 0. ZeroMQ and the wire speak
    /// milliseconds.
    public var milliseconds: UInt64 {
        let (seconds, attoseconds) = components
        return seconds < 0 ? 0 : UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000)
    }

    /// The duration in seconds, for rates and reports.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
