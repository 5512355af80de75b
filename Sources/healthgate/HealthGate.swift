import ArgumentParser
import Foundation
import Platform
import Gateway

/// The `healthgate` command: pairs wearable sensors, captures their data and queries the store.
@main
struct HealthGate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthgate",
        abstract: "A Linux gateway for wearable health sensors, with a HealthKit-style store.",
        discussion: """
            HealthGate pairs Bluetooth LE heart-rate straps and serial pedometers, captures their \
            data live and keeps it in a typed, queryable SQLite store.

            The store lives at --db PATH, or $HEALTHGATE_DB, or $XDG_DATA_HOME/healthgate/health.sqlite.
            Commands that only read it (samples, stats, changes, devices, sources list, export, \
            watch) open it read-only: they never create, migrate or write it.

            Exit codes (sysexits): 0 ok; 64 usage (a wrong command line); 65 bad data (a bad \
            value, line or payload; a file that is not a HealthGate store); 66 no input (no store \
            or input file at that path); 69 unavailable (no Bluetooth adapter, device gone); 70 \
            internal error (a bug: please report it); 74 I/O error (disk full, unreadable file); \
            75 temporary failure (the store is locked: retry); 77 no permission (file mode, \
            missing capabilities); 78 configuration (a bad config file, a store schema from \
            another HealthGate version). A second Ctrl-C ends at once with 130.

            Shell completions: healthgate --generate-completion-script bash|zsh|fish \
            (docs/operations.md).
            """,
        version: HealthGateVersion.release,
        subcommands: [
            // Model and store (issue 2)
            TypesCommand.self,
            AddCommand.self,
            ImportCommand.self,
            ExportCommand.self, HRVCommand.self,
            WorkoutCommand.self, WorkoutsCommand.self, ProfileCommand.self,
            SamplesCommand.self,
            DeleteCommand.self,
            StatsCommand.self,
            SourcesCommand.self,

            // Bluetooth LE heart rate (issue 3)
            ScanCommand.self,
            DevicesCommand.self,
            PairCommand.self,
            LiveCommand.self,
            ResetEnergyCommand.self,
            RecordCommand.self,

            // Serial pedometers (issue 5)
            SerialCommand.self,
            DecodeCommand.self,  // the decode group (blecore adds its subcommands to it)

            // Ingestion daemon, demo, replay (issue 6); the benchmark is `healthgate-bench`
            RunCommand.self,
            DemoCommand.self,
            ReplayCommand.self,
            SimulateCommand.self,

            // Change feed and observation (issue 7)
            ChangesCommand.self,
            WatchCommand.self,
            TombstonesCommand.self,
            MigrateCommand.self, CheckCommand.self,

            // The HTTP API (issue 13)
            TokenCommand.self,
            ServeCommand.self,

            // The PostgreSQL fleet uplink (issue 14)
            UplinkCommand.self,

        ])

    /// Parses `arguments` (nil: the command line) and runs the command, as ArgumentParser's own
    /// `main` does, with two differences: a command's failure is reported here, for every
    /// command, as one sentence and its sysexits code; and synchronous commands (`run`, `demo`, `replay`,
    /// `watch`, `serial watch`, …) block their thread for as long as they run, so they
    /// get a thread of their own. On one of Swift concurrency's cooperative threads — as many
    /// as the machine has cores, one on a single-core board — they would starve the async
    /// work they start themselves (a strap's GATT setup in `run` and `demo` awaits on that
    /// pool), and the daemon would never subscribe a strap.
    static func main(_ arguments: [String]?) async {
        // A stop request always stops healthgate. SIGTERM's disposition is inherited across
        // exec, and a parent that traps its signals the way `run` does (SIG_IGN plus a dispatch
        // source: Gateway's SignalTrap) would otherwise pass an ignored SIGTERM on, and `watch`
        // or `stats --follow`, which end by the default action, could not be stopped. Commands
        // that stop gracefully install their own trap after this.
        signal(SIGTERM, SIG_DFL)
        do {
            let command = try await asyncParseAsRoot(arguments)
            do {
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try await CommandBox(command).runOnOwnThread()
                }
            } catch let error where !String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
                // Every command's failure, said once here: one sentence on stderr and its
                // sysexits code (Sysexits' ExitCodeMapping). ArgumentParser's own (help
                // requests, validation, ExitCode) go to its exit(withError:) as they are.
                throw Self.exit(for: error)
            }
            // An event a stream could not write as JSON was said on stderr when it happened;
            // the command still fails (70) rather than exiting 0 with a line missing.
            if let failure = JSONOutput.takeFailure() { throw ExitCode(failure.code.rawValue) }
            checkpointWritingStores()
        } catch {
            checkpointWritingStores()
            exit(withError: error)
        }
    }

    /// Checkpoints the stores the command wrote (docs/store.md, "Checkpoint on shutdown").
    static func checkpointWritingStores() {
        WritingStores.checkpointAll { message, failed in if failed { Console.error(message) } else { Console.note(message) } }
    }

    /// Runs the command line through ``main(_:)``.
    static func main() async {
        await main(nil)
    }
}

/// Hands a parsed synchronous command to the thread that runs it: parsed on one thread, then
/// used only by the other, once.
private final class CommandBox: @unchecked Sendable {
    private let command: any ParsableCommand
    init(_ command: any ParsableCommand) { self.command = command }

    /// Runs the command on a thread of its own with the main thread's stack size and returns
    /// (or throws) what it did, holding no cooperative thread meanwhile.
    func runOnOwnThread() async throws {
        try await onOwnThread(name: "healthgate-command", stackSize: 8 << 20) {
            var command = self.command
            try command.run()
        }
    }
}
