import Foundation
import HealthModel
import HeartRateProfile

/// Locations of the material beside the repository.
enum Fixtures {
    /// The repository root (three levels above this file).
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The shared reference directory: `$HEALTHGATE_SHARED`, else `../shared` from the repo
    /// root, else the nearest ancestor's `shared/` (git worktrees sit deeper than a clone).
    static let sharedDirectory: URL? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HEALTHGATE_SHARED"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        var dir = repoRoot
        for _ in 0..<5 {
            let candidate = dir.deletingLastPathComponent().appendingPathComponent("shared")
            if fm.fileExists(atPath: candidate.appendingPathComponent("vectors/heart-rate-measurement.jsonl").path) {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
}

/// One line of heart-rate-measurement.jsonl.
struct Vector: Sendable, CustomStringConvertible {
    let hex: String
    let source: String
    let bpm: Int?
    let sensorContact: String?
    let energyExpendedKJ: Int?
    let rr: [Int]?
    let truncated: Bool?
    let error: String?
    var description: String { hex.isEmpty ? "(empty)" : hex }

    static func load() throws -> [Vector] {
        guard let shared = Fixtures.sharedDirectory else { return [] }
        let text = try String(contentsOf: shared.appendingPathComponent("vectors/heart-rate-measurement.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let e = obj["expect"] as? [String: Any] ?? [:]
            return Vector(hex: obj["hex"] as? String ?? "", source: obj["source"] as? String ?? "",
                          bpm: e["bpm"] as? Int, sensorContact: e["sensorContact"] as? String,
                          energyExpendedKJ: e["energyExpendedKJ"] as? Int, rr: e["rr"] as? [Int],
                          truncated: e["truncated"] as? Bool, error: e["error"] as? String)
        }
    }
}

func bytes(_ hex: String) -> [UInt8] {
    let h = Array(hex.utf8)
    return stride(from: 0, to: h.count - 1, by: 2).map { UInt8(String(decoding: h[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

func decode(_ hex: String) throws(HeartRateMeasurementError) -> HeartRateMeasurement {
    try HeartRateMeasurement.decode(bytes: bytes(hex))
}
