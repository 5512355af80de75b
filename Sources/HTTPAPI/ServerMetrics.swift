import Foundation
import Ingest
import Synchronization
import Prometheus
import Locking
import Platform

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
    let liveOverflows: Counter
    let commitLatencyHistogram: DurationHistogram
    private let byClass: [Counter]
    private let scrapeState = Lock(ScrapeState())

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
        commitLatencyHistogram = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(namespace: "healthgate", subsystem: "ingest", metricName: "commit_latency", unitName: "seconds",
                                             helpText: "From a committed batch's last sample to its commit (run only)."),
            buckets: [.milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                      .seconds(1), .seconds(5)])
        liveClients = registry.makeGauge(descriptor: name("live_clients", "", "Clients connected to /v1/live."))
        liveOverflows = registry.makeCounter(descriptor: name("live_overflows", "total",
            "/v1/live streams closed because their client did not read fast enough (it resumes with Last-Event-ID)."))
    }

    /// Counts one response.
    func answered(status: Int, after duration: Duration) {
        requests.increment()
        if (100..<600).contains(status) { byClass[status / 100 - 1].increment() }
        latency.record(duration)
    }

    /// Records how long a committed batch's last sample waited for its commit (`run`'s commit tap).
    package func commitLatency(seconds: Double) {
        commitLatencyHistogram.record(.nanoseconds(Int64(max(0, seconds) * 1e9)))
    }

    /// The text of a scrape, after reading the store's file sizes (and `run`'s figures).
    func scrape(storePath: String, live: LiveFeed, status: (any DaemonStatus)? = nil, uplinks: [UplinkLag] = []) -> String {
        if let status { record(status, uplinks: uplinks) }
        func size(_ p: String) -> Double {
            ((try? FileManager.default.attributesOfItem(atPath: p))?[.size] as? NSNumber)?.doubleValue ?? 0
        }
        storeBytes.set(to: size(storePath))
        walBytes.set(to: size(storePath + "-wal"))
        liveClients.set(to: Double(live.clientCount))
        let overflows = UInt64(max(0, live.overflows.load(ordering: .relaxed)))
        scrapeState.withLock { state in
            let before = state.counted["live_overflows"] ?? 0
            if overflows > before { liveOverflows.increment(by: Int64(overflows - before)) }
            state.counted["live_overflows"] = max(overflows, before)
        }
        return registry.emitToString()
    }

    /// `run`'s figures, read at scrape time: the pipeline's counters as counters (each moved on
    /// by what it grew since the last scrape, so they stay monotonic), its depths as gauges, and
    /// per device `connected`, `battery_percent` (only while connected: a battery level read
    /// before a disconnect is not a current one), `rssi_dbm` (while connected, over Bluetooth)
    /// and `last_sample_age_seconds`. A device's series
    /// that no longer applies is removed, not left at its last value.
    private func record(_ status: any DaemonStatus, uplinks: [UplinkLag]) {
        let p = status.pipeline()
        let now = Date()
        scrapeState.withLock { state in
            func counter(_ n: String, _ help: String, _ v: UInt64, subsystem: String = "ingest") {
                let c = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "healthgate", subsystem: subsystem, metricName: n,
                                                                               unitName: "total", helpText: help))
                let key = subsystem + "_" + n
                let before = state.counted[key] ?? 0
                if v > before { c.increment(by: Int64(v - before)) }
                state.counted[key] = max(v, before)
            }
            counter("pushed", "Samples pushed by all sources.", p.pushed)
            counter("committed", "Samples committed to the store.", p.committed)
            counter("spilled", "Samples that went through an overflow list (not lost).", p.spilled)
            counter("dropped", "Samples dropped because a ring and its overflow list were full.", p.dropped)
            counter("rejected", "Samples refused as implausible.", p.rejected)
            counter("failed_writes", "Failed commit attempts (each retried).", p.failedWrites)
            counter("batches", "Transactions committed.", p.batches)
            func gauge(_ n: String, _ help: String, _ v: UInt64) {
                registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "healthgate", subsystem: "ingest", metricName: n, unitName: "", helpText: help))
                    .set(to: Double(v))
            }
            let clock = ClockSteps.system
            counter("steps", "Times the system's wall clock was set while run ran (NTP's first sync on a Pi without an RTC, date -s).",
                    UInt64(clock.count), subsystem: "clock")
            if let last = clock.last {
                registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "healthgate", subsystem: "clock", metricName: "last_step",
                    unitName: "seconds", helpText: "How far the last step moved the wall clock (positive: forward)."))
                    .set(to: last.seconds)
            }
            gauge("ring_depth", "Samples waiting in rings and overflow lists.", p.pending)
            gauge("held", "Samples the writer holds in its batch or backlog.", p.held)

            var wanted: [String: Gauge] = [:]
            for d in status.devices() {
                let labels = [("device", d.localIdentifier), ("name", d.name), ("kind", d.kind)]
                func device(_ n: String, _ unit: String, _ help: String, _ v: Double) {
                    let g = registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "healthgate", subsystem: "device", metricName: n,
                                                                                unitName: unit, helpText: help), labels: labels)
                    g.set(to: v)
                    wanted[([n] + labels.map(\.1)).joined(separator: "\u{0}")] = g
                }
                if let c = d.connected { device("connected", "", "1 while the device is connected.", c ? 1 : 0) }
                if let b = d.battery, d.connected != false { device("battery", "percent", "Battery level, while connected.", Double(b)) }
                if let r = d.rssi, d.connected == true { device("rssi", "dbm", "The link's received signal strength as the controller measures it, while connected.", Double(r)) }
                if let t = d.lastSample { device("last_sample_age", "seconds", "Seconds since its last committed sample ended.", now.timeIntervalSince(t)) }
            }
            for u in uplinks {
                let labels = [("gateway", u.gateway), ("server", u.server)]
                func uplink(_ n: String, _ unit: String, _ help: String, _ v: Double) {
                    let g = registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "healthgate", subsystem: "uplink", metricName: n,
                                                                                unitName: unit, helpText: help), labels: labels)
                    g.set(to: v)
                    wanted[([n] + labels.map(\.1)).joined(separator: "\u{0}")] = g
                }
                uplink("behind", "changes", "Changes committed locally that the server has not committed yet.", Double(u.behind))
                if let s = u.secondsBehind { uplink("behind", "seconds", "Seconds since the uplink was last caught up.", s) }
                uplink("failing", "", "1 while the uplink's last push failed.", u.failing ? 1 : 0)
            }
            for (key, g) in state.deviceGauges where wanted[key] == nil { registry.unregisterGauge(g) }
            state.deviceGauges = wanted
        }
    }

    /// What ``record(_:)`` remembers between scrapes.
    private struct ScrapeState {
        /// Each pipeline counter's value at the last scrape.
        var counted: [String: UInt64] = [:]
        /// The per-device and per-uplink gauges the last scrape set, by name and labels.
        var deviceGauges: [String: Gauge] = [:]
    }
}
