import AsyncHTTPClient
import Foundation
import NIOCore
import ShowroomTesting
import ZeroMQ

/// A JSON value: what crosses the WebDriver protocol untyped (script arguments, DevTools
/// parameters, answers read as they come).
enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// `value`'s JSON form.
    init(encoding value: some Encodable) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// What chromedriver (or the page) refused: the command, WebDriver's error code and its message.
struct WebDriverError: Error, CustomStringConvertible {
    let command: String
    let code: String
    let message: String

    var description: String { "WebDriver \(command): \(code): \(message.split(separator: "\n").first ?? "")" }
}

/// chromedriver as a child process on a port it picks (it says which), stopped by pid together
/// with every browser process it started.
final class ChromeDriverProcess: @unchecked Sendable {
    // @unchecked: `process` is only read after start (its pid, whether it runs); the signal
    // sources are behind `lock`.
    private let process: Process
    /// chromedriver's pid.
    let pid: Int32
    /// Where it listens on 127.0.0.1.
    let port: Int

    private init(process: Process, port: Int) {
        self.process = process
        self.pid = process.processIdentifier
        self.port = port
    }

    /// Starts `executable --port=0`, its output in `log`, and waits (at most 10 s) for the line
    /// naming its port.
    static func start(executable: String, log: URL) async throws -> ChromeDriverProcess {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw WebDriverError(command: "start", code: "no chromedriver", message: "\(executable) is not an executable (apt-get install chromium-driver, or give --chromedriver)")
        }
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port=0"]
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = process.standardOutput
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let line = said.split(separator: "\n").first(where: { $0.contains("started successfully on port") }),
               let port = Int(line.split(separator: " ").last?.trimmingCharacters(in: CharacterSet(charactersIn: ".\r ")) ?? "") {
                return ChromeDriverProcess(process: process, port: port)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let driver = ChromeDriverProcess(process: process, port: 0)
        await driver.stop()
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw WebDriverError(command: "start", code: "chromedriver not ready",
                             message: "no port announced within 10 s: " + said.split(separator: "\n").suffix(3).joined(separator: " | "))
    }

    /// Every process below chromedriver (the browser, its zygotes, renderers, GPU and utility processes).
    func descendants() -> [Int32] {
        var found: [Int32] = []
        var queue = [pid]
        while let parent = queue.popLast() {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(parent)/task")) ?? []
            for task in tasks {
                let text = (try? String(contentsOfFile: "/proc/\(parent)/task/\(task)/children", encoding: .utf8)) ?? ""
                for child in text.split(separator: " ").compactMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
                where !found.contains(child) {
                    found.append(child)
                    queue.append(child)
                }
            }
        }
        return found
    }

    /// CPU seconds so far of each process below chromedriver, by pid.
    func browserCPU() -> [Int32: Double] {
        var seconds: [Int32: Double] = [:]
        for pid in descendants() { seconds[pid] = CPUTime.process(pid) }
        return seconds
    }

    /// Until ``stop()``, SIGINT or SIGTERM to this process SIGKILLs chromedriver and what runs
    /// below it and removes `directory` (the browser's profile) before exiting: Chromium does not
    /// outlive an interrupted benchmark.
    func stopOnSignals(removing directory: URL) {
        let (driver, sources) = (pid, [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            return (number, DispatchSource.makeSignalSource(signal: number, queue: .global()))
        })
        for (number, source) in sources {
            source.setEventHandler { [self] in
                for pid in [driver] + descendants() { kill(pid, SIGKILL) }
                try? FileManager.default.removeItem(at: directory)
                exit(128 + number)
            }
            source.resume()
        }
        lock.withLock { signalSources = sources.map(\.1) }
    }

    private let lock = NSLock()
    private var signalSources: [any DispatchSourceSignal] = []

    /// SIGTERM to chromedriver and whatever runs below it, SIGKILL to what is left after 2 s.
    func stop() async {
        let sources = lock.withLock { () -> [any DispatchSourceSignal] in
            defer { signalSources = [] }
            return signalSources
        }
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        let browsers = descendants()
        for pid in [pid] + browsers where processIsAlive(pid) { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline, ([pid] + browsers).contains(where: processIsAlive) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        for pid in [pid] + browsers where processIsAlive(pid) { kill(pid, SIGKILL) }
    }
}

/// One W3C WebDriver session on chromedriver, over HTTP: navigation, scripts in the page, and
/// DevTools commands (chromedriver's `goog/cdp/execute`). Every call has a deadline.
struct WebDriverSession: Sendable {
    /// chromedriver's address.
    let endpoint: String
    /// The session's id.
    let id: String
    /// The browser's version, as the new session reported it.
    let browserVersion: String

    /// Chromium's options for a new session.
    struct ChromeOptions: Encodable, Sendable {
        var binary: String
        var args: [String]
    }

    /// Opens a session on chromedriver at `port` (Chromium starts; at most 60 s).
    static func start(port: Int, chrome: ChromeOptions) async throws -> WebDriverSession {
        struct Capabilities: Encodable {
            let browserName = "chrome"
            let chromeOptions: ChromeOptions
            enum CodingKeys: String, CodingKey {
                case browserName
                case chromeOptions = "goog:chromeOptions"
            }
        }
        struct NewSession: Encodable {
            struct Match: Encodable { let alwaysMatch: Capabilities }
            let capabilities: Match
        }
        struct Created: Decodable {
            struct Reported: Decodable { let browserVersion: String? }
            let sessionId: String
            let capabilities: Reported?
        }
        let endpoint = "http://127.0.0.1:\(port)"
        let created: Created = try await send(endpoint, "POST", "/session",
                                              NewSession(capabilities: .init(alwaysMatch: Capabilities(chromeOptions: chrome))),
                                              timeout: .seconds(60))
        return WebDriverSession(endpoint: endpoint, id: created.sessionId, browserVersion: created.capabilities?.browserVersion ?? "")
    }

    /// Loads `url` in the session's window (at most 30 s).
    func navigate(to url: String) async throws {
        struct Navigate: Encodable { let url: String }
        try await setTimeouts(["pageLoad": 30_000])
        let _: JSONValue = try await Self.send(endpoint, "POST", "/session/\(id)/url", Navigate(url: url), timeout: .seconds(35))
    }

    /// Runs `script` (a function body; `arguments` holds `arguments`) and decodes what it returns.
    func execute<Value: Decodable>(_ script: String, _ arguments: [JSONValue] = [], as type: Value.Type = Value.self) async throws -> Value {
        try await Self.send(endpoint, "POST", "/session/\(id)/execute/sync", Script(script: script, args: arguments), timeout: .seconds(30))
    }

    /// Runs `script` asynchronously: it ends by calling its last argument with its result, within
    /// `timeout`.
    func executeAsync<Value: Decodable>(_ script: String, _ arguments: [JSONValue] = [], timeout: Duration,
                                        as type: Value.Type = Value.self) async throws -> Value {
        try await setTimeouts(["script": Int(timeout.seconds * 1000)])
        return try await Self.send(endpoint, "POST", "/session/\(id)/execute/async", Script(script: script, args: arguments),
                                   timeout: timeout + .seconds(5))
    }

    /// A DevTools command on the session's page (`HeapProfiler.collectGarbage`,
    /// `Runtime.getHeapUsage` …) and its answer.
    func devTools<Value: Decodable>(_ command: String, _ parameters: [String: JSONValue] = [:],
                                    as type: Value.Type = Value.self) async throws -> Value {
        try await Self.send(endpoint, "POST", "/session/\(id)/goog/cdp/execute", DevToolsCommand(cmd: command, params: parameters),
                                   timeout: .seconds(30))
    }

    /// Ends the session (Chromium quits); errors are ignored, the caller stops chromedriver by pid after.
    func quit() async {
        let _: JSONValue? = try? await Self.send(endpoint, "DELETE", "/session/\(id)", JSONValue?.none, timeout: .seconds(10))
    }

    private struct Script: Encodable {
        let script: String
        let args: [JSONValue]
    }

    private struct DevToolsCommand: Encodable {
        let cmd: String
        let params: [String: JSONValue]
    }

    /// A command's answer: its `value`.
    private struct Answer<Value: Decodable>: Decodable { let value: Value }

    /// An error answer's `value`.
    private struct Refusal: Decodable {
        let error: String
        let message: String?
    }

    private func setTimeouts(_ milliseconds: [String: Int]) async throws {
        let _: JSONValue = try await Self.send(endpoint, "POST", "/session/\(id)/timeouts", milliseconds, timeout: .seconds(10))
    }

    /// One command: `body` as JSON, the answer's `value` decoded, an error answer thrown.
    private static func send<Body: Encodable, Value: Decodable>(_ endpoint: String, _ method: String, _ path: String, _ body: Body?,
                                                                timeout: Duration) async throws -> Value {
        var request = HTTPClientRequest(url: endpoint + path)
        request.method = method == "DELETE" ? .DELETE : .POST
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(timeout.seconds * 1000)))
        let data = Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
        if response.status.code >= 300 {
            let refusal = try? JSONDecoder().decode(Answer<Refusal>.self, from: data).value
            throw WebDriverError(command: "\(method) \(path)", code: refusal?.error ?? "HTTP \(response.status.code)",
                                 message: refusal?.message ?? String(decoding: data.prefix(300), as: UTF8.self))
        }
        do {
            return try JSONDecoder().decode(Answer<Value>.self, from: data).value
        } catch {
            throw WebDriverError(command: "\(method) \(path)", code: "unexpected answer",
                                 message: "\(error): " + String(decoding: data.prefix(300), as: UTF8.self))
        }
    }
}
