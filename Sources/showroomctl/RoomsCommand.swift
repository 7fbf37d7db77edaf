import OperatorTools
import ArgumentParser
import Foundation
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// `showroomctl rooms create|list|get|close`: the room registry, for operators.
struct RoomsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms",
        abstract: "Create, list, show and close rooms.",
        subcommands: [Create.self, List.self, Get.self, Close.self])

    /// What every rooms command takes.
    struct Common: ParsableArguments {
        @Option(name: .customLong("seed"), help: "A coordinator's client endpoint, or a member's cluster endpoint with SHOWROOM_KEYRING (repeatable).")
        var seeds: [String] = []

        @Flag(help: "Print JSON.")
        var json = false

        @Option(help: "Seconds to wait for an answer.")
        var timeout = 3.0

        func link() throws -> OperatorLink {
            try OperatorLink(seeds: seeds, timeout: .milliseconds(Int(timeout * 1000)))
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a room; prints it (JSON key roomId).")
        @OptionGroup var common: Common
        @Option(help: "The room's name.") var name: String
        @Option(help: "The owner's uid.") var owner: UInt32
        @Option(help: "The owner's display name.") var ownerName = ""
        @Option(help: "The owner's avatar URL.") var ownerAvatar = ""
        @Option(help: "The room id (default: the coordinator makes one).") var roomId = ""
        @Option(help: "The RTC channel (default: the room id).") var channel = ""

        func run() throws {
            var request = RoomCreateRoomRequest()
            request.name = name
            request.ownerUid = owner
            request.ownerName = ownerName
            request.ownerAvatar = ownerAvatar
            request.roomID = roomId
            request.channel = channel
            try runCommand("rooms create") {
                let room = try common.link().request(.roomCreate, body: request, expecting: RoomCreateRoomResponse.self).room
                print(common.json ? RoomView.json(room) : RoomView.line(room))
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List open rooms, newest first.")
        @OptionGroup var common: Common
        @Option(help: "Rooms per page (1-100).") var pageSize: UInt32 = 20
        @Option(help: "The previous page's token (printed as `more: --page-token …`; JSON key nextPageToken).") var pageToken = ""
        @Flag(help: "Follow the page tokens and print every open room.") var all = false

        func run() throws {
            try runCommand("rooms list") {
                let link = try common.link()
                var rooms: [RoomRoom] = []
                var request = RoomListRoomsRequest()
                request.pageSize = pageSize
                request.pageToken = pageToken
                var total: UInt32 = 0
                var next = ""
                repeat {
                    let page = try link.request(.roomList, body: request, expecting: RoomListRoomsResponse.self)
                    rooms += page.rooms
                    total = page.total
                    next = page.nextPageToken
                    request.pageToken = next
                } while all && !next.isEmpty
                if common.json {
                    let objects = rooms.map { RoomView.object($0) }
                    let document: [String: Any] = ["rooms": objects, "total": total, "nextPageToken": next]
                    print(String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self))
                } else {
                    print("\(rooms.count) of \(total) open rooms")
                    for room in rooms { print(RoomView.line(room)) }
                    if !next.isEmpty { print("more: --page-token \(next)") }
                }
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one room.")
        @OptionGroup var common: Common
        @Argument(help: "The room id.") var roomId: String

        func run() throws {
            var request = RoomGetRoomRequest()
            request.roomID = roomId
            try runCommand("rooms get") {
                let room = try common.link().request(.roomGet, body: request, expecting: RoomGetRoomResponse.self).room
                print(common.json ? RoomView.json(room) : RoomView.line(room))
            }
        }
    }

    struct Close: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Close a room: as its owner (--uid) or as an administrator (signed with the app certificate).")
        @OptionGroup var common: Common
        @OptionGroup var app: AppCredentials
        @Argument(help: "The room id.") var roomId: String
        @Option(help: "Close as this uid (the owner); default: as an administrator.") var uid: UInt32?

        func run() throws {
            var request = RoomCloseRoomRequest()
            request.roomID = roomId
            if let uid {
                request.uid = uid
            } else {
                request.admin = AdminSigner.sign(action: "close-room", target: roomId, uid: 0,
                                                 issuedAtMs: Int64(Date().timeIntervalSince1970 * 1000),
                                                 appCertificate: try app.certificate())
            }
            try runCommand("rooms close") {
                let room = try common.link().request(.roomClose, body: request, expecting: RoomCloseRoomResponse.self).room
                print(common.json ? RoomView.json(room) : RoomView.line(room))
            }
        }
    }
}

/// `showroomctl kick`: removes a uid from a channel and bans it for a while.
struct KickCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kick",
        abstract: "Kick a uid out of a channel and ban it (join, or publishing audio/video) for some seconds.")
    @OptionGroup var common: RoomsCommand.Common
    @OptionGroup var app: AppCredentials
    @Option(help: "The channel.") var channel: String
    @Option(help: "The uid.") var uid: UInt32
    @Option(help: "Ban length in seconds (0: kick only).") var banSeconds: UInt32 = 0
    @Option(help: "What to ban: join, publish-audio, publish-video (repeatable; default join).")
    var privilege: [String] = []

    func run() throws {
        var request = RoomKickRequest()
        request.channel = channel
        request.uid = uid
        request.banSeconds = banSeconds
        for name in privilege {
            switch name {
            case "join": request.privileges.append(1)
            case "publish-audio": request.privileges.append(2)
            case "publish-video": request.privileges.append(3)
            default: throw ValidationError("unknown privilege '\(name)': use join, publish-audio or publish-video")
            }
        }
        request.admin = AdminSigner.sign(action: "kick", target: channel, uid: uid,
                                         issuedAtMs: Int64(Date().timeIntervalSince1970 * 1000),
                                         appCertificate: try app.certificate())
        try runCommand("kick") {
            let answer = try common.link().request(.kick, body: request, expecting: RoomKickResponse.self)
            if common.json {
                let document: [String: Any] = [
                    "channel": answer.ban.channel, "uid": answer.ban.uid, "privileges": answer.ban.privileges,
                    "untilMs": answer.ban.untilMs, "edges": answer.edges,
                ]
                print(String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self))
            } else {
                print(banSeconds == 0
                    ? "kicked uid \(answer.ban.uid) from \(answer.ban.channel); not banned (\(answer.edges) edges told)"
                    : "kicked uid \(answer.ban.uid) from \(answer.ban.channel); banned until \(answer.ban.untilMs) ms (\(answer.edges) edges enforce it)")
            }
        }
    }
}

/// Runs `body`, printing a failure as `showroomctl <name>: [code] message` with exit status 1.
func runCommand(_ name: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ShowroomError {
        FileHandle.standardError.write(Data("showroomctl \(name): \(error)\n".utf8))
        throw ExitCode(1)
    }
}
