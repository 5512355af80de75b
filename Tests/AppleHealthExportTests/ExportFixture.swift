import AppleHealthExport
import Foundation
import HealthGateTesting
import HealthModel
import Testing

/// The synthetic export of make_export.py (standard-library Python, deterministic by seed) and
/// its summary, the independent oracle: written once per test process into a temporary folder.
enum ExportFixture {
    static let testDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let script = testDirectory.appendingPathComponent("make_export.py")

    /// Runs the generator into a new temporary folder; `arguments` beyond `--out`.
    static func generate(_ arguments: [String] = ["--seed", "1"], timeout: Duration = .seconds(120)) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apple-health-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let r = try HealthGateExecutable.run(["python3", script.path, "--out", dir.path] + arguments, timeout: timeout,
                                             launcher: URL(fileURLWithPath: "/usr/bin/env"))
        guard r.status == 0 else { throw GeneratorFailed(stderr: r.stderr) }
        return dir
    }

    struct GeneratorFailed: Error, CustomStringConvertible {
        var stderr: String
        var description: String { "make_export.py failed: \(stderr)" }
    }

    /// The standard export (seed 1), generated once.
    static let standard: Result<URL, any Error> = Result { try generate() }

    static func directory() throws -> URL { try standard.get() }

    static func summary(_ dir: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("summary.json"))) as? [String: Any])
    }

    /// Everything a reading delivered.
    struct Reading {
        var samples: [QuantitySample] = []
        var workouts: [AppleHealthWorkout] = []
        var batches = 0
        var progress: [Int64] = []
        var report = AppleHealthExportReport()
    }

    static func read(_ path: String, options: AppleHealthExportReader.Options = .init()) throws -> Reading {
        let reader = try AppleHealthExportReader(path: path, options: options)
        var out = Reading()
        out.report = try reader.read { batch in
            out.samples += batch.samples
            out.workouts += batch.workouts
            out.batches += 1
            out.progress.append(batch.bytesRead)
        }
        return out
    }
}
