import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import Rooms
import ShowroomWire
import ZeroMQ

/// `showroomctl status --seed ADDR`: the cluster as the cluster sees it.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the cluster as one member sees it: members (role, state, address, load), rooms, channels, PKs and co-hosts, calls.")

    @Option(name: .customLong("seed"), help: "A member's cluster endpoint, with the operator's keys in SHOWROOM_KEYRING (repeatable: the first that answers is used). A client endpoint shows the members only.")
    var seeds: [String]

    @Flag(help: "Print one JSON object (with --watch: one per line, for every poll whose view changed).")
    var json = false

    @Flag(help: "Keep watching: poll every --interval seconds and redraw when the view changed (last-heard times and loads change on most polls of a cluster endpoint). Stop with Ctrl-C.")
    var watch = false

    @Option(help: "Seconds between polls with --watch.")
    var interval = 1.0

    @Option(help: "Seconds to wait for an answer.")
    var timeout = 3.0

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed tcp://host:port") }
        guard interval >= 0.1 else { throw ValidationError("--interval must be at least 0.1 s") }
    }

    func run() throws {
        let context = try Context()
        let clients = try seeds.map { try NodeClient(endpoint: $0, context: context, credentials: OperatorKeys.credentials) }
        var previous: String?
        repeat {
            let rendered: String
            do {
                let status = try fetch(from: clients)
                var rooms = roomsAndChannels(status, context: context)
                rooms.calls = calls(status, context: context)
                rendered = json ? try StatusView.json(status, rooms) : StatusView.table(status, rooms)
            } catch {
                guard watch else {
                    FileHandle.standardError.write(Data("showroomctl status: \(error)\n".utf8))
                    throw ExitCode(1)
                }
                // A watcher reading JSON lines gets a JSON line for this too.
                rendered = json ? (try? StatusView.errorJSON("no member answered: \(error)")) ?? "{}" : "no member answered: \(error)"
            }
            if rendered != previous {
                if watch && !json { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                print(rendered)
                if watch { fflush(nil) }  // every stream: a pipe reading the watch gets each view as it comes
                previous = rendered
            }
            if watch { Thread.sleep(forTimeInterval: interval) }  // the poll period of a watch, not a wait for an event
        } while watch
    }

    /// The channels and open rooms, from the first alive coordinator that answers (empty without one).
    private func roomsAndChannels(_ status: AdminClusterStatus, context: Context) -> StatusView.Rooms {
        for member in OperatorLink.coordinators(in: status) {
            guard let client = try? NodeClient(endpoint: member.clusterEndpoint, context: context, credentials: OperatorKeys.credentials) else { continue }
            let wait = Duration.milliseconds(Int(timeout * 1000))
            guard let channels = try? client.request(.channelList, body: RoomListChannelsRequest(),
                                                     expecting: RoomListChannelsResponse.self, timeout: wait)
            else { continue }
            var request = RoomListRoomsRequest()
            request.pageSize = 100
            let rooms = try? client.request(.roomList, body: request, expecting: RoomListRoomsResponse.self, timeout: wait)
            return StatusView.Rooms(channels: RoomChannelStatus.naming(channels.channels, after: rooms?.rooms ?? []),
                                    rooms: rooms?.rooms ?? [], roomTotal: Int(rooms?.total ?? 0),
                                    drainingEdges: Set(channels.drainingEdges))
        }
        return StatusView.Rooms()
    }

    /// The calls every alive call-signal node owns (a node that does not answer is left out).
    private func calls(_ status: AdminClusterStatus, context: Context) -> [SignalCallStatus] {
        status.members.filter { $0.isAlive(as: .callsignal) && !$0.clusterEndpoint.isEmpty }.flatMap { member -> [SignalCallStatus] in
            guard let client = try? NodeClient(endpoint: member.clusterEndpoint, context: context, credentials: OperatorKeys.credentials),
                  let list = try? client.request(.callList, body: SignalCallListRequest(), expecting: SignalCallListResponse.self,
                                                 timeout: .milliseconds(Int(timeout * 1000)))
            else { return [] }
            return list.calls
        }
    }

    private func fetch(from clients: [NodeClient]) throws -> AdminClusterStatus {
        var lastError: Error?
        for client in clients {
            do {
                return try client.request(.clusterStatus, body: AdminClusterStatusRequest(), expecting: AdminClusterStatus.self,
                                          timeout: .milliseconds(Int(timeout * 1000)))
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ShowroomError.unavailable("no seed given")
    }
}
