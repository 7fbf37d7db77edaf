import Foundation
import MediaCodecs
import Recording
import XCTest

/// A test case with a fresh directory of its own, removed after each test.
class RecordingDirectoryTestCase: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("recording-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` while no file of this process may grow past `bytes`, as a full disk would stop it
/// (File too large instead of No space left on device); the signal that limit raises is ignored,
/// so the write fails.
func withFileSizeLimit<T>(_ bytes: UInt, _ body: () throws -> T) rethrows -> T {
    var unlimited = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &unlimited)
    var limited = unlimited
    limited.rlim_cur = rlim_t(bytes)
    let handler = signal(SIGXFSZ, SIG_IGN)
    setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limited)
    defer {
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &unlimited)
        signal(SIGXFSZ, handler)
    }
    return try body()
}

/// One encoded frame as an edge would hand it to a recorder.
struct TestFrame: Sendable {
    var track: RecordedTrack
    var payload: [UInt8]
    var timestampMs: Int64
    var keyframe: Bool
}

/// Synthetic media with the project's own encoders: 320×240 VP8 at 15 fps from the test pattern,
/// 20 ms Opus packets of a 440 Hz tone, stamped as a publisher would (ms on its own clock, which is
/// nowhere near 0), in timestamp order.
enum TestMedia {
    static let framesPerSecond = 15
    static let clockStartMs: Int64 = 7_000_000

    /// Three seconds, a keyframe every 2 s.
    static func threeSeconds() throws -> [TestFrame] { try make(seconds: 3, keyframeInterval: 30) }

    static func make(seconds: Int, keyframeInterval: Int) throws -> [TestFrame] {
        let encoder = try VideoEncoder(configuration: .init(
            codec: .vp8, width: 320, height: 240, framesPerSecond: framesPerSecond, targetBitrateKbps: 300,
            keyframeInterval: keyframeInterval))
        var pattern = TestPatternSource(width: 320, height: 240)
        var frames: [TestFrame] = []
        for index in 0..<(seconds * framesPerSecond) {
            let timestamp = clockStartMs + Int64(index * 1000 / framesPerSecond)
            for encoded in try encoder.encode(pattern.nextFrame()) {
                frames.append(TestFrame(track: .video, payload: encoded.data, timestampMs: timestamp, keyframe: encoded.isKeyframe))
            }
        }
        let opus = try OpusEncoder(channels: 1, application: .audio, bitrate: 32_000)
        var tone = ToneSource(frequency: 440, amplitude: 0.5)
        for index in 0..<(seconds * 1000 / AudioFormat.frameDurationMilliseconds) {
            let timestamp = clockStartMs + Int64(index * AudioFormat.frameDurationMilliseconds)
            frames.append(TestFrame(track: .audio, payload: try opus.encode(tone.nextFrame()), timestampMs: timestamp, keyframe: true))
        }
        // Stable: on a tie the video frame goes first, as it was captured first.
        return frames.enumerated().sorted { ($0.element.timestampMs, $0.offset) < ($1.element.timestampMs, $1.offset) }.map(\.element)
    }
}

extension WebMWriter {
    /// Writes a test frame to its track.
    func write(_ frame: TestFrame) throws {
        try frame.payload.withUnsafeBytes { payload in
            switch frame.track {
            case .video: try write(video: payload, timestampMs: frame.timestampMs, keyframe: frame.keyframe)
            case .audio: try write(audio: payload, timestampMs: frame.timestampMs)
            }
        }
    }
}

/// What ffprobe read from a file.
struct Probe: Decodable {
    struct Format: Decodable {
        var duration: String?
    }
    struct Stream: Decodable {
        var index: Int
        var codec_name: String?
        var codec_type: String?
    }
    struct Packet: Decodable {
        var stream_index: Int
        var pts_time: String?
        var flags: String?
    }

    var format: Format?
    var streams: [Stream]?
    var packets: [Packet]?

    /// The format's duration in seconds; nil when the file does not say (a file cut off before
    /// its end was written).
    var duration: Double? { format?.duration.flatMap(Double.init) }

    func codec(_ type: String) -> String? { streams?.first { $0.codec_type == type }?.codec_name }

    /// The packet times of a stream, in seconds, in file order.
    func packetTimes(_ type: String) -> [Double] {
        guard let index = streams?.first(where: { $0.codec_type == type })?.index else { return [] }
        return (packets ?? []).filter { $0.stream_index == index }.compactMap { $0.pts_time.flatMap(Double.init) }
    }

    /// The flags of a stream's packets ("K__" for a keyframe), in file order.
    func packetFlags(_ type: String) -> [String] {
        guard let index = streams?.first(where: { $0.codec_type == type })?.index else { return [] }
        return (packets ?? []).filter { $0.stream_index == index }.map { $0.flags ?? "" }
    }
}

/// ffprobe and ffmpeg (Debian's ffmpeg package), and the few system tools the tests need (mount),
/// each run with a deadline.
enum FFmpegTools {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    enum Failure: Error, CustomStringConvertible {
        case missing(String)
        case deadline(String, seconds: Double)
        case failed(String, Run)

        var description: String {
            switch self {
            case .missing(let tool): "\(tool) is not installed (Debian: apt-get install ffmpeg)"
            case .deadline(let tool, let seconds): "\(tool) did not finish within \(seconds) s"
            case .failed(let tool, let run): "\(tool) exited with \(run.status): \(run.errors)"
            }
        }
    }

    /// Runs a tool and returns its status, standard output and standard error; it is killed when it
    /// outlives the deadline.
    static func run(_ tool: String, _ arguments: [String], deadline: Double = 30) throws -> Run {
        guard let executable = ["/usr/bin/\(tool)", "/usr/local/bin/\(tool)", "/bin/\(tool)"].first(where: FileManager.default.isExecutableFile) else {
            throw Failure.missing(tool)
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("recording-\(tool)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        guard FileManager.default.createFile(atPath: outURL.path, contents: nil),
              FileManager.default.createFile(atPath: errURL.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let end = Date().addingTimeInterval(deadline)
        while process.isRunning, Date() < end { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Failure.deadline(tool, seconds: deadline)
        }
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            output: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// The file's duration, streams and packets as ffprobe reads them.
    static func probe(_ path: String) throws -> Probe {
        let run = try run("ffprobe", [
            "-v", "error", "-of", "json",
            "-show_entries", "format=duration:stream=index,codec_name,codec_type:packet=stream_index,pts_time,flags",
            path,
        ])
        guard run.status == 0 else { throw Failure.failed("ffprobe", run) }
        return try JSONDecoder().decode(Probe.self, from: Data(run.output.utf8))
    }

    /// Decodes every frame of the file with ffmpeg and returns what it printed (nothing when every
    /// frame decoded).
    static func decodeErrors(_ path: String) throws -> String {
        let run = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        let printed = (run.output + run.errors).trimmingCharacters(in: .whitespacesAndNewlines)
        return run.status == 0 ? printed : "exit status \(run.status): \(printed)"
    }
}
