import ArgumentParser
import Foundation

/// sysexits(3) codes HealthGate's executables (`healthgate`, `healthgate-bench`) exit with. Each failure a user can meet maps to one.
package enum Sysexit: Int32 {
    case ok = 0
    /// EX_USAGE: the command line is wrong.
    case usage = 64
    /// EX_DATAERR: the input data is wrong (bad unit, bad line, rejected payload).
    case dataError = 65
    /// EX_NOINPUT: an input file does not exist or is unreadable.
    case noInput = 66
    /// EX_UNAVAILABLE: a service is missing (no Bluetooth adapter, device absent).
    case unavailable = 69
    /// EX_SOFTWARE: an internal error (a bug).
    case software = 70
    /// EX_CANTCREAT: an output file or directory cannot be created (no such directory, a
    /// directory in the way, a read-only file system).
    case cannotCreate = 73
    /// EX_IOERR: reading or writing failed (disk full, database unwritable).
    case ioError = 74
    /// EX_TEMPFAIL: try again later (the database is locked by another writer).
    case tempFail = 75
    /// EX_NOPERM: permission denied (missing capabilities, file mode).
    case noPermission = 77
    /// EX_CONFIG: the configuration file is wrong.
    case config = 78
}

/// An error a command reports as one clear sentence on stderr and a sysexits code.
package struct CLIFailure: Error, CustomStringConvertible {
    /// What happened, why, what to do.
    package let message: String
    /// The exit code.
    package let code: Sysexit
    /// A failure saying `message`, exiting with `code`.
    package init(_ message: String, code: Sysexit) {
        self.message = message
        self.code = code
    }
    package var description: String { message }
}

/// Writes to standard error (thread-safe; FileHandle serialises writes).
package enum Console {
    /// `message` as a failure of `program`, with control characters shown as escapes.
    package static func error(_ message: String, program: String = "healthgate") {
        FileHandle.standardError.write(Data((program + ": " + TerminalText.visible(message) + "\n").utf8))
    }
    /// `message` as it is: a note for the user.
    package static func note(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

extension ParsableCommand {
    /// Runs `body`, turning a ``CLIFailure`` (or any error that knows its code through
    /// ``SysexitConvertible``) into one sentence on stderr, prefixed with `program`, and the
    /// matching exit code; an error of no known kind exits with `fallback`. (`healthgate`'s
    /// commands need none of this: its `main` reports every command's failure.)
    package func reporting<T>(as program: String, fallback: Sysexit, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw Self.exit(for: error, program: program, fallback: fallback) }
    }

    /// The exit for `error`, after saying it on stderr.
    package static func exit(for error: any Error, program: String = "healthgate", fallback: Sysexit = .software) -> ExitCode {
        if let exit = error as? ExitCode { return exit }
        let (message, code) = ExitCodeMapping.describe(error, fallback: fallback)
        Console.error(message, program: program)
        return ExitCode(code.rawValue)
    }
}

/// Maps errors from every module to a message and a sysexits code. Modules' error types add
/// themselves with an extension conforming to ``SysexitConvertible``.
package protocol SysexitConvertible {
    var sysexit: Sysexit { get }
    /// The sentence said for it (by default the error's description).
    var sysexitMessage: String { get }
}

extension SysexitConvertible {
    package var sysexitMessage: String { "\(self)" }
}

package enum ExitCodeMapping {
    /// The sentence and code for `error`; `fallback` for an error of no known kind.
    package static func describe(_ error: any Error, fallback: Sysexit = .software) -> (String, Sysexit) {
        if let f = error as? CLIFailure { return (f.message, f.code) }
        if let c = error as? any SysexitConvertible { return (c.sysexitMessage, c.sysexit) }
        // A Foundation file error no command caught: its errno as a sentence, not "NSCocoaErrorDomain error 512".
        if let code = FileAccess.errnoCode(of: error) {
            let path = ((error as NSError).userInfo[NSFilePathErrorKey] as? String) ?? "a file"
            let f = FileAccess.failure(errno: code, .write, path: path, what: "")
            return (f.message.replacingOccurrences(of: "cannot write", with: "cannot read or write"), f.code)
        }
        return ("\(error)", fallback)
    }
}
