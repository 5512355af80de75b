import Platform
import ArgumentParser
import Foundation
import Gateway
import HealthGateConfiguration
import Simulators
import Sysexits
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate simulate`: simulated straps and pedometers for a real `healthgate run`.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Serve simulated heart-rate straps on Unix sockets and pedometers on ptys, for `healthgate run`.",
        discussion: """
            Exercises the daemon without hardware, through the same code paths as real devices. \
            Each simulated strap is an ATT server (the Heart Rate, Device Information and Battery \
            services, real ATT bytes) listening on a SOCK_SEQPACKET Unix socket, one PDU per \
            message, the shape of the kernel's L2CAP ATT channel; `run` reaches it with \
            `[[strap]] socket = "…"` and treats it exactly like a strap over Bluetooth (discovery, \
            subscription, reconnects with backoff, re-subscription). Each simulated pedometer is a \
            pseudo-terminal (/dev/pts/N) printing the line shapes real firmware prints, which \
            `run` opens through `[[pedometer]] path = "…"`.

            simulate writes a ready configuration naming every socket and pty (--config-out), \
            then notifies at --rate until SIGINT or SIGTERM; the sockets are removed when it \
            stops, and the daemon's straps then reconnect with backoff until simulate runs again \
            with the same --dir. The ptys are new on every start: restart run on the rewritten \
            configuration after restarting simulate.

            Two terminals:
              healthgate simulate --straps 10 --pedometers 4 --config-out sim.toml
              healthgate run --config sim.toml --db /tmp/sim.sqlite
            then `healthgate stats --type heartRate --db /tmp/sim.sqlite`, or `healthgate live \
            --db /tmp/sim.sqlite` to watch what the daemon commits. docs/simulation.md has more.

            With --json, one JSON object is printed once everything listens: the config path, \
            the socket directory, and every strap's socket and pedometer's pty.
            """)

    @OptionGroup var devices: SimulatedDevicesOptions<SimulateCommand>

    @Option(help: "Milliseconds between a pedometer's readings.")
    var pedometerIntervalMs: Int = 1_000

    @Option(help: ArgumentHelp("Directory for the strap sockets (default: $XDG_RUNTIME_DIR/healthgate-sim, else /tmp/healthgate-sim-UID).",
                               valueName: "dir"))
    var dir: String?

    @Option(help: ArgumentHelp("Where to write the configuration for `healthgate run` (default: DIR/healthgate.toml).",
                               valueName: "file"))
    var configOut: String?

    @Option(help: "The flush interval written into the configuration, in milliseconds.")
    var flushMs: Int = 250

    @Flag(help: "Print the paths as one JSON object once ready (and nothing else on stdout).")
    var json = false

    @Option(help: ArgumentHelp("Append one JSON line per heart-rate notification sent ({strap, socket, bpm, rr (1/1024 s), energy, at}): what the daemon should store, to check a pipeline end to end.",
                               valueName: "file"))
    var sentLog: String?

    func validate() throws {
        guard (10...600_000).contains(pedometerIntervalMs) else { throw ValidationError("--pedometer-interval-ms must be 10…600000") }
        guard (1...60_000).contains(flushMs) else { throw ValidationError("--flush-ms must be 1…60000") }
    }

    func run() throws {
        let directory = dir ?? DefaultPaths.simulation()
        let configPath = configOut ?? (directory as NSString).appendingPathComponent("healthgate.toml")
        try FileAccess.createDirectory(directory, what: "the simulation directory")
        let load: SimulatedLoad
        do {
            load = try SimulatedLoad(directory: directory, straps: devices.straps, rate: devices.rate, pedometers: devices.pedometers,
                                     pedometerInterval: .milliseconds(pedometerIntervalMs))
        } catch {
            if let f = FileAccess.failure(error, .createDirectory, path: directory, what: "the simulation directory") { throw f }
            throw CLIFailure("cannot set up the simulated devices in \(directory) (\(error)): give a writable --dir with a short path.", code: .ioError)
        }
        do {
            try FileAccess.write(Array(load.configuration(flushIntervalMs: flushMs).utf8), to: configPath, what: "the configuration")
        } catch {
            load.stop()
            throw error
        }

        // SIGINT/SIGTERM end the simulation (the one signal trap and stop); the thread waits.
        let stop = StopSignal()
        let trap = SignalTrap(raising: stop)
        defer { trap.cancel() }
        let log: SimulatedLoad.SentLog?
        do { log = try sentLog.map { try SimulatedLoad.SentLog(path: $0, load: load) } } catch {
            load.stop()
            throw FileAccess.failure(error, .write, path: sentLog ?? "", what: "the sent log") ?? error
        }
        load.start(onSent: log?.record)
        if json {
            try JSONOutput.emit(load.jsonObject(config: configPath))
        } else {
            emitLine("Simulating \(devices.straps) strap(s) at \(devices.rate) Hz on Unix sockets in \(directory) and \(devices.pedometers) pedometer(s) on ptys.")
            for s in load.straps { emitLine("  \(TerminalText.column(s.name, 18))\(s.socketPath)") }
            for p in load.pedometers { emitLine("  \(TerminalText.column(p.name, 18))\(p.path)") }
            emitLine("Configuration for the daemon: \(configPath)")
            emitLine("In another terminal:  healthgate run --config \(configPath) --db /tmp/sim.sqlite")
            emitLine("Ctrl-C stops the simulation.")
        }
        // A status line every 10 s on stderr: what the daemon is being fed.
        while !stop.sleep(.seconds(10)) {
            if !json {
                FileHandle.standardError.write(Data("simulate: \(load.totalSent) notifications sent, \(load.subscribedStraps) of \(devices.straps) strap(s) subscribed\n".utf8))
            }
        }
        load.stop()
        if !json { emitLine("Stopped after \(load.totalSent) notifications; the sockets are removed.") }
    }
}

extension SimulateCommand: SimulatedDevicesLimits {
    static let straps = 10, rate = 1.0, pedometers = 4, minimumDevices = 1
    static let strapRange = 0...256, pedometerRange = 0...64
    static let rateRange = Double.leastNonzeroMagnitude...1_000.0, rateText = "more than 0 and at most 1000"
    static let strapTransport = "Unix sockets", pedometerTransport = "ptys"
}
