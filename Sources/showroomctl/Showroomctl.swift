import ArgumentParser

@main
struct Showroomctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroomctl",
        abstract: "Operate a Showroom cluster (the benchmarks are showroom-bench).",
        subcommands: [StatusCommand.self, InfoCommand.self, TokenCommand.self, ClientCommand.self, CallCommand.self, CalleeCommand.self, PresenceCommand.self, RoomsCommand.self, PKCommand.self, CoHostCommand.self, KickCommand.self, EventsCommand.self, AwaitMembersCommand.self, KeysCommand.self, WebCommand.self])
}
