import Foundation
import NodeRuntime
import Rooms
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

extension CoordinatorShell {
    /// Serves a room request where ``CoordinatorNode/route(_:roomID:forwarded:endpoint:)`` says:
    /// here (once a catch-up of the room is over), or at the room's owner, whose answer is relayed.
    func routeRoomRequest(_ request: WireEnvelope, _ respond: Node.Responder) {
        var request = request
        let roomID: String
        do {
            roomID = try CoordinatorNode.roomID(of: &request, using: &random)
        } catch {
            return respond(.failure(error))
        }
        switch machine.route(request.kind, roomID: roomID, forwarded: request.forwarded, endpoint: { clusterEndpoint(of: $0) }) {
        case .refuse(let error):
            respond(.failure(error))
        case .serveWithoutOwner:
            serveRoomRequest(request, respond)
        case .serve:
            let members = ownership.ring
            afterCatchUp(of: roomID) { [self] in
                // Held for a catch-up, the request may find the members changed and the room
                // owned by another: it is routed again, never written by a coordinator that does
                // not own the room.
                guard members == ownership.ring else { return routeRoomRequest(request, respond) }
                if let raised = machine.beginRoomTerm(of: roomID) { apply([raised], replicate: true) }
                serveRoomRequest(request, respond)
            } fail: { [self] in
                respond(.failure(machine.holdRefusal(of: roomID, seesMostOfTheCluster: seesMostOfTheCluster)))
            }
        case .forward(let owner, let endpoint):
            node.forward(request, to: endpoint, timeout: Self.peerTimeout) { [self] result in
                switch result {
                case .success(let answer):
                    respond(.relayed(answer))
                case .failure(let error):
                    guard let refusal = CoordinatorNode.ownerDidNotAnswer(request.kind, roomID: roomID, owner: owner, error: error) else {
                        return serveRoomRequest(request, respond)
                    }
                    respond(.failure(refusal))
                }
            }
        }
    }

    /// Serves a room request, a PK or co-host request or a peer update here
    /// (``CoordinatorNode/serve(_:nowMs:using:checks:)``), carries out its plan and answers (a
    /// write once the successor holds it).
    private func serveRoomRequest(_ request: WireEnvelope, _ respond: Node.Responder) {
        let now = nowMs
        let served: RoomRequestServed
        do {
            served = try machine.serve(request, nowMs: now, using: &random, checks: RoomRequestChecks(credentials, nowMs: now))
        } catch {
            return respond(.failure(error))
        }
        carryOut(served.plan) { [self] outcome in
            switch machine.answer(served.answer, after: outcome) {
            case .success(let answer): respond(.success(answer))
            case .failure(let error): respond(.failure(error))
            }
        }
    }

    /// The app's id and certificate, as this coordinator checks requests with them.
    var credentials: RequestCredentials {
        RequestCredentials(appID: configuration.appID, appCertificate: configuration.appCertificate, checker: "coordinator \(selfID)")
    }

    /// Checks an admin request's signature against the app certificate.
    func verifyAdmin(_ signature: RoomAdminSignature, action: String, target: String, uid: UInt32,
                     nowMs: Int64) throws(ShowroomError) {
        try credentials.verifyAdmin(signature, action: action, target: target, uid: uid, nowMs: nowMs)
    }

    // MARK: - Listing (scatter-gather: every coordinator lists the rooms it owns)

    /// Lists open rooms newest first across all coordinators: each lists its own
    /// (``RoomRegistry/listing(_:forwarded:where:)``), this one merges.
    func listRooms(_ request: WireEnvelope, _ respond: Node.Responder) {
        let ownership = ownership
        guard let (body, local, asked) = respond.answering({ () throws -> (RoomListRoomsRequest, RoomListRoomsResponse, RoomListRoomsRequest?) in
            let body = try request.decodeBody(RoomListRoomsRequest.self)
            let (page, ask) = try machine.records.registry.listing(body, forwarded: request.forwarded) { ownership.owns($0.roomID) }
            return (body, page, ask)
        }) else { return }
        guard let asked else { return respond(.success(local)) }
        var ask = request
        ask.body = (try? asked.serializedData()) ?? request.body
        node.forwardAll(ownership.others.map { ($0, ask) }, timeout: Self.peerTimeout) { result in
            do throws(ShowroomError) {
                let pages = try result.get().map { answer throws(ShowroomError) in try answer.decodeBody(RoomListRoomsResponse.self) }
                respond(.success(try RoomRegistry.mergePages([local] + pages, for: body)))
            } catch {
                respond(.failure(RoomRegistry.gatheringFailed(error)))
            }
        }
    }
}

extension RoomRequestChecks {
    /// The checks `credentials` make at `nowMs`: admin signatures over a room (uid 0), and an
    /// actor's token for the room's channel.
    init(_ credentials: RequestCredentials, nowMs: Int64) {
        self.init(admin: { signature, action, target throws(ShowroomError) in
            try credentials.verifyAdmin(signature, action: action, target: target, uid: 0, nowMs: nowMs)
        }, member: { token, uid, channel throws(ShowroomError) in
            try credentials.verifyToken(token, channel: channel, uid: uid, nowMs: nowMs, needed: "PK and co-host requests carry",
                                        missing: "PK and co-host requests carry the uid's token for the room's channel '\(channel)'")
        })
    }
}
