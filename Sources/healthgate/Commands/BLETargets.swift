import ArgumentParser
import BluetoothLinux
import Foundation
import Gateway
import HealthModel
import HealthStore
import Synchronization
import Locking

/// When a strap session (`live`, `record`) ends by itself; Ctrl-C ends it any time.
struct SessionLimits: ParsableArguments {
    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Stop after this many heart-rate notifications (from all straps).", valueName: "n"))
    var count: Int?

    func validate() throws {
        if let duration, duration <= 0 { throw ValidationError("--duration must be more than 0 seconds.") }
        if let count, count <= 0 { throw ValidationError("--count must be at least 1.") }
    }
}

/// Options of every command that connects to a strap.
struct ConnectOptions: ParsableArguments {
    @OptionGroup var adapterOption: AdapterOption

    @Option(name: .long, help: ArgumentHelp(
        "The address type: public or random.",
        discussion: "Defaults to the remembered type, else random for a static random address (top bits 11), else public. `healthgate scan` shows it.",
        valueName: "type"))
    var addressType: AddressType?

    @Option(name: .long, help: ArgumentHelp(
        "Seconds one connection attempt waits for the strap.",
        discussion: "Default 10 for pair and reset-energy; 60 per attempt for live and record, which keep retrying (the kernel connects the moment the strap advertises).",
        valueName: "seconds"))
    var connectTimeout: Double?

    func validate() throws {
        if let connectTimeout, !(connectTimeout > 0 && connectTimeout <= 600) {
            throw ValidationError("--connect-timeout must be more than 0 and at most 600 seconds (got \(connectTimeout)).")
        }
    }

    /// The timeout for a one-shot command (pair, reset-energy).
    var oneShotTimeout: Double { connectTimeout ?? 10 }
    /// The per-attempt timeout for the reconnecting commands (live, record).
    var attemptTimeout: Double { connectTimeout ?? 60 }
}

extension AddressType: ExpressibleByArgument {}

/// Serialises output lines from the several threads `live` reports on.
enum Output {
    private static let lock = Lock(())
    static func line(_ s: String) { lock.withLock { _ in emitLine(s) } }
    static func json(_ v: Any) { lock.withLock { _ in JSONOutput.event(v) } }
    static func note(_ s: String) { lock.withLock { _ in Console.note(s) } }
    /// An event's text: a note on stderr, a line on stdout.
    static func say(_ t: EventText) {
        switch t { case .note(let s): note(s); case .line(let s): line(s); case .error(let s): lock.withLock { _ in Console.error(s) } }
    }
}

