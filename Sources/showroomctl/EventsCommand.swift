import ArgumentParser
import Foundation
import ShowroomWire
import Webhooks
import ZeroMQ

/// `showroomctl events --seed ADDR --follow`: the channel and call events business servers
/// receive, as JSON lines (the webhook bodies), from every coordinator's events endpoint.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print channel events (101-112) and call events (201-203) as JSON lines, as the webhooks carry them.")

    @Option(name: .customLong("seed"), help: "A coordinator's client endpoint, or a member's cluster endpoint with SHOWROOM_KEYRING (repeatable).")
    var seeds: [String] = []

    @Flag(help: "Keep printing until stopped (Ctrl-C); without it, stop after --seconds.")
    var follow = false

    @Option(help: "Without --follow: how long to listen.")
    var seconds = 5.0

    @Option(help: "Only this channel's events (no call events).")
    var channel: String?
    @Flag(help: "Only call events (started 201, connected 202, ended 203).")
    var calls = false

    @Option(help: "Stop after this many events.")
    var count: Int?

    func validate() throws {
        // --channel drops call events and --calls drops channel events: together, nothing is printed.
        guard channel == nil || !calls else { throw ValidationError("give --channel or --calls, not both") }
    }

    func run() throws {
        try runCommand("events") {
            let link = try OperatorLink(seeds: seeds)
            let socket = try Socket(.sub, context: link.context)
            if !calls { try socket.subscribe(Array((channel.map { "channel/\($0)" } ?? "channel/").utf8)) }
            if channel == nil { try socket.subscribe(Array("call/".utf8)) }
            var connected = Set<String>()
            func connectNew() {
                guard let status = try? link.clusterStatus() else { return }
                for member in OperatorLink.coordinators(in: status) where !member.eventsEndpoint.isEmpty {
                    if connected.insert(member.eventsEndpoint).inserted { try? socket.connect(member.eventsEndpoint) }
                }
            }
            connectNew()
            guard !connected.isEmpty else {
                throw ShowroomError(.noCoordinator, "no room-coordinator with an events endpoint is alive; start one")
            }
            let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            var nextRefresh = ContinuousClock.now + .seconds(2)
            var seen = Set<String>()
            var printed = 0
            while follow || ContinuousClock.now < end {
                if ContinuousClock.now >= nextRefresh {
                    connectNew()  // coordinators that joined since
                    nextRefresh = ContinuousClock.now + .seconds(2)
                }
                guard try socket.poll(.readable, timeout: .milliseconds(200)).contains(.readable),
                      let frames = try socket.receiveFrames(), frames.count == 2,
                      let envelope = try? WireEnvelope.decode(frame: Data(frames[1]))
                else { continue }
                let line: WebhookEvent
                if envelope.kind == .channelEvent, let event = try? envelope.decodeBody(RoomChannelEvent.self) {
                    line = WebhookEvent(event)
                } else if envelope.kind == .callEvent, let event = try? envelope.decodeBody(SignalCallNotification.self) {
                    line = WebhookEvent(event)
                } else {
                    continue
                }
                guard seen.insert(line.noticeID).inserted else { continue }
                // One unbuffered line per event, so a pipe sees each as it happens.
                FileHandle.standardOutput.write(Data(line.body + [UInt8(ascii: "\n")]))
                printed += 1
                if let count, printed >= count { return }
            }
        }
    }
}
