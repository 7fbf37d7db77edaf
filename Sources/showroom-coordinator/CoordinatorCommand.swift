import ArgumentParser
import Coordinator
import NodeRuntime

@main
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-coordinator",
        abstract: "A Showroom room-coordinator: rooms, channel placement on edges, channel events, kick and ban.")

    @OptionGroup var options: NodeOptions

    func run() async throws {
        try await NodeMain.run(role: .coordinator, options: options) { configuration, logger in
            try CoordinatorRoleService(configuration: configuration, logger: logger)
        }
    }
}
