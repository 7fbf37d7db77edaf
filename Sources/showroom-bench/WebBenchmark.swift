import ArgumentParser
import Foundation
import OperatorTools
import ShowroomKit
import ShowroomWire
import ZeroMQ

/// `showroom-bench web`: the browser side of instant open and switch, in headless Chromium driven
/// through WebDriver, beside the Swift SDK in the same run. Swift hosts go live in `--rooms`
/// rooms; then, over the same rooms:
/// - the Swift SDK's join → first decoded frame (fresh engines, the seeds' order: the view set up
///   when the host is announced), as `showroom-bench join` measures it;
/// - the web SDK's join → first frame painted, measured in the page from the `join` call: on a
///   fresh page (the page's first join: coordinator link, placement, edge session all new) and in
///   an open page (a fresh client; the page's edge sessions kept warm by earlier rooms);
/// - swipe → first frame painted through the web video loader, one room prejoined above and below;
/// - with `--watch-seconds`, a long watch of one room (a swipe every `--watch-swipe-seconds`), the
///   page's JS heap read after a forced GC every 30 s through the DevTools protocol.
///
/// It prints p50 / p95 / p99 / max, decode errors and failures of each, the goals beside them,
/// and the CPU each phase cost: this process (its synthetic hosts encoding, and its Swift audience
/// decoding), Chromium's processes, the cluster's and the machine's.
struct WebBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Join → first frame painted and swipe → first frame in headless Chromium, beside the Swift SDK's join; a long watch's JS heap.")

    @OptionGroup var target: BenchTarget

    @Option(help: "Joins of each kind: the Swift SDK's, the web page's on a fresh page and in an open page (at least 50 for the goal).")
    var joins = 50

    @Option(help: "Swipes through the rooms with the web video loader (one room prejoined above and below).")
    var swipes = 50

    @Option(help: "Live rooms, each with a Swift host (320×240 VP8 test pattern at 15 fps, 2 s GOP, and a tone); at least 3.")
    var rooms = 5

    @Option(help: "The web app's address (http://HOST:PORT/app/); default: the `web app:` line of the run directory's web-app.out.")
    var web: String?

    @Option(name: .customLong("watch-seconds"), help: "A watch this long after the joins and swipes, the page's JS heap sampled every 30 s (0: none; 600: the 10-minute watch).")
    var watchSeconds = 0

    @Option(name: .customLong("watch-swipe-seconds"), help: "During the watch, a swipe to the next room this often (0: one room throughout).")
    var watchSwipeSeconds = 30

    @Option(help: "The Chromium executable.")
    var chromium = "/usr/bin/chromium"

    @Option(help: "The chromedriver executable.")
    var chromedriver = "/usr/bin/chromedriver"

    /// The goals the figures are judged against.
    enum Goal {
        static let firstFrameP99Ms = 100.0
        static let swipeP99Ms = 50.0
        static let heapGrowthPercent = 10.0
        /// A p99 is judged over at least this many samples.
        static let samples = 50
    }

    func validate() throws {
        guard (1...2000).contains(joins) else { throw ValidationError("--joins must be 1–2000") }
        guard (1...1000).contains(swipes) else { throw ValidationError("--swipes must be 1–1000") }
        guard (3...50).contains(rooms) else { throw ValidationError("--rooms must be 3–50 (a room prejoined above and below the one on screen)") }
        guard (0...7200).contains(watchSeconds) else { throw ValidationError("--watch-seconds must be 0–7200") }
        guard watchSwipeSeconds >= 0 else { throw ValidationError("--watch-swipe-seconds must be 0 or more") }
    }

    func run() async throws {
        let page = try benchPageAddress()
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let hostLoop = try EngineLoop(name: "bench-web-hosts")
        var hosts: [ShowroomEngine] = []
        let outcome: Result<WebFigures, any Error>
        do {
            let prefix = "bench-web-\(UInt32.random(in: 0 ... .max))"
            var live: [BenchRoom] = []
            for n in 0..<rooms {
                let room = BenchRoom(channel: "\(prefix)-\(n)", uid: UInt32(1_000 + n))
                // A configuration per engine: each carries its own client id (one id is one client).
                var configuration = EngineConfiguration(entry: .seeds(clientSeeds))
                configuration.media = LocalMediaConfiguration(videoBitrateKbps: 500, keyframeInterval: .seconds(2))
                let host = try await ShowroomEngine(configuration: configuration, loop: hostLoop)
                hosts.append(host)
                await host.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: 15))
                await host.setLocalAudioSource(ToneMicrophone())
                try await host.joinChannel(token: try app.token(channel: room.channel, uid: room.uid, role: .publisher),
                                           channel: room.channel, uid: room.uid, options: .broadcaster)
                live.append(room)
            }
            progress("\(rooms) Swift hosts live (\(prefix)-*); bench page \(page)", json: json)
            outcome = .success(try await measure(rooms: live, page: page, seeds: clientSeeds))
        } catch {
            outcome = .failure(error)
        }
        for host in hosts {
            try? await host.leaveChannel()
            await host.shutdown()
        }
        await hostLoop.shutdown()
        let figures = try outcome.get()
        try figures.requireSamples()
        if json { try printJSON(figures.json(self)) } else { figures.print(self) }
    }

    /// The bench page's address: `--web`, or the run directory's web app, with `bench.html`.
    private func benchPageAddress() throws -> String {
        var base: String
        if let web {
            base = web
        } else {
            let environment = ProcessInfo.processInfo.environment
            guard let directory = app.runDirectory ?? environment[LocalAppCredentials.runDirectoryVariable], !directory.isEmpty else {
                throw ValidationError("give --web http://HOST:PORT/app/, or --run-dir (or SHOWROOM_RUN_DIR) of a cluster that deploy/cluster.sh up started")
            }
            let said = (try? String(contentsOfFile: "\(directory)/web-app.out", encoding: .utf8)) ?? ""
            guard let line = said.split(separator: "\n").first(where: { $0.hasPrefix("web app: ") }),
                  let address = line.dropFirst("web app: ".count).split(separator: " ").first else {
                throw ValidationError("no `web app:` line in \(directory)/web-app.out: is the cluster's web app running? (or give --web)")
            }
            base = String(address)
        }
        if !base.hasSuffix("/") { base += "/" }
        if !base.hasSuffix("/app/") { base += "app/" }
        return base + "bench.html"
    }

    /// Every phase, Chromium started for the web ones and stopped by pid after them.
    private func measure(rooms live: [BenchRoom], page address: String, seeds clientSeeds: [String]) async throws -> WebFigures {
        var figures = WebFigures()
        figures.swift = try await figures.phase("Swift SDK joins", driver: nil) { try await swiftJoins(rooms: live, seeds: clientSeeds) }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("showroom-bench-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let driver = try await ChromeDriverProcess.start(executable: chromedriver, log: directory.appendingPathComponent("chromedriver.log"))
        driver.stopOnSignals(removing: directory)
        let outcome: Result<WebFigures, any Error>
        do {
            let session = try await WebDriverSession.start(port: driver.port, chrome: .init(binary: chromium, args: [
                // As Tests/Browser/harness.py: headless with a fake camera and microphone, media that
                // may play without a gesture, timers never throttled; no sandbox, for root.
                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio",
                "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                "--autoplay-policy=no-user-gesture-required", "--no-first-run",
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--window-size=800,600", "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
            ]))
            do {
                outcome = .success(try await browserPhases(BenchPage(session: session, address: address), driver: driver,
                                                           rooms: live, figures: figures))
            } catch {
                outcome = .failure(error)
            }
            await session.quit()
        } catch {
            outcome = .failure(error)
        }
        await driver.stop()
        return try outcome.get()
    }

    private func browserPhases(_ page: BenchPage, driver: ChromeDriverProcess, rooms live: [BenchRoom],
                               figures start: WebFigures) async throws -> WebFigures {
        var figures = start
        figures.browserVersion = page.session.browserVersion
        let rooms = try JSONValue(encoding: live)
        progress("Chromium \(page.session.browserVersion): \(joins) joins on fresh pages", json: json)

        // The page's first join, each time on a page loaded for it (the first one warms up, not counted).
        figures.webFresh = try await figures.phase("web joins, fresh page", driver: driver) {
            var all = LatencySet()
            for i in 0...joins {
                try await page.open()
                let room = live[i % live.count]
                let one: PageJoins = try await page.call("joins", [.number(1), try JSONValue(encoding: [room]),
                                                                   .object(["uidBase": .number(Double(650_000 + i))])],
                                                         timeout: .seconds(30))
                if i > 0 { all.add(one) }
            }
            return all
        }

        progress("\(joins) joins in one open page", json: json)
        figures.webOpen = try await figures.phase("web joins, open page", driver: driver) {
            try await page.open()
            // The page's first join (its coordinator link and first edge session) warms up, not counted.
            let _: PageJoins = try await page.call("joins", [.number(1), rooms, .object(["uidBase": .number(600_000)])],
                                                   timeout: .seconds(30))
            var all = LatencySet()
            var done = 0
            while done < joins {
                let batch = min(10, joins - done)
                // The rooms turned so that joins go on round the rooms across batches.
                let turned = (0..<live.count).map { live[($0 + done) % live.count] }
                let some: PageJoins = try await page.call("joins", [.number(Double(batch)), try JSONValue(encoding: turned),
                                                                    .object(["uidBase": .number(Double(600_001 + done))])],
                                                          timeout: .seconds(Double(batch) * 7 + 10))
                all.add(some)
                done += batch
            }
            return all
        }

        progress("\(swipes) swipes with the video loader (prejoin 1)", json: json)
        figures.swipes = LatencySet(try await figures.phase("swipes, prejoined", driver: driver) { () async throws -> PageSwipes in
            try await page.call("swipes", [.number(Double(swipes)), rooms, .object(["uid": .number(800_000)])],
                                timeout: .seconds(Double(swipes) * 7 + 30))
        })

        if watchSeconds > 0 {
            progress("a \(watchSeconds) s watch\(watchSwipeSeconds > 0 ? ", a swipe every \(watchSwipeSeconds) s" : "")", json: json)
            figures.watch = try await figures.phase("watch", driver: driver) { try await watch(page, rooms: rooms) }
        }
        return figures
    }

    /// Swift audience members over the rooms in turn (the first one warms up, not counted).
    private func swiftJoins(rooms live: [BenchRoom], seeds clientSeeds: [String]) async throws -> LatencySet {
        let loop = try EngineLoop(name: "bench-web-audience")
        progress("\(joins) Swift SDK joins", json: json)
        var all = LatencySet()
        for i in 0...joins {
            // As the page does: joins start 0–200 ms apart, at different points of the hosts' GOPs.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...200)))
            let room = live[i % live.count]
            let uid = 2_000 + UInt32(i)
            let token = try app.token(channel: room.channel, uid: uid, role: .subscriber)
            let outcome = await joinToFirstFrame(channel: room.channel, hostUID: room.uid, uid: uid, token: token, seeds: clientSeeds,
                                                 loop: loop, sinkAfterJoined: true, watching: .milliseconds(300))
            guard i > 0 else { continue }
            switch outcome.result {
            case .success(let elapsed): all.times.append(elapsed)
            case .failure(let error): all.failures.append("\(room.channel): \(error)")
            }
            all.decodeErrors += outcome.decodeErrors
        }
        await loop.shutdown()
        return all
    }

    /// The long watch: the page plays (and swipes) while its JS heap is read after a forced GC
    /// every 30 s.
    private func watch(_ page: BenchPage, rooms: JSONValue) async throws -> WatchFigures {
        let _: WatchCounters = try await page.call("startWatch", [rooms, .object([
            "uid": .number(900_000), "swipeEverySeconds": .number(Double(watchSwipeSeconds)),
        ])], timeout: .seconds(30))
        let began = ContinuousClock.now
        let interval = max(1, min(30, watchSeconds / 2))
        var figures = WatchFigures(seconds: watchSeconds, interval: interval)
        figures.samples.append(WatchFigures.Sample(second: 0, heapBytes: try await page.heapAfterGC()))
        var at = Array(stride(from: interval, through: watchSeconds, by: interval))
        if at.last != watchSeconds { at.append(watchSeconds) }
        for second in at {
            try await Task.sleep(until: began + .seconds(second), clock: .continuous)
            let heap = try await page.heapAfterGC()
            let counters: WatchCounters = try await page.call("watchCounters", [], timeout: .seconds(30))
            figures.samples.append(WatchFigures.Sample(second: second, heapBytes: heap))
            progress(String(format: "  %4d s: JS heap %.2f MiB, %d frames decoded, %d decode errors, %d swipes",
                            second, heap / 1_048_576, counters.framesDecoded, counters.decodeErrors, counters.swipes), json: json)
        }
        figures.counters = try await page.call("stopWatch", [], timeout: .seconds(30))
        return figures
    }
}

/// A room as the page takes it: its channel and its host's uid.
struct BenchRoom: Codable, Sendable {
    let channel: String
    let uid: UInt32
}

/// What the page's `joins` returns.
struct PageJoins: Decodable {
    let paintMs: [Double]
    let decodedMs: [Double]
    let decodeErrors: Int
    let failures: [String]
}

/// What the page's `swipes` returns.
struct PageSwipes: Decodable {
    let paintMs: [Double]
    let actualMs: [Double]
    let decodeErrors: Int
    let framesDecoded: Int
    let failures: [String]
    let heldMax: Int
}

/// The page's watch counters.
struct WatchCounters: Decodable {
    let seconds: Double
    let framesDecoded: Int
    let decodeErrors: Int
    let swipes: Int
    let swipeFailures: Int
    let held: Int
    let errors: [String]
}

/// What a page function's promise came to: its value, or the error it was rejected with.
struct PageOutcome<Value: Decodable>: Decodable {
    let ok: Value?
    let error: String?
}

/// The bench page (`app/bench.html`) in a WebDriver session: its functions, each called with a
/// deadline, and its JS heap.
struct BenchPage {
    let session: WebDriverSession
    let address: String

    /// Loads the page and waits (at most 20 s) until it is ready.
    func open() async throws {
        struct Ready: Decodable {
            let ready: Bool
            let error: String?
        }
        try await session.navigate(to: address)
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let ready: Ready? = try await session.execute("return window.bench ? { ready: !!window.bench.ready, error: window.bench.error } : null;")
            if let error = ready?.error { throw WebDriverError(command: "open \(address)", code: "page failed", message: error) }
            if ready?.ready == true { return }
            guard ContinuousClock.now < deadline else {
                throw WebDriverError(command: "open \(address)", code: "timeout", message: "window.bench not ready within 20 s")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Calls `window.bench[function](...arguments)` and decodes what its promise resolves with.
    func call<Value: Decodable>(_ function: String, _ arguments: [JSONValue], timeout: Duration) async throws -> Value {
        let outcome: PageOutcome<Value> = try await session.executeAsync("""
            const done = arguments[arguments.length - 1];
            Promise.resolve().then(() => window.bench[arguments[0]](...arguments[1]))
              .then((ok) => done({ ok: ok ?? null }), (error) => done({ error: String((error && error.stack) || error) }));
            """, [.string(function), .array(arguments)], timeout: timeout)
        if let error = outcome.error { throw WebDriverError(command: "bench.\(function)", code: "page error", message: error) }
        guard let value = outcome.ok else { throw WebDriverError(command: "bench.\(function)", code: "page error", message: "no result") }
        return value
    }

    /// The page's used JS heap in bytes, after two forced garbage collections (what is left is
    /// what the page holds).
    func heapAfterGC() async throws -> Double {
        struct HeapUsage: Decodable { let usedSize: Double }
        let _: JSONValue = try await session.devTools("HeapProfiler.collectGarbage")
        let _: JSONValue = try await session.devTools("HeapProfiler.collectGarbage")
        return try await session.devTools("Runtime.getHeapUsage", as: HeapUsage.self).usedSize
    }
}

/// Latencies of one kind with their decode errors and failures.
struct LatencySet {
    var times: [Double] = []
    /// The SDK's own first-frame figure beside the painted one (the page's `first-frame-decoded`,
    /// the video loader's `actualMs`).
    var sdkTimes: [Double] = []
    var decodeErrors = 0
    var framesDecoded: Int?
    var failures: [String] = []
    var heldMax: Int?

    mutating func add(_ joins: PageJoins) {
        times += joins.paintMs
        sdkTimes += joins.decodedMs
        decodeErrors += joins.decodeErrors
        failures += joins.failures
    }

    init() {}

    init(_ swipes: PageSwipes) {
        times = swipes.paintMs
        sdkTimes = swipes.actualMs
        decodeErrors = swipes.decodeErrors
        framesDecoded = swipes.framesDecoded
        failures = swipes.failures
        heldMax = swipes.heldMax
    }

    var histogram: LatencyHistogram { LatencyHistogram(milliseconds: times) }
    var sdkHistogram: LatencyHistogram { LatencyHistogram(milliseconds: sdkTimes) }
}

/// The long watch's JS heap samples and final counters.
struct WatchFigures {
    struct Sample {
        let second: Int
        let heapBytes: Double
    }

    let seconds: Int
    let interval: Int
    var samples: [Sample] = []
    var counters: WatchCounters?

    init(seconds: Int, interval: Int) {
        self.seconds = seconds
        self.interval = interval
    }

    /// The warm-up: a fifth of the watch, at least one sample interval, at most 5 minutes.
    var warmUpSeconds: Int { min(max(seconds / 5, interval), 300) }
    var afterWarmUp: Sample? { samples.first { $0.second >= warmUpSeconds } }
    var atEnd: Sample? { samples.last }

    /// Heap growth from the warm-up to the end, in percent.
    var growthPercent: Double? {
        guard let start = afterWarmUp, let end = atEnd, start.heapBytes > 0, end.second > start.second else { return nil }
        return (end.heapBytes - start.heapBytes) * 100 / start.heapBytes
    }
}

/// The CPU one phase cost: the machine's, this process's (its synthetic Swift hosts and
/// audience), the cluster's `showroom-…` processes' and Chromium's.
struct PhaseCPU {
    let name: String
    let seconds: Double
    let spent: CPUSpent
    let chromium: Double?
}

/// Everything `showroom-bench web` measured.
struct WebFigures {
    var swift = LatencySet()
    var webFresh = LatencySet()
    var webOpen = LatencySet()
    var swipes = LatencySet()
    var watch: WatchFigures?
    var browserVersion = ""
    var phases: [PhaseCPU] = []

    /// Runs `body` as one phase and records its CPU (Chromium's: of the processes below `driver`
    /// that run at the phase's end).
    mutating func phase<T>(_ name: String, driver: ChromeDriverProcess?, _ body: () async throws -> T) async throws -> T {
        let before = CPUSpent.Snapshot.now()
        let browserBefore = driver?.browserCPU() ?? [:]
        let began = ContinuousClock.now
        let value = try await body()
        var spent = CPUSpent()
        spent.add(since: before)
        let chromium = driver.map { driver in
            driver.browserCPU().reduce(0.0) { sum, entry in sum + entry.value - (browserBefore[entry.key] ?? 0) }
        }
        phases.append(PhaseCPU(name: name, seconds: began.duration(to: .now).seconds, spent: spent, chromium: chromium))
        return value
    }

    /// The rows of the latency table: key, label, set.
    var rows: [(key: String, label: String, set: LatencySet, sdk: String)] {
        [("swift", "Swift SDK join → first decoded frame", swift, ""),
         ("web_fresh", "web join → first frame painted, fresh page", webFresh, "decoded: the SDK's first-frame-decoded"),
         ("web_open", "web join → first frame painted, open page", webOpen, "decoded: the SDK's first-frame-decoded"),
         ("swipe", "web swipe → first frame painted, prejoined", swipes, "decoded: the video loader's actualMs")]
    }

    func requireSamples() throws {
        for row in rows {
            try row.set.histogram.requireSamples(row.label, "all failed: \(row.set.failures.prefix(3).joined(separator: "; "))")
        }
    }

    /// "met" / "NOT MET" for a p99 against its goal, or why it is not judged.
    private func judge(_ set: LatencySet, _ goal: Double) -> (met: Bool?, text: String) {
        guard set.times.count >= WebBenchmark.Goal.samples else { return (nil, "not judged (\(set.times.count) < \(WebBenchmark.Goal.samples) samples)") }
        let met = set.histogram.percentileMs(0.99) <= goal
        return (met, met ? "met" : "NOT MET")
    }

    private var webDecodeErrors: Int { webFresh.decodeErrors + webOpen.decodeErrors + swipes.decodeErrors }

    func print(_ options: WebBenchmark) {
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        Swift.print("web: join and swipe → first frame in Chromium \(browserVersion) beside the Swift SDK, \(options.rooms) live rooms (Swift hosts, 320×240 VP8 at 15 fps, 2 s GOP)")
        Swift.print("                                                  count     p50     p95     p99     max  decode errors  failures")
        for row in rows {
            let h = row.set.histogram
            Swift.print(String(format: "  %@ %5d  %6.1f  %6.1f  %6.1f  %6.1f  %13d  %8d", row.label.padding(toLength: 46, withPad: " ", startingAt: 0),
                               h.count, h.percentileMs(0.5), h.percentileMs(0.95), h.percentileMs(0.99), h.maxMs, row.set.decodeErrors,
                               row.set.failures.count))
            if !row.sdk.isEmpty, row.set.sdkHistogram.count > 0 {
                let s = row.set.sdkHistogram
                Swift.print(String(format: "    %@ %5d  %6.1f  %6.1f  %6.1f  %6.1f", ("(" + row.sdk + ")").padding(toLength: 44, withPad: " ", startingAt: 0),
                                   s.count, s.percentileMs(0.5), s.percentileMs(0.95), s.percentileMs(0.99), s.maxMs))
            }
            for failure in Set(row.set.failures).sorted().prefix(3) { Swift.print("    failed: \(failure)") }
        }
        let fresh = judge(webFresh, WebBenchmark.Goal.firstFrameP99Ms), open = judge(webOpen, WebBenchmark.Goal.firstFrameP99Ms)
        let swipe = judge(swipes, WebBenchmark.Goal.swipeP99Ms)
        Swift.print(String(format: "  goals: web first frame p99 ≤ %.0f ms: fresh page %.1f ms %@, open page %.1f ms %@; prejoined swipe p99 ≤ %.0f ms: %.1f ms %@; 0 decode errors (web): %d %@",
                           WebBenchmark.Goal.firstFrameP99Ms, webFresh.histogram.percentileMs(0.99), fresh.text, webOpen.histogram.percentileMs(0.99),
                           open.text, WebBenchmark.Goal.swipeP99Ms, swipes.histogram.percentileMs(0.99), swipe.text, webDecodeErrors,
                           webDecodeErrors == 0 ? "met" : "NOT MET"))
        if let held = swipes.heldMax { Swift.print("  swipes: channels held at most \(held), \(swipes.framesDecoded ?? 0) frames decoded") }
        Swift.print(String(format: "  CPU by phase (%d cores; %% of the machine): this process = its Swift hosts encoding (+ the Swift audience decoding in its phase)", Int(cores)))
        for phase in phases {
            func share(_ seconds: Double) -> String { String(format: "%.1f s (%.0f%%)", seconds, seconds * 100 / max(phase.seconds * cores, 1e-9)) }
            let cluster = phase.spent.byExecutable.values.reduce(0, +)
            Swift.print(String(format: "    %@ %6.1f s: this process %@, Chromium %@, showroom-… processes %@, machine busy %@, stolen %.1f%%",
                               phase.name.padding(toLength: 22, withPad: " ", startingAt: 0), phase.seconds, share(phase.spent.ownSeconds),
                               phase.chromium.map(share) ?? "–", share(cluster),
                               phase.spent.busyPercent.map { String(format: "%.0f%%", $0) } ?? "not measured", phase.spent.stealPercent))
        }
        if let watch {
            let mib = { (bytes: Double?) in bytes.map { String(format: "%.2f MiB", $0 / 1_048_576) } ?? "not measured" }
            let growth = watch.growthPercent
            let errors = watch.counters?.decodeErrors ?? 0
            Swift.print(String(format: "  watch %d s%@: JS heap after warm-up (%d s) %@, at end %@, growth %@ (goal ≤ %.0f %%: %@); decode errors %d (goal 0: %@); frames decoded %d; swipes %d",
                               watch.seconds, options.watchSwipeSeconds > 0 ? String(format: " (a swipe every %d s)", options.watchSwipeSeconds) : "",
                               watch.warmUpSeconds, mib(watch.afterWarmUp?.heapBytes), mib(watch.atEnd?.heapBytes),
                               growth.map { String(format: "%+.1f %%", $0) } ?? "not measured", WebBenchmark.Goal.heapGrowthPercent,
                               growth.map { $0 <= WebBenchmark.Goal.heapGrowthPercent ? "met" : "NOT MET" } ?? "not judged",
                               errors, errors == 0 ? "met" : "NOT MET", watch.counters?.framesDecoded ?? 0, watch.counters?.swipes ?? 0))
            Swift.print("    JS heap every \(watch.interval) s (MiB): " + watch.samples.map { String(format: "%.2f", $0.heapBytes / 1_048_576) }.joined(separator: " "))
            for error in (watch.counters?.errors ?? []).prefix(3) { Swift.print("    error: \(error)") }
        }
    }

    func json(_ options: WebBenchmark) throws -> [String: Any] {
        var figures: [String: Any] = [
            "benchmark": "web", "rooms": options.rooms, "joins": options.joins, "swipes": options.swipes, "browser": browserVersion,
        ]
        for row in rows {
            let h = row.set.histogram
            figures["\(row.key)_first_frame_ms_p50"] = rounded(h.percentileMs(0.5))
            figures["\(row.key)_first_frame_ms_p95"] = rounded(h.percentileMs(0.95))
            figures["\(row.key)_first_frame_ms_p99"] = rounded(h.percentileMs(0.99))
            figures["\(row.key)_first_frame_ms_max"] = rounded(h.maxMs)
            figures["\(row.key)_count"] = h.count
            figures["\(row.key)_decode_errors"] = row.set.decodeErrors
            figures["\(row.key)_failures"] = row.set.failures.count
            if !row.sdk.isEmpty {
                figures["\(row.key)_sdk_first_frame_ms_p50"] = figure(row.set.sdkHistogram.percentileMsIfAny(0.5))
                figures["\(row.key)_sdk_first_frame_ms_p99"] = figure(row.set.sdkHistogram.percentileMsIfAny(0.99))
            }
        }
        figures["swipe_channels_held_max"] = nullable(swipes.heldMax)
        figures["goals"] = [
            "web_first_frame_p99_ms": WebBenchmark.Goal.firstFrameP99Ms, "swipe_p99_ms": WebBenchmark.Goal.swipeP99Ms,
            "heap_growth_percent": WebBenchmark.Goal.heapGrowthPercent,
            "web_fresh_first_frame_met": nullable(judge(webFresh, WebBenchmark.Goal.firstFrameP99Ms).met),
            "web_open_first_frame_met": nullable(judge(webOpen, WebBenchmark.Goal.firstFrameP99Ms).met),
            "swipe_met": nullable(judge(swipes, WebBenchmark.Goal.swipeP99Ms).met),
            "web_decode_errors_met": webDecodeErrors == 0,
            "watch_heap_met": nullable(watch?.growthPercent.map { $0 <= WebBenchmark.Goal.heapGrowthPercent }),
            "watch_decode_errors_met": nullable(watch.map { ($0.counters?.decodeErrors ?? 0) == 0 }),
        ] as [String: Any]
        figures["cpu"] = Dictionary(uniqueKeysWithValues: phases.map { phase in
            (phase.name, [
                "seconds": rounded(phase.seconds), "bench_cpu_s": rounded(phase.spent.ownSeconds, 2),
                "chromium_cpu_s": nullable(phase.chromium.map { rounded($0, 2) }),
                "cluster_cpu_s": phase.spent.byExecutable.mapValues { rounded($0, 2) },
                "machine_busy_percent": figure(phase.spent.busyPercent), "steal_percent": rounded(phase.spent.stealPercent),
            ] as [String: Any])
        })
        if let watch {
            figures["watch"] = [
                "seconds": watch.seconds, "swipe_every_s": options.watchSwipeSeconds, "warm_up_s": watch.warmUpSeconds,
                "heap_after_warm_up_mib": figure(watch.afterWarmUp.map { $0.heapBytes / 1_048_576 }, 3),
                "heap_at_end_mib": figure(watch.atEnd.map { $0.heapBytes / 1_048_576 }, 3),
                "heap_growth_percent": figure(watch.growthPercent, 2),
                "heap_samples_mib": watch.samples.map { rounded($0.heapBytes / 1_048_576, 3) },
                "decode_errors": nullable(watch.counters?.decodeErrors), "frames_decoded": nullable(watch.counters?.framesDecoded),
                "swipes": nullable(watch.counters?.swipes), "swipe_failures": nullable(watch.counters?.swipeFailures),
            ] as [String: Any]
        } else {
            figures["watch"] = NSNull()
        }
        return figures
    }
}

/// `value` for a JSON figure, or null when there is none.
private func nullable<T>(_ value: T?) -> Any { value.map { $0 as Any } ?? NSNull() }
