import Edge
import NodeRuntime
import ShowroomWire
import ZeroMQ

/// The edge as the coordinator link on a node's loop reaches it in the node's process: each call
/// hops to the edge's loop (``EdgeServer`` does), each completion back to the node's loop.
final class EdgeOnNodeLoop: CoordinatorLinkEdge {
    private let edge: EdgeServer
    private let nodeLoop: EventLoop

    /// The edge `edge`, reached from `nodeLoop` (call on that loop).
    init(_ edge: EdgeServer, nodeLoop: EventLoop) {
        self.edge = edge
        self.nodeLoop = nodeLoop
    }

    func claimAnswered(_ channel: String, _ outcome: ClaimOutcome) {
        edge.claimAnswered(channel, outcome)
    }

    func forwardPlaced(_ placement: ForwardPlacement, _ result: Result<ForwardEdge, ShowroomError>) {
        edge.forwardPlaced(placement, result)
    }

    func forwardCommand(_ command: EdgeForwardCommand, completion: @escaping (Result<[ForwardDestinationStatus], ShowroomError>) -> Void) {
        edge.forwardCommand(command, completion: back(completion))
    }

    func forwardedPublishers(_ completion: @escaping ([EdgeForwardedPublisher]) -> Void) {
        edge.forwards(completion: back(completion))
    }

    func applyBans(_ bans: [RoomBan], completion: @escaping (Result<Int, ShowroomError>) -> Void) {
        edge.applyBans(bans, completion: back(completion))
    }

    func applyStages(_ stages: [RoomStage], completion: @escaping (Result<Int, ShowroomError>) -> Void) {
        edge.applyStages(stages, completion: back(completion))
    }

    func channelsElsewhere(_ channels: [RoomChannelElsewhere]) {
        edge.channelsElsewhere(channels)
    }

    func channelUsers(_ request: RoomChannelUsersRequest, completion: @escaping (Result<RoomChannelUsersResponse, ShowroomError>) -> Void) {
        edge.channelUsers(request, completion: back(completion))
    }

    func channelData(_ request: RoomChannelDataRequest, completion: @escaping (Result<RoomChannelDataResponse, ShowroomError>) -> Void) {
        edge.channelData(request, completion: back(completion))
    }

    func applyRecordings(_ request: RoomEdgeRecordingsRequest, completion: @escaping (Result<Int, ShowroomError>) -> Void) {
        edge.applyRecordings(request, completion: back(completion))
    }

    /// `completion`, called from the edge's loop, run on the node's loop.
    private func back<Value: Sendable>(_ completion: @escaping (Value) -> Void) -> @Sendable (Value) -> Void {
        let bound = LoopBound(completion, loop: nodeLoop)
        let loop = nodeLoop
        return { value in loop.execute { bound.value(value) } }
    }

    /// What the edge's loop hands over, carried to `link` on its node's loop (and the drain's
    /// announcement back to `edgeLoop`).
    static func reports(to link: LoopBound<CoordinatorLink>, edgeLoop: EventLoop) -> CoordinatorReports {
        let loop = link.loop
        return CoordinatorReports(
            activities: { activities in loop.execute { link.value.add(activities) } },
            summary: { channels in loop.execute { link.value.setSummary(channels) } },
            claim: { channel in loop.execute { link.value.claim(channel) } },
            place: { placement in loop.execute { link.value.place(placement) } },
            draining: { announced in
                let back = LoopBound(announced, loop: edgeLoop)
                loop.execute { link.value.announceDraining { edgeLoop.execute { back.value() } } }
            })
    }
}
