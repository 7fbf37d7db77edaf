/// When something granted runs out, on the shell's monotonic clock (the clock `now` is read from).
///
/// Tokens carry Unix timestamps; the shell converts them once, when it maps a verified token into
/// a ``ChannelGrant``: `at(now + (expireTs − unixNow))`.
public enum Expiry: Sendable, Hashable, CustomStringConvertible {
    /// Never runs out.
    case never
    /// Runs out at this instant of the monotonic clock.
    case at(Duration)

    /// The instant, or `nil` for ``never``.
    public var deadline: Duration? {
        switch self {
        case .never: nil
        case .at(let time): time
        }
    }

    /// True once `now` has reached the deadline.
    ///
    /// - Parameter now: The current clock value.
    public func hasPassed(at now: Duration) -> Bool {
        switch self {
        case .never: false
        case .at(let time): now >= time
        }
    }

    /// `never` or `at <duration>`.
    public var description: String {
        switch self {
        case .never: "never"
        case .at(let time): "at \(time)"
        }
    }
}
