import Metrics
import Rooms

/// The coordinator's Prometheus series: the sizes of the state it keeps, refreshed on each tick,
/// so that a long run shows whether anything grows with every channel or room ever used.
final class CoordinatorMetrics {
    private let rooms = Gauge(label: "coordinator.rooms")
    private let channelSequences = Gauge(label: "coordinator.channel_sequences")
    private let placements = Gauge(label: "coordinator.placements")
    private let bans = Gauge(label: "coordinator.bans")
    private let hostedChannels = Gauge(label: "coordinator.hosted_channels")
    private let relayChannels = Gauge(label: "coordinator.relay_channels")
    private let stagesSent = Gauge(label: "coordinator.stages_sent")
    private let pkForwards = Gauge(label: "coordinator.pk_forwards")

    func record(_ machine: CoordinatorNode) {
        rooms.record(machine.records.registry.rooms.count)
        channelSequences.record(machine.records.sequencer.count)
        placements.record(machine.records.directory.placements.placements.count)
        bans.record(machine.records.bans.bans.count)
        hostedChannels.record(machine.records.directory.hostsByChannel.count)
        relayChannels.record(machine.records.directory.relays.channelCount)
        stagesSent.record(machine.edgeInstructions.stagesSent)
        pkForwards.record(machine.edgeInstructions.forwards.count)
    }
}
