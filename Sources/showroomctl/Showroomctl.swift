import ArgumentParser

@main
struct Showroomctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroomctl",
        abstract: "Operate and measure a Showroom cluster.",
        subcommands: [StatusCommand.self, InfoCommand.self, TokenCommand.self, BenchCommand.self, AwaitMembersCommand.self])
}

/// `showroomctl bench ...`: benchmarks that print their figures.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a benchmark and print its figures.",
        subcommands: [ZMQFanoutBenchmark.self, MembershipBenchmark.self])
}
