import CoreMetrics
import Prometheus
import Synchronization

/// Who the process is, as reported by `showroom_build_info{version=…,role=…,node=…} 1`.
public struct BuildInfo: Sendable, Equatable {
    /// The software version (the node passes `ShowroomVersion.current`).
    public var version: String
    /// The process's role (`edge`, `coordinator`, `callsignal`, ...).
    public var role: String
    /// The node id, unique in the cluster.
    public var nodeID: String

    /// An identity; the values become label values as they are (the registry escapes them).
    public init(version: String, role: String, nodeID: String) {
        self.version = version
        self.role = role
        self.nodeID = nodeID
    }
}

/// A process's metrics: one Prometheus registry that swift-metrics reports into, the
/// `showroom_build_info` gauge, and process metrics (uptime, CPU, memory, threads, open files)
/// refreshed on every scrape, so they are exact when read and cost nothing between scrapes.
///
/// Call ``bootstrap(build:)`` once early in `main`; metrics created afterwards with
/// swift-metrics (`Counter(label:)`, `Gauge`, `Timer`, `Recorder`, `Meter`) land in ``registry``
/// under a `showroom_` name: the label `edge.rooms-open` becomes `showroom_edge_rooms_open`
/// (see ``metricName(forLabel:)``). Timers are histograms in seconds, so name them `…_seconds`.
///
/// The registry refuses (by crashing) one name used for two metric types, or used both with and
/// without dimensions: keep each label to one kind and one set of dimension names.
public final class MetricsSetup: Sendable {
    /// Prefix of every metric name this process exports.
    public static let metricPrefix = "showroom_"

    /// The registry ``exposition()`` renders.
    public let registry: PrometheusCollectorRegistry
    /// The identity reported in `showroom_build_info`.
    public let build: BuildInfo
    private let process: ProcessMetrics

    private static let shared = Mutex<MetricsSetup?>(nil)

    /// A setup with its own, new registry, not connected to swift-metrics: for a second admin
    /// endpoint in one process, or tests. Register metrics on ``registry`` directly, or through
    /// `makeFactory(registry:)` passed to the swift-metrics initialisers taking a `factory`.
    public convenience init(build: BuildInfo) {
        self.init(build: build, registry: PrometheusCollectorRegistry())
    }

    // Internal: two setups on one registry would both add to the CPU counter.
    init(build: BuildInfo, registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.build = build
        self.process = ProcessMetrics(registry: registry, prefix: Self.metricPrefix)
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                metricName: Self.metricPrefix + "build", unitName: "info",
                helpText: "Always 1; the labels say which build, role and node this process is."),
            labels: [("version", build.version), ("role", build.role), ("node", build.nodeID)]
        ).set(to: 1)
        process.update()
    }

    /// Makes the process's setup and points swift-metrics at its registry, once per process.
    ///
    /// `MetricsSystem.bootstrap` may run only once per process, so this is idempotent: the first
    /// call wins and every later call returns the same setup (its `build` argument is ignored).
    /// If swift-metrics was already bootstrapped by someone else with a `PrometheusMetricsFactory`,
    /// that factory's registry is adopted; with any other factory swift-metrics is left alone and
    /// only this module's own metrics reach the registry.
    @discardableResult
    public static func bootstrap(build: BuildInfo) -> MetricsSetup {
        shared.withLock { current in
            if let current { return current }
            let registry: PrometheusCollectorRegistry
            let existing = MetricsSystem.factory
            if let prometheus = existing as? PrometheusMetricsFactory {
                registry = prometheus.registry
            } else {
                registry = PrometheusCollectorRegistry()
                if existing is NOOPMetricsHandler {
                    MetricsSystem.bootstrap(makeFactory(registry: registry))
                }
            }
            let setup = MetricsSetup(build: build, registry: registry)
            current = setup
            return setup
        }
    }

    /// The setup ``bootstrap(build:)`` made, if it ran.
    public static var bootstrapped: MetricsSetup? {
        shared.withLock { $0 }
    }

    /// A swift-metrics factory over `registry` that names metrics with ``metricName(forLabel:)``.
    public static func makeFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { label, dimensions in (metricName(forLabel: label), dimensions) }
        return factory
    }

    /// The Prometheus name for a swift-metrics label: characters outside `[A-Za-z0-9_:]` become
    /// `_`, and ``metricPrefix`` is added unless already there (`showroom.x` → `showroom_x`).
    public static func metricName(forLabel label: String) -> String {
        var name = String(String.UnicodeScalarView(label.unicodeScalars.map { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", ":": return scalar
            default: return "_"
            }
        }))
        if !name.hasPrefix(metricPrefix) { name = metricPrefix + name }
        return name
    }

    /// Refreshes the process metrics and renders every metric of ``registry`` in the Prometheus
    /// text exposition format (version 0.0.4).
    public func exposition() -> [UInt8] {
        process.update()
        return registry.emitToBuffer()
    }
}
