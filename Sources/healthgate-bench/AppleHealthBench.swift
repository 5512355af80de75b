import ChildProcess
import Foundation
import Sysexits

/// The `apple-health` part of `healthgate-bench` (issue #15: `healthgate import --apple-health`
/// ≥ 10× healthkit-to-sqlite, peak RSS ≤ 64 MB): one generated export
/// (`Tests/AppleHealthExportTests/make_export.py --big`, the tests' deterministic generator: heart
/// rate every 5 s with a motion context, steps and energy a minute, hourly SDNN with beat lists)
/// imported from its zip and from its XML by the built `healthgate` and by healthkit-to-sqlite
/// (PyPI, pinned in `Benchmarks/python/apple-health-requirements.txt`, installed into
/// `.venv-bench/` when missing), one after the other on the same files: wall time from process
/// start to exit and peak `RssAnon` of each.
extension Bench {
    struct ImportRun {
        var seconds = 0.0
        var peakBytes = 0
    }

    /// Runs `arguments` to its end; a non-zero exit is the bench's failure, with the log's tail.
    static func timedRun(_ arguments: [String], log: String) throws -> ImportRun {
        let outcome = try WatchedChild.run(arguments, stderr: .file(log), timeout: 3600)
        guard outcome.status == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw CLIFailure("`\(arguments.joined(separator: " "))` exited \(outcome.status): \(text.suffix(2000))", code: .software)
        }
        return ImportRun(seconds: outcome.seconds, peakBytes: outcome.peakAnonymousBytes)
    }

    /// healthkit-to-sqlite from `.venv-bench/` in the working directory, installing the pinned
    /// requirements there first when it is missing (pip's output in `log`); nil (with the reason
    /// said) when that fails.
    static func healthkitToSQLite(requirements: String, log: String, say: (String) -> Void) -> String? {
        let venv = FileManager.default.currentDirectoryPath + "/.venv-bench"
        let tool = venv + "/bin/healthkit-to-sqlite"
        if FileManager.default.isExecutableFile(atPath: tool) { return tool }
        guard FileManager.default.fileExists(atPath: requirements) else {
            say("  healthkit-to-sqlite: not run (\(requirements) missing; run from the repository root)")
            return nil
        }
        say("  installing healthkit-to-sqlite into .venv-bench/ from \(requirements) (once)")
        for step in [["python3", "-m", "venv", venv],
                     [venv + "/bin/pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "-r", requirements]] {
            guard let outcome = try? WatchedChild.run(step, stderr: .file(log), timeout: 600), outcome.status == 0 else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                say("  healthkit-to-sqlite: not run (`\(step.joined(separator: " "))` failed: \(text.suffix(500)))")
                return nil
            }
        }
        return FileManager.default.isExecutableFile(atPath: tool) ? tool : nil
    }
}

extension HealthGateBench {
    func appleHealthPart(into out: inout [String: Any], dir: String, say: (String) -> Void) throws {
        let daemon = try healthgateExecutable()
        let generator = "Tests/AppleHealthExportTests/make_export.py"
        guard FileManager.default.fileExists(atPath: generator) else {
            throw CLIFailure("the apple-health part generates its export with \(generator): run healthgate-bench from the repository root.", code: .noInput)
        }
        say("== apple-health (a generated export of \(appleHealthBytes / 1_000_000) MB: `healthgate import --apple-health` vs healthkit-to-sqlite, zip and XML)")
        let work = dir + "/apple"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        _ = try Bench.timedRun(["python3", generator, "--out", work, "--big", String(appleHealthBytes), "--zip"], log: work + "/make_export.log")
        let xmlBytes = ((try? FileManager.default.attributesOfItem(atPath: work + "/export.xml"))?[.size] as? NSNumber)?.intValue ?? 0
        say(String(format: "  export.xml %.0f MB (zipped: export.zip)", Double(xmlBytes) / 1e6))
        let baseline = Bench.healthkitToSQLite(requirements: pythonDir + "/apple-health-requirements.txt", log: work + "/venv.log", say: say)
        for (input, label, key) in [("export.zip", "zip", "appleHealthZip"), ("export.xml", "XML", "appleHealthXML")] {
            let ours = try Bench.timedRun([daemon.path, "import", "--apple-health", work + "/" + input, "--db", work + "/\(label).sqlite"],
                                          log: work + "/import-\(label).log")
            say(String(format: "  %@  healthgate import --apple-health  %6.2f s, peak RssAnon %.0f MB (goal <= 64 MB)",
                       label.padding(toLength: 3, withPad: " ", startingAt: 0), ours.seconds, Double(ours.peakBytes) / 1_048_576))
            out[key + "Seconds"] = ours.seconds
            out[key + "PeakRSSBytes"] = ours.peakBytes
            guard let baseline else { out[key + "Ratio"] = NSNull(); continue }
            let theirs = try Bench.timedRun([baseline] + (label == "XML" ? ["--xml"] : []) + ["--silent", work + "/" + input, work + "/hk-\(label).db"],
                                            log: work + "/hk-\(label).log")
            let ratio = theirs.seconds / max(ours.seconds, 1e-9)
            say(String(format: "  %@  healthkit-to-sqlite                %6.2f s, peak RssAnon %.0f MB  -> %.1fx (goal >= 10x)",
                       label.padding(toLength: 3, withPad: " ", startingAt: 0), theirs.seconds, Double(theirs.peakBytes) / 1_048_576, ratio))
            out[key + "BaselineSeconds"] = theirs.seconds
            out[key + "Ratio"] = ratio
        }
    }
}
