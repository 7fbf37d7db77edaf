import ArgumentParser
import OperatorTools

/// What an SDK benchmark is pointed at: the cluster's seeds and the app's credentials (the
/// tokens a business server would mint come from them), and how it prints its figures.
struct BenchTarget: ParsableArguments {
    @Option(name: .customLong("seed"), help: "A cluster member (repeatable; its cluster endpoint needs SHOWROOM_KEYRING).")
    var seeds: [String] = []

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        _ = try app.resolved()  // a missing credential stops the benchmark before it starts anything
    }
}

/// A benchmark with a ``BenchTarget``: its seeds, output form and credentials read as its own.
protocol TargetedBenchmark {
    var target: BenchTarget { get }
}

extension TargetedBenchmark {
    var seeds: [String] { target.seeds }
    var json: Bool { target.json }
    var app: AppCredentials { target.app }
}
