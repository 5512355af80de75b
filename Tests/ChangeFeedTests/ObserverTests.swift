import Foundation
import HealthGateTesting
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

/// Writes batches `range` (1–3 samples each, numbered consecutively from `next`), one
/// transaction per batch, on a plain thread (thousands of commits must not hold a pool thread).
/// Returns the UUIDs written and the next number.
func writeBatches(_ store: HealthStore, _ range: Range<Int>, from next: Int) async throws -> (uuids: [UUID], next: Int) {
    try await offThread {
        var n = next
        var uuids: [UUID] = []
        for b in range {
            let batch = try (0..<(1 + b % 3)).map { _ in defer { n += 1 }; return try numbered(n) }
            try store.save(batch)
            uuids += batch.map(\.uuid)
        }
        return (uuids, n)
    }
}

@Suite("Observers across processes: a real `healthgate watch --json` child and a writer in another process",
       .serialized)
struct ObserverTests {
    @Test("watcher started before the writer (and before the file exists): thousands of batches and deletions, writer restarted, each exactly once")
    func watcherFirst() async throws {
        let db = TempDB()
        let watcher = try Child(["watch", "--json", "--type", "heartRate", "--db", db.path])
        #expect(await watcher.waitForStderr("watching"), "watch did not start: \(watcher.stderr)")

        let path = db.path
        let first = try await writeBatches(try HealthStore(path: path), 0..<1500, from: 0)
        // Deletions interleaved with more batches, another type, then the writer restarts:
        // a new connection continues the stream.
        let deleted = stride(from: 0, to: 300, by: 10).map { first.uuids[$0] }
        try await offThread {
            let writer = try HealthStore(path: path)
            for u in deleted { try writer.delete(uuids: [u]) }
            try writer.save([try steps(10, at: 0)])   // another type: must not appear
        }
        let second = try await writeBatches(try HealthStore(path: path), 1500..<3000, from: first.next)
        let total = second.next
        let done = await watcher.waitUntil(seconds: 180) { lines in
            let log = WatchLog(lines)
            return log.seqs.count >= total && log.deleted.count >= deleted.count
        }
        await watcher.stop()
        let log = WatchLog(watcher.outputLines)
        #expect(done, "watch saw \(log.seqs.count) of \(total) samples, \(log.deleted.count) of \(deleted.count) deletions")
        #expect(log.seqs == Array(0..<total), "samples missed, duplicated or out of order")
        #expect(log.deleted == deleted.map { $0.uuidString.lowercased() })
    }

    @Test("watcher started while a writer is running: --from-start sees everything once; a plain watch sees a contiguous tail")
    func watcherAfterWriter() async throws {
        let db = TempDB()
        let path = db.path
        let first = try await writeBatches(try db.open(), 0..<300, from: 0).next

        // Keep writing from a background thread while the watchers start, and 200 batches more
        // once both are watching (however slow the machine, the tail then has something to see).
        let progress = Progress()
        Thread {
            do {
                let w = try HealthStore(path: path)
                var n = first
                var b = 300, afterReady = 0
                while afterReady < 200 && b < 200_000 {
                    let batch = try (0..<(1 + b % 3)).map { _ in defer { n += 1 }; return try numbered(n) }
                    try w.save(batch)
                    progress.set(n)
                    if progress.ready { afterReady += 1 }
                    b += 1
                }
            } catch { progress.fail("\(error)") }
            progress.finish()
        }.start()
        while progress.value < first + 200 && !progress.finished { try await Task.sleep(for: .milliseconds(5)) }

        let everything = try Child(["watch", "--json", "--from-start", "--db", path])
        let tail = try Child(["watch", "--json", "--db", path])
        #expect(await tail.waitForStderr("watching"))
        #expect(await everything.waitForStderr("watching"))
        progress.markReady()
        while !progress.finished { try await Task.sleep(for: .milliseconds(20)) }
        #expect(progress.error == nil, "\(progress.error ?? "")")
        let total = progress.value
        for child in [everything, tail] {
            await child.waitUntil(seconds: 180) { WatchLog($0).seqs.last == total - 1 }
            await child.stop()
        }
        let all = WatchLog(everything.outputLines).seqs
        #expect(all == Array(0..<total))
        let t = WatchLog(tail.outputLines).seqs
        #expect(!t.isEmpty && t.last == total - 1)
        if let f = t.first { #expect(t == Array(f..<total), "the tail has a gap or a duplicate") }
    }

    @Test("a watcher resumed with --anchor continues exactly after the last batch it printed")
    func resumeWithAnchor() async throws {
        let db = TempDB()
        let store = try db.open()
        let w1 = try Child(["watch", "--json", "--db", db.path])
        #expect(await w1.waitForStderr("watching"))
        let firstTotal = try await writeBatches(store, 0..<50, from: 0).next
        await w1.waitUntil { WatchLog($0).seqs.count >= firstTotal }
        await w1.stop()
        let log1 = WatchLog(w1.outputLines)
        #expect(log1.seqs == Array(0..<firstTotal))
        // Written while no watcher runs.
        let mid = try await writeBatches(store, 50..<100, from: firstTotal).next
        let anchor = try #require(log1.anchors.last)
        let w2 = try Child(["watch", "--json", "--anchor", anchor, "--db", db.path])
        let total = try await writeBatches(store, 100..<150, from: mid).next
        await w2.waitUntil { WatchLog($0).seqs.last == total - 1 }
        await w2.stop()
        #expect(WatchLog(w2.outputLines).seqs == Array(firstTotal..<total))
    }

    @Test("writers in other processes (two `healthgate import` runs) are seen by a watching child")
    func importWriterProcesses() async throws {
        let db = TempDB()
        let watcher = try Child(["watch", "--json", "--type", "heartRate", "--db", db.path])
        #expect(await watcher.waitForStderr("watching"))
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
            let r = try await CLI.run(["import", "--jsonl", file.path, "--batch", "50", "--db", db.path])
            #expect(r.status == 0, "\(r.stderr)")
        }
        // (Numbered from 1000: the importer reads a bare 0 or 1 as a boolean on Linux.)
        let total = seq
        await watcher.waitUntil { WatchLog($0).seqs.count >= total }
        await watcher.stop()
        #expect(WatchLog(watcher.outputLines).seqs == Array(1000..<(1000 + total)))
    }

    @Test("benchmark (printed, not asserted): commit-to-observer latency across two connections")
    func latencyBenchmark() async throws {
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
        let n = 60
        let queryCost = try await offThread { () -> Double in
            // Baseline measured in the same run: one anchored query that finds nothing.
            let anchor = try writer.currentAnchor()
            let q0 = Date()
            for _ in 0..<50 { _ = try writer.changes(types: [.heartRate], since: anchor) }
            let cost = Date().timeIntervalSince(q0) / 50 * 1000
            for k in 0..<n {
                try writer.save([try numbered(k)])
                times.committed(k, at: Date())
                Thread.sleep(forTimeInterval: 0.007 * Double(k % 7))   // commits at varying phases of the poll
            }
            return cost
        }
        let deadline = Date().addingTimeInterval(60)
        while seen.value < n && Date() < deadline && seen.error == nil { try await Task.sleep(for: .milliseconds(10)) }
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
    private var isReady = false
    private var message: String?
    func markReady() { lock.lock(); isReady = true; lock.unlock() }
    var ready: Bool { lock.lock(); defer { lock.unlock() }; return isReady }
    func set(_ v: Int) { lock.lock(); n = v; lock.unlock() }
    func finish() { lock.lock(); isDone = true; lock.unlock() }
    func fail(_ m: String) { lock.lock(); message = m; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    var finished: Bool { lock.lock(); defer { lock.unlock() }; return isDone }
    var error: String? { lock.lock(); defer { lock.unlock() }; return message }
}
