import AppleHealthExport
import HealthModel
import Foundation

// apple-health-bench PATH: reads an Apple Health export as `healthgate import --apple-health`
// will, keeping nothing, and prints one JSON line: samples, workouts, seconds, records and
// megabytes per second, and the process's peak resident memory (VmHWM). For the memory test
// (AppleHealthExportTests) and the figures in docs/apple-health.md.
let arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.first else {
    FileHandle.standardError.write(Data("usage: apple-health-bench EXPORT.zip|export.xml\n".utf8))
    exit(64)
}
func peakKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}
do {
    let clock = ContinuousClock()
    let began = clock.now
    let reader = try AppleHealthExportReader(path: path)
    var samples = 0, workouts = 0, rr = 0
    let report = try reader.read { batch in
        samples += batch.samples.count
        workouts += batch.workouts.count
        rr += batch.samples.reduce(0) { $0 + ($1.rrIntervals?.ticks.count ?? 0) }
    }
    let elapsed = began.duration(to: clock.now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let records = report.samples.values.reduce(0, +) + report.unknownRecordTypes.values.reduce(0, +) + report.badRecordCount
    let out: [String: Any] = [
        "samples": samples, "workouts": workouts, "rrIntervals": rr, "records": records, "bad": report.badRecordCount,
        "heartbeatSamples": report.heartbeatSamples, "bytes": report.bytesRead, "seconds": seconds,
        "recordsPerSecond": Double(records) / seconds, "megabytesPerSecond": Double(report.bytesRead) / 1e6 / seconds,
        "peakRSSKilobytes": peakKilobytes(), "complete": report.complete,
    ]
    let json = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys])
    print(String(decoding: json, as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("apple-health-bench: \(error)\n".utf8))
    exit(65)
}
