import Foundation
import ShowroomAuth
import ShowroomWire

/// The apps of a run: each acknowledged room's host, an SDK engine that joins the room's channel
/// as broadcaster (trying again while its room is open and it holds no connection) and publishes
/// opaque video frames at a low rate, a keyframe every few frames or when an edge asks; and
/// viewers, one SDK engine per viewer uid, that join rooms' channels as audience, swipe from one
/// to another and leave, as the room workload draws.
final class EngineWorkload {
    /// The room's owner, who hosts its show.
    static let hostUID: UInt32 = 42
    static let frameIntervalMs: Int64 = 500
    static let keyframeEvery = 4

    private unowned let cluster: SimulatedCluster
    private let links: SimulatedClientLinks
    private var network: SimulatedNetwork { cluster.network }
    /// Each room's host engine, by room id.
    private(set) var hosts: [String: SimulatedEngine] = [:]
    /// Rooms whose close was acknowledged: their hosts left.
    private(set) var closedRooms: Set<String> = []
    /// The viewer engines, by uid.
    private(set) var viewers: [UInt32: SimulatedEngine] = [:]
    /// Viewers with a join or leave under way: the next operation waits for it.
    private var busy: Set<UInt32> = []
    private var hostJoining: Set<String> = []
    private var framesPublished: [String: Int] = [:]

    init(cluster: SimulatedCluster, links: SimulatedClientLinks) {
        self.cluster = cluster
        self.links = links
    }

    /// A token for `uid` in `channel`, issued a while ago on the run's clock (nodes' clocks are
    /// skewed), valid all run; salted by a constant, so that a seed's bytes are the same each run.
    private func token(_ channel: String, uid: UInt32, publisher: Bool) -> String {
        let issued = UInt32(network.now / 1000) - 600
        guard let token = try? RTCTokenBuilder.buildToken(
            appID: SimulationApp.appID, appCertificate: SimulationApp.certificate, channelName: channel, uid: uid,
            role: publisher ? .publisher : .subscriber, tokenExpire: 86_400, issueTs: issued, salt: 1)
        else { preconditionFailure("a token does not build") }
        return token
    }

    // MARK: Hosts

    /// The room's creation was acknowledged: its host goes on air.
    func roomCreated(_ roomID: String) {
        guard hosts[roomID] == nil else { return }
        let host = SimulatedEngine(id: "host-\(roomID)", uid: Self.hostUID, cluster: cluster, links: links)
        hosts[roomID] = host
        tick(roomID, host)
    }

    /// The room's close was acknowledged: its host leaves.
    func roomClosed(_ roomID: String) {
        guard closedRooms.insert(roomID).inserted, let host = hosts[roomID], host.shell.heldChannels.contains(roomID) else { return }
        network.record("engine \(host.id) leave \(roomID)")
        host.leave(channel: roomID) { [unowned self] result in
            network.record("engine \(host.id) left \(roomID) \(Self.outcome(result))")
        }
    }

    private func tick(_ roomID: String, _ host: SimulatedEngine) {
        guard !closedRooms.contains(roomID) else { return }
        let engine = host
        if !engine.shell.heldChannels.contains(roomID), !hostJoining.contains(roomID) {
            hostJoining.insert(roomID)
            network.record("engine \(host.id) join \(roomID) as broadcaster")
            engine.join(channel: roomID, uid: Self.hostUID, token: token(roomID, uid: Self.hostUID, publisher: true),
                        broadcaster: true) { [unowned self] result in
                hostJoining.remove(roomID)
                network.record("engine \(host.id) joined \(roomID) \(Self.outcome(result))")
                if case .success = result, closedRooms.contains(roomID) { roomClosedWhileJoining(roomID, host) }
            }
        } else if engine.shell.publishes(roomID) {
            let number = framesPublished[roomID, default: 0]
            framesPublished[roomID] = number + 1
            let keyframe = engine.keyframeWanted || number % Self.keyframeEvery == 0
            engine.publishVideo(Array("\(roomID)/\(Self.hostUID)/\(number)".utf8), keyframe: keyframe)
        }
        network.scheduler.after(Self.frameIntervalMs) { [unowned self] in tick(roomID, host) }
    }

    private func roomClosedWhileJoining(_ roomID: String, _ host: SimulatedEngine) {
        host.leave(channel: roomID) { [unowned self] result in
            network.record("engine \(host.id) left \(roomID) \(Self.outcome(result))")
        }
    }

    // MARK: Viewers

    /// Viewer `uid` acts on `roomID`'s channel: leaves it if it holds it, else joins it (leaving
    /// the channel it holds first: a swipe).
    func viewerStep(_ roomID: String, uid: UInt32) {
        let viewer = viewers[uid] ?? SimulatedEngine(id: "viewer-\(uid)", uid: uid, cluster: cluster, links: links)
        viewers[uid] = viewer
        guard !busy.contains(uid) else { return network.record("engine \(viewer.id) busy") }
        let held = viewer.shell.heldChannels
        busy.insert(uid)
        if held.contains(roomID) {
            leave(viewer, roomID) { [unowned self] in busy.remove(uid) }
        } else if let current = held.first {
            leave(viewer, current) { [unowned self] in join(viewer, roomID) }
        } else {
            join(viewer, roomID)
        }
    }

    private func leave(_ viewer: SimulatedEngine, _ channel: String, then: @escaping () -> Void) {
        network.record("engine \(viewer.id) leave \(channel)")
        viewer.leave(channel: channel) { [unowned self] result in
            network.record("engine \(viewer.id) left \(channel) \(Self.outcome(result))")
            then()
        }
    }

    private func join(_ viewer: SimulatedEngine, _ channel: String) {
        network.record("engine \(viewer.id) join \(channel)")
        viewer.join(channel: channel, uid: viewer.uid, token: token(channel, uid: viewer.uid, publisher: false),
                           broadcaster: false) { [unowned self] result in
            network.record("engine \(viewer.id) joined \(channel) \(Self.outcome(result))")
            busy.remove(viewer.uid)
        }
    }

    private static func outcome(_ result: Result<Void, ShowroomError>) -> String {
        switch result {
        case .success: "ok"
        case .failure(let error): "fail \(error.code)"
        }
    }
}
