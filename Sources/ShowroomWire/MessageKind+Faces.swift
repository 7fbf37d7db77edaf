extension WireMessageKind {
    /// Whether clients may send this kind to a member's client endpoint: the edge session kinds,
    /// forwarding requests, room requests, placement, signed kicks, signaling and call requests, node info and the (client) cluster status. The
    /// others — gossip, replication, edge reports, bans, claims, the channel list — are internal:
    /// only authenticated members send them, on cluster endpoints. Unknown kinds count as internal.
    public var isClientKind: Bool {
        switch self {
        case .nodeInfo, .clusterStatus:
            return true
        case .mediaFrame, .edgeOpenSession, .edgeCloseSession, .edgeHeartbeat, .joinChannel, .leaveChannel,
             .updateChannelOptions, .setClientRole, .renewChannelToken, .subscribeTrack, .unsubscribeTrack,
             .muteRemoteTrack, .enableVolumeIndication, .sendStreamMessage, .preloadChannel, .relayKeyframeRequest:
            return true
        case .startForward, .updateForward, .stopForward, .pauseForward, .resumeForward:
            return true
        case .roomCreate, .roomList, .roomGet, .roomJoin, .roomLeave, .roomClose, .roomUpdate, .roomChatSend, .roomChatHistory,
             .channelPlace, .kick:
            return true
        case .roomPkInvite, .roomPkAnswer, .roomPkStop, .roomPkMatch, .roomCohostApply, .roomCohostInvite,
             .roomCohostAnswer, .roomCohostStop:
            return true
        case .callLogin, .callLogout, .callRenewToken, .callPoll, .callPresence, .callDial, .callCancel, .callAccept,
             .callReject, .callHangup, .callFirstFrame, .callToken:
            return true
        default:
            return false
        }
    }
}
