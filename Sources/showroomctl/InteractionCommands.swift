import OperatorTools
import ArgumentParser
import Foundation
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// `showroomctl pk invite|answer|stop|match`: PK between two rooms, acting as a room's
/// host with a token minted from the app's credentials (for operators and scripts).
struct PKCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pk",
        abstract: "Invite a room's host to a PK, answer, cancel or stop one, or wait for a random match (acting as the host, with a minted token).",
        subcommands: [Invite.self, Answer.self, Stop.self, Match.self])

    struct Match: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The host of --room waits for a random PK match (or stops waiting, --cancel).")
        @OptionGroup var actor: InteractionActor
        @Option(help: "Seconds the PK lasts (0: until stopped).") var duration: UInt32 = 0
        @Flag(help: "Stop waiting.") var cancel = false

        func run() throws {
            try actor.send("pk match", .roomPkMatch, RoomPkMatchRequest.with {
                $0.durationS = duration
                $0.cancel = cancel
            })
        }
    }

    struct Invite: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The host of --room invites the host of --peer; prints the invitation (`request ID …`; JSON key request.id) and the room.")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The invited room.") var peer: String
        @Option(help: "Seconds the PK lasts (0: until stopped).") var duration: UInt32 = 0
        @Option(help: "forward (the cluster forwards each host into the other's channel) or subscribe.") var mode = "forward"

        func validate() throws {
            guard ["forward", "subscribe"].contains(mode) else { throw ValidationError("--mode is forward or subscribe") }
        }

        func run() throws {
            try actor.send("pk invite", .roomPkInvite, RoomPkInviteRequest.with {
                $0.peerRoomID = peer
                $0.durationS = duration
                $0.mediaMode = mode == "subscribe" ? .subscribe : .forward
            })
        }
    }

    struct Answer: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "answer", abstract: "The invited host accepts (--accept) or rejects an invitation; its sender cancels it (--cancel).")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The invitation's id (what pk invite prints: `request ID`, JSON request.id).") var invitation: String
        @Flag(help: "Accept (default: reject).") var accept = false
        @Flag(help: "Cancel an invitation this room sent.") var cancel = false

        func run() throws {
            try actor.send("pk answer", .roomPkAnswer, RoomPkAnswerRequest.with {
                $0.invitationID = invitation
                $0.accept = accept
                $0.cancel = cancel
            })
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Either host ends the PK it names.")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The PK's id: the id of the invitation that started it (JSON key interactionId of either room).") var pk: String

        func run() throws {
            try actor.send("pk stop", .roomPkStop, RoomPkStopRequest.with {
                $0.pkID = pk
            })
        }
    }
}

/// `showroomctl cohost apply|invite|answer|stop`: co-hosting in a room, acting as a user with a
/// minted token.
struct CoHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohost",
        abstract: "Apply for a seat, invite up, answer, or end a seat (acting as the user, with a minted token).",
        subcommands: [Apply.self, Invite.self, Answer.self, Stop.self])

    struct Apply: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "--uid (in the room's audience) applies for a seat, or withdraws (--cancel).")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The user's display name.") var name = ""
        @Flag(help: "Withdraw the application.") var cancel = false

        func run() throws {
            try actor.send("cohost apply", .roomCohostApply, RoomCoHostApplyRequest.with {
                $0.userName = name
                $0.cancel = cancel
            })
        }
    }

    struct Invite: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The host (--uid) invites an audience member up.")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The audience member invited.") var invitee: UInt32

        func run() throws {
            try actor.send("cohost invite", .roomCohostInvite, RoomCoHostInviteRequest.with {
                $0.inviteeUid = invitee
            })
        }
    }

    struct Answer: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The one asked accepts (--accept) or rejects an application or invitation.")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The application's or invitation's id (what cohost apply or invite prints: `request ID`, JSON request.id).") var request: String
        @Flag(help: "Accept (default: reject).") var accept = false

        func run() throws {
            try actor.send("cohost answer", .roomCohostAnswer, RoomCoHostAnswerRequest.with {
                $0.requestID = request
                $0.accept = accept
            })
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The co-host or the host ends the seat it names.")
        @OptionGroup var actor: InteractionActor
        @Option(help: "The seat's id (the room's `seats=UID:ID`; JSON key cohosts[].seatId).") var seat: String

        func run() throws {
            try actor.send("cohost stop", .roomCohostStop, RoomCoHostStopRequest.with {
                $0.seatID = seat
            })
        }
    }
}

/// Who acts in a PK or co-host command: a room, a uid, and the app's credentials to mint that
/// uid's token for the room's channel.
struct InteractionActor: ParsableArguments {
    @OptionGroup var common: RoomsCommand.Common
    @OptionGroup var app: AppCredentials
    @Option(help: "The room.") var room: String
    @Option(help: "The acting user's uid.") var uid: UInt32
    @Option(help: "The room's channel, when it is not the room id.") var channel = ""

    func token() throws -> String {
        try app.token(channel: channel.isEmpty ? room : channel, uid: uid, role: .publisher)
    }

    /// Sends the request as this actor; prints the room after it. With a request made (an
    /// invitation or application), JSON `{"room": …, "request": …}`; without, the room's object.
    func send(_ what: String, _ kind: WireMessageKind, _ body: some RoomActorRequest) throws {
        try runCommand(what) {
            let answer = try common.link().request(kind, body: body.acting(in: room, as: uid, token: try token()),
                                                   expecting: RoomInteractionResponse.self)
            if common.json {
                var object = RoomView.object(answer.room)
                if answer.hasRequest { object = ["room": object, "request": RoomView.requestObject(answer.request)] }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                if answer.hasRequest { print("request \(answer.request.id) from uid \(answer.request.fromUid) to uid \(answer.request.toUid)") }
                print(RoomView.line(answer.room))
            }
        }
    }
}
