import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Every process holding `path` open, read from `/proc/*/fd`, as `PID fd N COMMAND` joined by
/// "; " ("nobody" when none does): for the failure message of a test whose device or file another
/// process still holds (a tty a child of another test shares until it execs, a leftover daemon).
/// Processes this one may not inspect are skipped.
public func processesHolding(_ path: String) -> String {
    let files = FileManager.default
    var out: [String] = []
    for pid in (try? files.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
        for fd in (try? files.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        where (try? files.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == path {
            let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?
                .replacingOccurrences(of: "\0", with: " ") ?? "?"
            out.append("\(pid)\(pid == "\(getpid())" ? " (this test process)" : "") fd \(fd) \(command.prefix(100))")
        }
    }
    return out.isEmpty ? "nobody" : out.joined(separator: "; ")
}
