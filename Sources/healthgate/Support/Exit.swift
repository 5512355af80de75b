import ArgumentParser
import Foundation

/// sysexits(3) codes HealthGate's commands exit with. Each failure a user can meet maps to one.
enum Sysexit: Int32 {
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
struct CLIFailure: Error, CustomStringConvertible {
    let message: String
    let code: Sysexit
    init(_ message: String, code: Sysexit) {
        self.message = message
        self.code = code
    }
    var description: String { message }
}

/// Writes to standard error (thread-safe; FileHandle serialises writes).
enum Console {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data(("healthgate: " + TerminalText.visible(message) + "\n").utf8))
    }
    static func note(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

extension ParsableCommand {
    /// Runs `body`, turning a ``CLIFailure`` (or any error that knows its code through
    /// ``ExitCodeMapping``) into a message on stderr and the matching exit code.
    func reporting<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw Self.exit(for: error) }
    }

    /// Async twin of ``reporting(_:)``.
    func reporting<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw Self.exit(for: error) }
    }

    static func exit(for error: any Error) -> ExitCode {
        if error is ExitCode { return error as! ExitCode }
        let (message, code) = ExitCodeMapping.describe(error)
        Console.error(message)
        return ExitCode(code.rawValue)
    }
}

/// Maps errors from every module to a message and a sysexits code. Modules' error types add
/// themselves with an extension conforming to ``SysexitConvertible``.
protocol SysexitConvertible {
    var sysexit: Sysexit { get }
}

enum ExitCodeMapping {
    static func describe(_ error: any Error) -> (String, Sysexit) {
        if let f = error as? CLIFailure { return (f.message, f.code) }
        if let c = error as? any SysexitConvertible { return ("\(error)", c.sysexit) }
        // A Foundation file error no command caught: its errno as a sentence, not "NSCocoaErrorDomain error 512".
        if let code = FileAccess.errnoCode(of: error) {
            let path = ((error as NSError).userInfo[NSFilePathErrorKey] as? String) ?? "a file"
            let f = FileAccess.failure(errno: code, .write, path: path, what: "")
            return (f.message.replacingOccurrences(of: "cannot write", with: "cannot read or write"), f.code)
        }
        return ("\(error)", .software)
    }
}
