import ArgumentParser
import EdgeServer
import NodeRuntime
import ShowroomWire

@main
struct EdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-edge",
        abstract: "A Showroom edge: hosts channels and fans media out to their subscribers.")

    @OptionGroup var options: NodeOptions
    @OptionGroup var edge: EdgeOptions

    func run() async throws {
        let edge = self.edge
        try await NodeMain.run(role: .edge, options: options, roleFileKeys: EdgeRecordingSettings.fileKeys) {
            configuration, file, logger in
            try EdgeRoleService(configuration: configuration, recording: try edge.recording(file: file), logger: logger)
        }
    }
}

/// The flags only an edge takes. Flags win over the configuration file.
struct EdgeOptions: ParsableArguments, Sendable {
    @Option(help: "Directory the edge writes recordings to (<dir>/<channel>/<uid>/<start ms>-<n>.webm; default showroom-recordings).")
    var recordingDir: String?

    @Option(help: "Length of a recording's segments in seconds, when its order sets none (60-86400, default 1800).")
    var recordingSegmentSeconds: Int?

    /// The recording settings: defaults, then `file`, then these flags.
    func recording(file: ConfigurationFile?) throws(ShowroomError) -> EdgeRecordingSettings {
        var settings = EdgeRecordingSettings()
        if let file {
            if let v = try file.value("recordingDirectory", as: String.self) { settings.directory = v }
            if let v = try file.value("recordingSegmentSeconds", as: Int.self) { settings.segmentSeconds = v }
            if let v = try file.value("recordingQueueBytes", as: Int.self) { settings.maxQueuedBytes = v }
        }
        if let recordingDir { settings.directory = recordingDir }
        if let recordingSegmentSeconds { settings.segmentSeconds = recordingSegmentSeconds }
        try settings.validate()
        return settings
    }
}
