/// Limits and timers of forwards.
public struct ForwardSettings: Sendable, Hashable {
    /// Starts and updates of one forward allowed per second (more: `FORWARD_UPDATE_TOO_FREQUENT`).
    public var maxChangesPerSecond = 10
    /// At most one keyframe request to the source publisher per interval, however many
    /// destinations ask.
    public var keyframeRequestInterval: Duration = .milliseconds(500)
    /// An unreachable destination is placed again after this long.
    public var retryInterval: Duration = .seconds(1)
    /// ... this many times in a row, then it stays in failure.
    public var maxRetries = 60
    /// A destination refused because its room's stage does not seat the forwarded host yet
    /// (`NOT_ON_STAGE`) is joined again after this long (up to ``maxRetries`` times).
    public var stageRetryInterval: Duration = .milliseconds(100)
    /// Redirects (`CHANNEL_ELSEWHERE`) followed per join before it counts as unreachable.
    public var maxRedirects = 3

    /// The defaults.
    public init() {}
}
