import Foundation
import NodeRuntime
import Rooms
import ShowroomAuth
import ShowroomWire

// PK media without the app doing anything: while a room it owns is in a PK with media mode
// forward, a coordinator has the edge hosting the room's channel forward the room's host into the
// peer room's channel (with a token it mints for that channel), and stops it when the PK ends.
// Each room's owner forwards its own host, so a PK runs both ways. Reconciled on every change and
// every tick: what should run is compared with what the edges were told.

extension CoordinatorShell {
    /// How long a forward token lasts (a PK's longest duration, with room to spare).
    static let forwardTokenSeconds: UInt32 = 2 * 3600

    /// Starts the forwards PKs need and stops those they no longer do.
    func reconcilePKForwards() {
        let (stop, start) = machine.reconcileForwards()
        for running in stop { command(.stop, running, destinations: []) }
        for (roomID, forward) in start {
            guard let token = forwardToken(channel: forward.destination, uid: forward.uid) else { continue }
            let destination = EdgeForwardDestination.with {
                $0.channel = forward.destination
                $0.token = token
            }
            command(.start, forward, destinations: [destination]) { [self] refusal in
                machine.forwardAnswered(forward, for: roomID, refusal: refusal)
            }
        }
    }

    private func command(_ action: EdgeForwardAction, _ forward: PKForward, destinations: [EdgeForwardDestination],
                         done: ((ShowroomError?) -> Void)? = nil) {
        guard let endpoint = clusterEndpoint(of: forward.edge) else {
            done?(.unavailable("edge \(forward.edge) is not a member"))
            return
        }
        let body = EdgeForwardCommand.with {
            $0.channel = forward.channel
            $0.uid = forward.uid
            $0.action = action
            $0.destinations = destinations
        }
        node.send(.forwardCommand, body: body, to: endpoint, timeout: Self.peerTimeout) { [logger] result in
            if let refusal = result.refusal {
                logger.debug("edge \(forward.edge) did not \(action) the PK forward of uid \(forward.uid) in \(forward.channel): \(refusal)")
            }
            done?(result.refusal)
        }
    }

    /// A publisher token for `uid` in the peer's channel, minted with the app certificate.
    private func forwardToken(channel: String, uid: UInt32) -> String? {
        guard let appID = configuration.appID, let certificate = configuration.appCertificate else {
            logger.warning("no app id and certificate configured: PK media cannot be forwarded")
            return nil
        }
        return try? RTCTokenBuilder.buildToken(appID: appID, appCertificate: certificate, channelName: channel, uid: uid,
                                               role: .publisher, tokenExpire: Self.forwardTokenSeconds,
                                               issueTs: UInt32(clamping: nowMs / 1000),
                                               salt: UInt32.random(in: 1...99_999_999, using: &random))
    }
}
