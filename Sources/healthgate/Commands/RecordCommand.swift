import ArgumentParser
import BluetoothLinux
import Foundation

extension CaptureFileError: SysexitConvertible {
    var sysexit: Sysexit {
        switch self {
        case .exists: return .usage
        case .cannotCreate, .writeFailed: return .ioError
        }
    }
}

/// `healthgate record`: raw notifications to a capture file.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a strap's raw heart-rate notifications, with receipt times, to a capture file.",
        discussion: """
            Writes HealthGate's capture format (JSON lines, see docs/capture-format.md): a header \
            line, then one line per Heart Rate Measurement notification with its receipt time \
            (t, Unix seconds), the device record, the address, the characteristic (2A37) and the \
            payload as hex. Each line is written as it arrives. Nothing is stored in the health \
            store; a capture can be replayed later. Reconnects like `live`; Ctrl-C, SIGTERM, \
            --duration or --count end it.

            Example:
              healthgate record chest --out hr.capture.jsonl --duration 60
              healthgate record C4:7C:8D:6A:1F:02 --out /tmp/h7.jsonl --count 100 --overwrite
            """)

    @Argument(help: ArgumentHelp("The strap: its address, or the name it was paired under.", valueName: "address|name"))
    var strap: String

    @Option(help: ArgumentHelp("The capture file to write.", valueName: "file"))
    var out: String

    @Flag(help: "Replace the file if it exists.")
    var overwrite = false

    @OptionGroup var limits: SessionLimits
    @OptionGroup var connect: ConnectOptions
    @OptionGroup var store: StoreLocation

    func run() async throws {
        try await reporting {
            let adapter = try connect.adapterOption.resolve()
            let db = try openHealthStore(store)
            let target = try resolveStrap(strap, store: db, addressType: connect.addressType)
            let writer = try CaptureFileWriter(path: out, overwrite: overwrite)
            let trap = InterruptTrap()
            let stop = trap.stop
            if let duration = limits.duration { Thread { if !stop.wait(seconds: duration) { stop.trigger() } }.start() }
            Output.note("Recording \(target) to \(out); Ctrl-C to stop.")
            let started = Date()
            let recorder = CaptureRecorder(targets: [target], connector: kernelConnector(adapter: adapter, timeout: connect.attemptTimeout),
                                           stop: stop, writer: writer, maxNotifications: limits.count) { event in
                switch event {
                case .connected(let t, _, let n): Output.note(n == 1 ? "Connected to \(t)." : "Reconnected to \(t) (connection \(n)).")
                case .disconnected(let t, let reason): Output.note("\(t) disconnected (\(reason)); reconnecting…")
                case .connectFailed(let t, let reason, let pause): Output.note("Could not connect to \(t): \(reason) Retrying in \(formatSeconds(pause)).")
                default: break
                }
            }
            let n = try await recorder.run()
            Output.note("Recorded \(n) notifications in \(formatSeconds(Date().timeIntervalSince(started).rounded())) to \(out).")
        }
    }
}
