extension ChannelPlane {
    /// Whether the edge hosts `channel` now (someone is connected to it): a join for it needs no
    /// word from the room-coordinators.
    public func hosts(channel: String) -> Bool { channels[channel] != nil }
}
