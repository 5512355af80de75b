import Foundation
import HealthModel
import HealthStore
import Testing

/// Everything one `watch --json` child printed, decoded.
struct WatchLog {
    var seqs: [Int] = []          // metadata "seq" of every added sample, in print order
    var deleted: [String] = []    // deleted UUIDs, in print order
    var anchors: [String] = []

    init(_ lines: [String]) {
        for line in lines {
            guard let o = jsonObject(line) else { continue }
            for s in (o["samples"] as? [[String: Any]]) ?? [] {
                if let m = s["metadata"] as? [String: Any], let n = m["seq"] as? NSNumber { seqs.append(n.intValue) }
            }
            deleted += (o["deleted"] as? [String]) ?? []
            if let a = o["anchor"] as? String { anchors.append(a) }
        }
    }
}

/// A heart-rate sample numbered `seq` (kept in its metadata, so the watcher's output can be checked).
func numbered(_ seq: Int) throws -> QuantitySample {
    try heartRate(60 + Double(seq % 60), at: Double(seq), metadata: Metadata(user: ["seq": .number(Double(seq))]))
}

/// Writes batches `range` (1–3 samples each, numbered consecutively from `next`) in one transaction per batch.
@discardableResult
func writeBatches(_ store: HealthStore, _ range: Range<Int>, next: inout Int) throws -> [UUID] {
    var uuids: [UUID] = []
    for b in range {
        let n = 1 + b % 3
        let batch = try (0..<n).map { _ in defer { next += 1 }; return try numbered(next) }
        try store.save(batch)
        uuids += batch.map(\.uuid)
    }
    return uuids
}

@Suite("Observers across processes: a real `healthgate watch --json` child and a writer in another process",
       .serialized)
struct ObserverTests {
    @Test("watcher started before the writer (and before the file exists): thousands of batches and deletions, writer restarted, each exactly once")
    func watcherFirst() throws {
        let db = TempDB()
        let watcher = try Child(["watch", "--json", "--type", "heartRate", "--db", db.path])
        #expect(watcher.waitForStderr("watching"), "watch did not start: \(watcher.stderr)")

        var next = 0
        var written: [UUID] = []
        var deleted: [UUID] = []
        do {
            let writer = try db.open()
            written += try writeBatches(writer, 0..<1500, next: &next)
            // Deletions and sync replacements interleaved with more batches.
            for k in stride(from: 0, to: 300, by: 10) {
                try writer.delete(uuids: [written[k]])
                deleted.append(written[k])
            }
            try writer.save([try steps(10, at: 0)])   // another type: must not appear
        }
        do {
            // The writer restarts: a new connection continues the stream.
            let writer = try db.open()
            written += try writeBatches(writer, 1500..<3000, next: &next)
        }
        let total = next
        let done = watcher.waitUntil(seconds: 180) { lines in
            let log = WatchLog(lines)
            return log.seqs.count >= total && log.deleted.count >= deleted.count
        }
        watcher.stop()
        let log = WatchLog(watcher.outputLines)
        #expect(done, "watch saw \(log.seqs.count) of \(total) samples, \(log.deleted.count) of \(deleted.count) deletions")
        #expect(log.seqs == Array(0..<total), "samples missed, duplicated or out of order")
        #expect(log.deleted == deleted.map { $0.uuidString.lowercased() })
    }

    @Test("watcher started while a writer is running: --from-start sees everything once; a plain watch sees a contiguous tail")
    func watcherAfterWriter() throws {
        let db = TempDB()
        var next = 0
        let store = try db.open()
        try writeBatches(store, 0..<300, next: &next)

        // Keep writing from a background thread while the watchers start.
        let first = next
        let progress = Progress()
        let path = db.path
        let writerThread = Thread {
            do {
                let w = try HealthStore(path: path)
                var n = first
                for b in 300..<2300 {
                    let batch = try (0..<(1 + b % 3)).map { _ in defer { n += 1 }; return try numbered(n) }
                    try w.save(batch)
                    progress.set(n)
                }
            } catch { progress.fail("\(error)") }
            progress.finish()
        }
        writerThread.start()
        while progress.value < first + 200 && !progress.finished { usleep(5_000) }

        let everything = try Child(["watch", "--json", "--from-start", "--db", db.path])
        let tail = try Child(["watch", "--json", "--db", db.path])
        #expect(tail.waitForStderr("watching"))
        while !progress.finished { usleep(20_000) }
        #expect(progress.error == nil, "\(progress.error ?? "")")
        let total = progress.value
        for child in [everything, tail] {
            child.waitUntil(seconds: 180) { WatchLog($0).seqs.last == total - 1 }
            child.stop()
        }
        let all = WatchLog(everything.outputLines).seqs
        #expect(all == Array(0..<total))
        let t = WatchLog(tail.outputLines).seqs
        #expect(!t.isEmpty && t.last == total - 1)
        if let f = t.first { #expect(t == Array(f..<total), "the tail has a gap or a duplicate") }
    }

    @Test("a watcher resumed with --anchor continues exactly after the last batch it printed")
    func resumeWithAnchor() throws {
        let db = TempDB()
        var next = 0
        let store = try db.open()
        let w1 = try Child(["watch", "--json", "--db", db.path])
        #expect(w1.waitForStderr("watching"))
        try writeBatches(store, 0..<50, next: &next)
        let firstTotal = next
        w1.waitUntil { WatchLog($0).seqs.count >= firstTotal }
        w1.stop()
        let log1 = WatchLog(w1.outputLines)
        #expect(log1.seqs == Array(0..<firstTotal))
        // Written while no watcher runs.
        try writeBatches(store, 50..<100, next: &next)
        let anchor = try #require(log1.anchors.last)
        let w2 = try Child(["watch", "--json", "--anchor", anchor, "--db", db.path])
        try writeBatches(store, 100..<150, next: &next)
        let total = next
        w2.waitUntil { WatchLog($0).seqs.last == total - 1 }
        w2.stop()
        #expect(WatchLog(w2.outputLines).seqs == Array(firstTotal..<total))
    }

    @Test("writers in other processes (two `healthgate import` runs) are seen by a watching child")
    func importWriterProcesses() throws {
        let db = TempDB()
        let watcher = try Child(["watch", "--json", "--type", "heartRate", "--db", db.path])
        #expect(watcher.waitForStderr("watching"))
        var seq = 0
        for run in 0..<2 {
            var text = ""
            for _ in 0..<200 {
                let o: [String: Any] = ["type": "heartRate", "value": 70, "unit": "count/min",
                                        "start": ISO8601.string(at(Double(seq))), "end": ISO8601.string(at(Double(seq))),
                                        "source": "Importer", "metadata": ["seq": 1000 + seq]]
                text += String(decoding: try JSONSerialization.data(withJSONObject: o), as: UTF8.self) + "\n"
                seq += 1
            }
            let file = db.dir.appendingPathComponent("run\(run).jsonl")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let r = try CLI.run(["import", "--jsonl", file.path, "--batch", "50", "--db", db.path])
            #expect(r.status == 0, "\(r.stderr)")
        }
        // (Numbered from 1000: the importer reads a bare 0 or 1 as a boolean on Linux.)
        let total = seq
        watcher.waitUntil { WatchLog($0).seqs.count >= total }
        watcher.stop()
        #expect(WatchLog(watcher.outputLines).seqs == Array(1000..<(1000 + total)))
    }

    @Test("benchmark (printed, not asserted): commit-to-observer latency across two connections")
    func latencyBenchmark() throws {
        let db = TempDB()
        let writer = try db.open()
        let path = db.path
        let seen = Progress()
        let times = TimeLog()
        // The observer runs its own loop on another thread with its own connection, as `watch` does.
        let observerThread = Thread {
            do {
                let observer = try ChangeObserver(path: path, types: [.heartRate], start: .beginning)
                observer.interval = .milliseconds(20)
                try observer.run(while: { !seen.finished }) { change in
                    let now = Date()
                    for s in change.samples {
                        if case .number(let n)? = s.metadata.user["seq"] { times.seen(Int(n), at: now) }
                    }
                    seen.set(seen.value + change.samples.count)
                }
            } catch { seen.fail("\(error)") }
        }
        observerThread.start()
        // Baseline measured in the same run: one anchored query that finds nothing.
        let anchor = try writer.currentAnchor()
        let q0 = Date()
        for _ in 0..<50 { _ = try writer.changes(types: [.heartRate], since: anchor) }
        let queryCost = Date().timeIntervalSince(q0) / 50 * 1000
        let n = 60
        for k in 0..<n {
            try writer.save([try numbered(k)])
            times.committed(k, at: Date())
            Thread.sleep(forTimeInterval: 0.007 * Double(k % 7))   // commits at varying phases of the poll
        }
        let deadline = Date().addingTimeInterval(60)
        while seen.value < n && Date() < deadline && seen.error == nil { usleep(10_000) }
        seen.finish()
        #expect(seen.error == nil, "\(seen.error ?? "")")
        let latencies = times.latencies().sorted()
        #expect(latencies.count == n)
        guard !latencies.isEmpty else { return }
        let median = latencies[latencies.count / 2], p95 = latencies[latencies.count * 95 / 100], worst = latencies.last!
        print(String(format: "change-feed latency, commit to observer (data_version polled every 20 ms): median %.1f ms, "
                     + "p95 %.1f ms, max %.1f ms over %d commits; baseline anchored query %.3f ms (median is %.0fx it)",
                     median, p95, worst, latencies.count, queryCost, median / max(queryCost, 0.001)))
    }
}

/// Commit and observation times per sequence number (benchmark only).
final class TimeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var commits: [Int: Date] = [:]
    private var sightings: [Int: Date] = [:]
    func committed(_ k: Int, at d: Date) { lock.lock(); commits[k] = d; lock.unlock() }
    func seen(_ k: Int, at d: Date) { lock.lock(); sightings[k] = d; lock.unlock() }
    /// Milliseconds from commit to sighting (negative values — seen before the writer took its
    /// timestamp — count as 0).
    func latencies() -> [Double] {
        lock.lock(); defer { lock.unlock() }
        return commits.compactMap { k, c in sightings[k].map { max(0, $0.timeIntervalSince(c) * 1000) } }
    }
}

/// Progress of the background writer thread.
final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    private var isDone = false
    private var message: String?
    func set(_ v: Int) { lock.lock(); n = v; lock.unlock() }
    func finish() { lock.lock(); isDone = true; lock.unlock() }
    func fail(_ m: String) { lock.lock(); message = m; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    var finished: Bool { lock.lock(); defer { lock.unlock() }; return isDone }
    var error: String? { lock.lock(); defer { lock.unlock() }; return message }
}
