import ArgumentParser
import CallSignal
import NodeRuntime

@main
struct CallSignalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-callsignal",
        abstract: "A Showroom call-signal node: presence and 1v1 call routing.")

    @OptionGroup var options: NodeOptions

    func run() async throws {
        try await NodeMain.run(role: .callsignal, options: options) { configuration, logger in
            CallSignalRoleService(configuration: configuration, logger: logger)
        }
    }
}
