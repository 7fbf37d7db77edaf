import ShowroomWire

/// What the room-coordinators said about a channel the edge does not host yet (the answer to its
/// `CHANNEL_CLAIM`).
public enum ClaimOutcome: Sendable, Equatable {
    /// Host it: no coordinator is alive to ask (or one from before claims answered).
    case admit
    /// Host it: the channel's owner coordinator placed it here (a relayed channel becomes an
    /// origin: its old origin died and a publisher joins here).
    case placed
    /// Host it as a relay of `origin` (`ClaimChannelResponse.relay_of_*`): audience joins are
    /// admitted and the channel is pulled from the origin; broadcasting is refused with
    /// `CHANNEL_ELSEWHERE` naming the origin.
    case relay(RelayOrigin)
    /// Do not: the channel is placed elsewhere (`CHANNEL_ELSEWHERE` with a redirect), or the
    /// coordinators could not decide (`UNAVAILABLE`), or the claim was refused.
    case refuse(ShowroomError)
}
