import ArgumentParser
import NodeRuntime

@main
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-coordinator",
        abstract: "A Showroom room-coordinator: rooms, channel placement on edges, PK and co-host.")

    @OptionGroup var options: NodeOptions

    func run() async throws {
        try await NodeMain.run(role: .coordinator, options: options)
    }
}
