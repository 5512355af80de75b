import ArgumentParser

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
            Exit codes follow sysexits: 0 ok, 64 usage, 65 bad data, 69 unavailable, 74 I/O.
            """,
        subcommands: [
            // Model and store (issue 2)
            TypesCommand.self,
            AddCommand.self,
            ImportCommand.self,
            ExportCommand.self,
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

            // Ingestion daemon, demo, replay, bench (issue 6)
            RunCommand.self,
            DemoCommand.self,
            BenchCommand.self,
            ReplayCommand.self,
            SimulateCommand.self,

            // Change feed and observation (issue 7)
            ChangesCommand.self,
            WatchCommand.self,
            TombstonesCommand.self,

        ])
}
