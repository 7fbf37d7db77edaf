// CallAPI's vocabulary, by name and number, so that an app written against CallAPI ports over by
// renaming: the states a side of a call is in, why it got there, and the events it sees.

/// The state of one side of a call (CallAPI's `CallStateType`).
public enum CallState: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case idle = 0
    /// Ready to call or be called (CallAPI: after `prepareForCall`, and after every call ends).
    case prepared = 1
    /// A call was sent (caller) or received (callee) and is not answered yet.
    case calling = 2
    /// Accepted; waiting for the first remote frames.
    case connecting = 3
    /// Accepted and the first remote frames decoded on both sides.
    case connected = 4
    case failed = 10

    /// Whether a call's notice in this state ends the call for its side (it is over, failed or
    /// never began).
    public var endsCall: Bool { self == .prepared || self == .failed || self == .idle }

    public var description: String { "\(Self.names[self]!)(\(rawValue))" }
    private static let names: [CallState: String] = [
        .idle: "idle", .prepared: "prepared", .calling: "calling", .connecting: "connecting",
        .connected: "connected", .failed: "failed",
    ]
}

/// Why a side's state changed (CallAPI's `CallStateReason`).
public enum CallStateReason: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case joinRTCFailed = 1
    case messageFailed = 4
    case localRejected = 5
    case remoteRejected = 6
    case remoteAccepted = 7
    case localAccepted = 8
    case localHangup = 9
    case remoteHangup = 10
    case localCancelled = 11
    case remoteCancelled = 12
    case recvRemoteFirstFrame = 13
    case callingTimeout = 14
    case remoteCallBusy = 17
    case remoteCallingTimeout = 18
}

/// What happened in a call (CallAPI's `CallEvent`), reported with or without a state change.
public enum CallEvent: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case callingTimeout = 3
    case remoteCallingTimeout = 4
    case stateMismatch = 9
    case remoteUserRecvCall = 99
    case localRejected = 100
    case remoteRejected = 101
    case remoteAccepted = 103
    case localAccepted = 104
    case localHangup = 105
    case remoteHangup = 106
    case remoteJoined = 107
    case remoteLeft = 108
    case localCancelled = 109
    case remoteCancelled = 110
    case localJoined = 111
    case localLeft = 112
    case recvRemoteFirstFrame = 113
    case remoteCallBusy = 117
}

/// Video or audio (CallAPI's `CallType`).
public enum CallType: Int, Sendable, Hashable {
    case video = 0
    case audio = 1
}
