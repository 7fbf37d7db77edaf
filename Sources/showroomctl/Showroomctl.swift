import ArgumentParser

@main
struct Showroomctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroomctl",
        abstract: "Operate and measure a Showroom cluster.",
        subcommands: [StatusCommand.self, InfoCommand.self, TokenCommand.self, ClientCommand.self, RoomsCommand.self, KickCommand.self, EventsCommand.self, BenchCommand.self, AwaitMembersCommand.self, KeysCommand.self])
}

/// `showroomctl bench ...`: benchmarks that print their figures.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a benchmark and print its figures.",
        subcommands: [JoinBenchmark.self, FanoutBenchmark.self, ZMQFanoutBenchmark.self, MembershipBenchmark.self, RoomsBenchmark.self, FailoverBenchmark.self])
}
