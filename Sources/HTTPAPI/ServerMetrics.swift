import Foundation
import Synchronization
import Prometheus

/// What `serve` can honestly report at `/metrics` (Prometheus text format, swift-prometheus):
/// its own requests, responses by status class, failed authentications, samples it saved or
/// deleted, request latency, and the store file's size read at scrape time. Pipeline figures
/// (ring depth, commit latency, devices) belong to `run`, which `serve` is not.
package final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let requests: Counter
    let authFailures: Counter
    let samplesSaved: Counter
    let samplesDeleted: Counter
    let latency: DurationHistogram
    let storeBytes: Gauge
    let walBytes: Gauge
    let started: Gauge
    let liveClients: Gauge
    let liveOverflows: Gauge
    private let byClass: [Counter]

    package init() {
        func name(_ n: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "healthgate", subsystem: "http", metricName: n, unitName: unit, helpText: help)
        }
        let registry = self.registry
        requests = registry.makeCounter(descriptor: name("requests", "total", "Requests answered, any status."))
        byClass = (1...5).map { c in
            registry.makeCounter(descriptor: name("responses", "total", "Responses by status class."), labels: [("class", "\(c)xx")])
        }
        authFailures = registry.makeCounter(descriptor: name("auth_failures", "total", "Requests refused for a missing or invalid token (401)."))
        samplesSaved = registry.makeCounter(descriptor: name("samples_saved", "total", "Samples stored by POST /v1/samples (new or replacing)."))
        samplesDeleted = registry.makeCounter(descriptor: name("samples_deleted", "total", "Samples deleted by DELETE /v1/samples/{uuid}."))
        latency = registry.makeDurationHistogram(
            descriptor: name("request_duration", "seconds", "Time from a request's head to its response."),
            buckets: [.milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500),
                      .seconds(2), .seconds(10)])
        storeBytes = registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "healthgate", subsystem: "store", metricName: "file_size", unitName: "bytes", helpText: "Size of the store's SQLite file."))
        walBytes = registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "healthgate", subsystem: "store", metricName: "wal_size", unitName: "bytes", helpText: "Size of the store's write-ahead log (-wal)."))
        started = registry.makeGauge(descriptor: name("start_time", "seconds", "When this server started (Unix time)."))
        started.set(to: Date().timeIntervalSince1970)
        liveClients = registry.makeGauge(descriptor: name("live_clients", "", "Clients connected to /v1/live."))
        liveOverflows = registry.makeGauge(descriptor: name("live_overflows", "total",
            "/v1/live streams closed because their client did not read fast enough (it resumes with Last-Event-ID)."))
    }

    /// Counts one response.
    func answered(status: Int, after duration: Duration) {
        requests.increment()
        if (100..<600).contains(status) { byClass[status / 100 - 1].increment() }
        latency.record(duration)
    }

    /// The text of a scrape, after reading the store's file sizes.
    func scrape(storePath: String, live: LiveFeed) -> String {
        func size(_ p: String) -> Double {
            ((try? FileManager.default.attributesOfItem(atPath: p))?[.size] as? NSNumber)?.doubleValue ?? 0
        }
        storeBytes.set(to: size(storePath))
        walBytes.set(to: size(storePath + "-wal"))
        liveClients.set(to: Double(live.clientCount))
        liveOverflows.set(to: Double(live.overflows.load(ordering: .relaxed)))
        return registry.emitToString()
    }
}
