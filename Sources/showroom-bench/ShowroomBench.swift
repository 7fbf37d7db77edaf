import ArgumentParser

/// `showroom-bench`: the benchmarks. Each prints its figures, as text or as one JSON object.
@main
struct ShowroomBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-bench",
        abstract: "Measure a Showroom cluster, or the pieces it is made of, and print the figures.",
        subcommands: [JoinBenchmark.self, FanoutBenchmark.self, ZMQFanoutBenchmark.self, MembershipBenchmark.self,
                      RoomsBenchmark.self, FailoverBenchmark.self, DrainBenchmark.self, CallsBenchmark.self, SwitchBenchmark.self, ForwardBenchmark.self,
                      PKBenchmark.self, ScaleBenchmark.self, EveningBenchmark.self, SimulateBenchmark.self, RelayScaleBenchmark.self, APIBenchmark.self, WebBenchmark.self,
                      RecordBenchmark.self])
}
