import ArgumentParser
import EdgeServer
import NodeRuntime

@main
struct EdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-edge",
        abstract: "A Showroom edge: hosts channels and fans media out to their subscribers.")

    @OptionGroup var options: NodeOptions

    func run() async throws {
        try await NodeMain.run(role: .edge, options: options) { configuration, logger in
            try EdgeRoleService(configuration: configuration, logger: logger)
        }
    }
}
