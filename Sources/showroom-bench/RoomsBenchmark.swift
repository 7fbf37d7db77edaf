import ArgumentParser
import Foundation
import ShowroomKit
import ShowroomWire

/// `showroom-bench rooms`: the room registry through the SDK's room service — create and list
/// throughput and latency, from several concurrent callers. The rooms it creates are closed again.
struct RoomsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms",
        abstract: "Create and list rooms through the SDK: throughput and latency percentiles.")

    @Option(name: .customLong("seed"), help: "A cluster member (repeatable).")
    var seeds: [String] = []

    @Option(help: "Rooms to create.")
    var rooms = 500

    @Option(help: "List requests (20 rooms a page).")
    var lists = 500

    @Option(help: "Concurrent callers.")
    var concurrency = 8

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        guard (1...100_000).contains(rooms) else { throw ValidationError("--rooms must be 1–100000") }
        guard (1...100_000).contains(lists) else { throw ValidationError("--lists must be 1–100000") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1–256") }
    }

    func run() async throws {
        let loop = try EngineLoop(name: "bench-rooms")
        let service = RoomService(seeds: try await ClientSeeds.resolve(seeds), loop: loop)
        let run = UInt32.random(in: 0 ... .max)
        progress("creating \(rooms) rooms with \(concurrency) callers", json: json)
        let created = try await measureConcurrently(callers: concurrency, count: rooms) { i in
            _ = try await service.createRoom(name: "bench room \(i)", ownerUid: 100_000 + UInt32(i), roomID: "bench-\(run)-\(i)")
        }
        progress("listing \(lists) pages", json: json)
        let listed = try await measureConcurrently(callers: concurrency, count: lists) { _ in
            _ = try await service.listRooms(pageSize: 20)
        }
        progress("closing the rooms", json: json)
        _ = try? await measureConcurrently(callers: concurrency, count: rooms) { i in
            _ = try await service.closeRoom("bench-\(run)-\(i)", uid: 100_000 + UInt32(i))
        }
        await service.shutdown()
        await loop.shutdown()

        let createLatency = LatencyHistogram(milliseconds: created.times)
        let listLatency = LatencyHistogram(milliseconds: listed.times)
        try createLatency.requireSamples("room creation", "all \(created.failures) creations failed")
        try listLatency.requireSamples("room listing", "all \(listed.failures) lists failed")
        if json {
            try printJSON([
                "benchmark": "rooms", "rooms": rooms, "lists": lists, "concurrency": concurrency,
                "create_per_s": rounded(created.perSecond), "create_ms_p50": rounded(createLatency.percentileMs(0.5), 2),
                "create_ms_p99": rounded(createLatency.percentileMs(0.99), 2), "create_failures": created.failures,
                "list_per_s": rounded(listed.perSecond), "list_ms_p50": rounded(listLatency.percentileMs(0.5), 2),
                "list_ms_p99": rounded(listLatency.percentileMs(0.99), 2), "list_failures": listed.failures,
            ])
        } else {
            print("rooms through the SDK, \(concurrency) concurrent callers")
            print(String(format: "  create  %8.0f /s   p50 %6.2f ms   p99 %6.2f ms   failures %d", created.perSecond,
                         createLatency.percentileMs(0.5), createLatency.percentileMs(0.99), created.failures))
            print(String(format: "  list    %8.0f /s   p50 %6.2f ms   p99 %6.2f ms   failures %d", listed.perSecond,
                         listLatency.percentileMs(0.5), listLatency.percentileMs(0.99), listed.failures))
        }
    }
}
