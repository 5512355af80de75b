// swift-tools-version: 6.1
// HealthGate: a Linux-native gateway that pairs wearable sensors, captures their data live and
// keeps it in a typed, queryable health store. See README.md and docs/architecture.md.
import PackageDescription

let package = Package(
    name: "HealthGate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "healthgate", targets: ["healthgate"]),
        .library(name: "HealthModel", targets: ["HealthModel"]),
        .library(name: "HealthStore", targets: ["HealthStore"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "HeartRateProfile", targets: ["HeartRateProfile"]),
        .library(name: "Capture", targets: ["Capture"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The HTTP API (issue 13): server, bearer-header parsing, token hashing, Prometheus text.
        // Without its swift-configuration trait (HealthGate reads its own TOML). swift-configuration
        // stays in the graph through async-http-client, and its `Configuration` target is why
        // HealthGate's configuration module is named `HealthGateConfiguration`.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Already in the graph through hummingbird; named for the graceful shutdown and NIO's byte buffers.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Already in the graph through hummingbird; named for the header names /v1/live reads (Last-Event-ID).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Already in the graph through hummingbird; named for TLS in `run`'s [http] table (certificate, key).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.2"),
        // The PostgreSQL fleet uplink (issue 14, docs/uplink.md): the wire protocol client.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // System libraries: module maps over the C libraries HealthGate links.
        // libsqlite3's C API, for the store.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // zlib's inflate, for an Apple Health export.zip's entry (docs/apple-health.md, "Streaming design").
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libbluetooth's HCI/L2CAP headers, for the Linux BLE transport.
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // libudev, for tty enumeration and hot-plug.
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),

        // System-call helpers of the blocking loops: wake-up pipes, poll with a deadline, EINTR retry.
        // One lock type for the whole package: Synchronization.Mutex, or a pthread mutex that
        // ThreadSanitizer can see in the sanitizer build (docs/fuzzing.md, "Sanitizer passes").
        .target(name: "Locking"),
        // timerfd (declared, not included: see its shim.h), which Glibc's module leaves out: the
        // kernel's notice that the wall clock was set.
        .systemLibrary(name: "CTimerFD"),
        .target(name: "Platform", dependencies: ["Locking", "CTimerFD"]),

        // Library targets, in the order data flows from a sensor's bytes to a stored row.
        // Health data types: quantity types, units, samples, metadata, the one v7 UUID maker (pure;
        // no I/O beyond the clock and the kernel's random bits for ids).
        .target(name: "HealthModel", dependencies: ["Locking"]),
        // ATT PDUs and a GATT client over any ATTBearer (pure Swift, transport-independent).
        .target(name: "GATT", dependencies: ["Locking", "Platform"]),
        // Heart Rate Profile codecs (0x2A37/38/39, Device Information, Battery).
        .target(name: "HeartRateProfile", dependencies: ["HealthModel"]),
        // The Linux BLE transport: HCI scanning, advertising data, the L2CAP ATT bearer, kernel errors.
        .target(name: "BluetoothLinux", dependencies: ["Locking", "CBlueZ", "GATT", "Platform"]),
        // libudev tty enumeration and add/remove monitoring (sysfs and kernel-event fallbacks).
        .target(name: "Udev", dependencies: ["Locking", "CUdev", "Platform"]),
        // Serial pedometers: termios ports, line framing and formats, the step-counter state machine.
        .target(name: "SerialPedometer", dependencies: ["Locking", "HealthModel", "Platform"]),
        // The JSON-lines capture file format `record` writes and `replay` reads.
        .target(name: "Capture", dependencies: ["Locking", "HealthModel", "Platform"]),
        // The ingest hot path: fixed-size records, per-source lock-free rings, one batching writer.
        .target(name: "Ingest", dependencies: ["Locking", "HealthModel", "HealthStore"]),
        // The typed health store on SQLite's C API: schema, saves, queries, statistics, change feed.
        // The only target that links CSQLite: it owns the sample columns and the one bulk writer.
        .target(name: "HealthStore", dependencies: ["HealthModel", "CSQLite", "Platform"]),
        // What a systemd service speaks: sd_notify datagrams (readiness, watchdog, status), journal priorities.
        .target(name: "Systemd", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // A strict TOML 1.0 reader that never traps (docs/architecture.md, "Hand-written code and why": not TOMLKit).
        .target(name: "TOML"),
        // The TOML configuration `run` and the serial commands read (straps, pedometer rules, profiles, ingest settings).
        .target(name: "HealthGateConfiguration",
                dependencies: ["GATT", "Ingest", "SerialPedometer", "Udev", "TOML"]),
        // The one ingest path composed: configuration, sources (the one strap path) wired to the pipeline, the runtime.
        .target(name: "Gateway",
                dependencies: ["Locking", "Ingest", "HealthModel", "HealthStore", "GATT", "HeartRateProfile", "HeartRateVariability", "SerialPedometer", "Udev", "Capture",
                               "BluetoothLinux", "Simulators", "Systemd", "HealthGateConfiguration", "Platform", "Sysexits",
                               .product(name: "Logging", package: "swift-log")]),
        // Simulated peers the product ships for `demo`, `simulate` and `bench`: straps, pedometers, load.
        .target(name: "Simulators", dependencies: ["Locking", "GATT", "HeartRateProfile", "HealthModel", "Platform"]),

        // Bearer tokens of the HTTP API: secrets, their SHA-256 hashes, per-type read/write scopes.
        .target(name: "AccessTokens",
                dependencies: ["HealthModel", "HealthStore", .product(name: "Crypto", package: "swift-crypto")]),
        // The live team page served at `/` (issue 13): HTML, CSS and JS as string literals, so the
        // one installed binary carries it (no CDN, no resource bundle beside it).
        .target(name: "LivePage"),
        // The HTTP API `serve` answers (issue 13, docs/http-api.md): routes, authorization, metrics.
        .target(name: "HTTPAPI",
                dependencies: ["Locking", "HealthModel", "HealthStore", "AccessTokens", "Platform", "Sysexits", "Ingest", "LivePage", "WorkoutSummary",
                               .product(name: "Hummingbird", package: "hummingbird"),
                               .product(name: "HummingbirdTLS", package: "hummingbird"),
                               .product(name: "NIOSSL", package: "swift-nio-ssl"),
                               .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                               .product(name: "Prometheus", package: "swift-prometheus"),
                               .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                               .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "HTTPTypes", package: "swift-http-types"),
                               .product(name: "Logging", package: "swift-log")],
                resources: [.copy("openapi.json")]),
        // `healthgate run` composed: the configured gateway with the services its file asks for
        // (the HTTP API fed by the daemon's commit tap, the PostgreSQL uplink, MQTT).
        .target(name: "Daemon",
                dependencies: ["Locking", "Gateway", "HTTPAPI", "HealthGateConfiguration", "HealthModel", "HealthStore", "Ingest", "Uplink",
                               "MQTTUplink", "BluetoothLinux", "Sysexits",
                               .product(name: "Logging", package: "swift-log")]),

        // The PostgreSQL fleet uplink (issue 14, docs/uplink.md): the central schema and its migrations,
        // store-and-forward of the change feed with the anchor persisted after the server's commit.
        .target(name: "Uplink",
                dependencies: ["Locking", "HealthModel", "HealthStore", "HealthGateConfiguration", "Sysexits", "Platform",
                               .product(name: "PostgresNIO", package: "postgres-nio"),
                               .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOSSL", package: "swift-nio-ssl"),
                               .product(name: "Logging", package: "swift-log")]),

        // Debian's libmosquitto (libmosquitto-dev), the MQTT client library of the broker project.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),

        // The MQTT publisher for Home Assistant (issue 14, docs/mqtt.md): committed samples and device
        // states under healthgate/<gateway>/<device>/…, discovery configs, availability and a will.
        .target(name: "MQTTUplink",
                dependencies: ["Locking", "CMosquitto", "Gateway", "HealthGateConfiguration", "HealthModel", "HealthStore", "Ingest", "Sysexits",
                               .product(name: "Logging", package: "swift-log")]),

        // A throwaway PostgreSQL cluster (initdb + pg_ctl from Debian's packages) for the uplink's
        // tests and benchmark.
        .target(name: "ScratchPostgres", dependencies: ["Locking", "ChildProcess"]),

        // A child process watched until it exits: status, wall time, peak anonymous memory
        // (RssAnon). Shared by the benchmark and the tests, so not in HealthGateTesting.
        .target(name: "ChildProcess", dependencies: ["Platform"]),

        // One exit-code convention for the two executables: a failure as one sentence with its sysexits(3)
        // code (`SysexitConvertible`, `ExitCodeMapping`), and the output conventions that go with it (JSON
        // lines, terminal-safe text). Depends on no module that has failures to map, so any module can use it.
        .target(name: "Sysexits",
                dependencies: ["Locking", "Platform", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Which sysexits code each module's failure exits with: the conformances both executables link.
        .target(name: "ModuleExitCodes",
                dependencies: ["Sysexits", "AccessTokens", "HealthModel", "HealthStore", "GATT", "BluetoothLinux", "Udev", "SerialPedometer",
                               "Capture", "HealthGateConfiguration", "Gateway", "AppleHealthExport"]),

        // `import`'s work: a file of samples streamed, parsed, saved in batches through the bulk
        // writer, bad records reported, progress on a terminal.
        .target(name: "SampleImport", dependencies: ["Locking", "HealthModel", "HealthStore", "Sysexits", "ModuleExitCodes", "AppleHealthExport"]),

        // Heart-rate variability from stored RR intervals: artefact correction (Lipponen &
        // Tarvainen 2019), time-domain measures, windows.
        .target(name: "HeartRateVariability", dependencies: ["HealthModel", "HealthStore"]),

        // `export`'s formats: samples streamed as CSV, JSON lines, a FHIR R4 bundle or Open mHealth data points.
        .target(name: "SampleExport",
                dependencies: ["HealthModel", "HealthStore", "Sysexits", .product(name: "Crypto", package: "swift-crypto")]),

        // Apple Health's export.zip / export.xml streamed into samples, workouts and a report (docs/apple-health.md):
        // a hand-written scanner of the export's flat XML, `unzip -p` for the zip, content-derived UUIDs.
        .target(name: "AppleHealthExport", dependencies: ["HealthModel", "CZlib", .product(name: "Crypto", package: "swift-crypto")],
                exclude: ["Bench"]),
        // Its measuring child: reads an export keeping nothing, prints speed and peak RSS (the memory test, docs/apple-health.md).
        .executableTarget(name: "apple-health-bench", dependencies: ["AppleHealthExport", "HealthModel"], path: "Sources/AppleHealthExport/Bench"),

        // Workouts' totals from the samples inside them: duration, energy, steps, distance, heart
        // rate, time in five heart-rate zones, heart rate per minute.
        .target(name: "WorkoutSummary", dependencies: ["HealthModel", "HealthStore", "Sysexits", "WorkoutFiles"]),
        // Workout files (issue #15, docs/workout-files.md): one workout as FIT, TCX or GPX bytes,
        // written by hand from plain values (no store: the caller fills a WorkoutTrack).
        .target(name: "WorkoutFiles"),

        // The command-line tool: parses arguments and prints.
        .executableTarget(
            name: "healthgate",
            dependencies: ["Locking", 
                "HealthModel", "HealthStore", "BluetoothLinux", "Ingest", "Gateway", "Simulators", "GATT",
                "HeartRateProfile", "Capture", "SerialPedometer", "Udev", "Sysexits", "ModuleExitCodes", "Platform", "Systemd", "HealthGateConfiguration",
                "AccessTokens", "HTTPAPI", "Daemon", "SampleImport", "SampleExport", "HeartRateVariability", "WorkoutSummary", "WorkoutFiles", "Uplink", "MQTTUplink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // The ingest benchmark (docs/performance.md): figures and ratios against baselines in one run.
        .executableTarget(
            name: "healthgate-bench",
            dependencies: ["Locking", 
                "HealthModel", "HealthStore", "Ingest", "Gateway", "Simulators", "HeartRateProfile", "Sysexits", "ModuleExitCodes", "ChildProcess", "Platform",
                "Uplink", "ScratchPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // The parsers' fuzz targets (docs/fuzzing.md): one per parser of bytes from the air, the
        // serial line or a user's file, each with the promise it checks beyond "no crash".
        .target(name: "FuzzTargets",
                dependencies: ["BluetoothLinux", "Capture", "GATT", "HealthGateConfiguration", "HealthModel", "HealthStore",
                               "HeartRateProfile", "SerialPedometer"]),
        // Their driver: libFuzzer's when built by scripts/fuzz.sh, a replayer of inputs otherwise.
        .executableTarget(name: "healthgate-fuzz", dependencies: ["FuzzTargets"]),

        // Tests: one target per module (Swift Testing, one file per feature).
        // Test-only helpers: the built `healthgate` as a child, blocking waits off the pool, in-memory bearers.
        // One mutex in static storage for the test helpers' one-at-a-time lock: no lazy Swift
        // global, so ThreadSanitizer sees every happens-before it makes (docs/fuzzing.md).
        .target(name: "CStaticMutex"),
        .target(name: "HealthGateTesting", dependencies: ["Locking", "GATT", "Simulators", "Platform", "ChildProcess", "CStaticMutex"]),
        .testTarget(name: "PlatformTests", dependencies: ["Locking", "Platform", "HealthGateTesting"]),
        .testTarget(name: "SysexitsTests", dependencies: ["Sysexits", "ModuleExitCodes", "HealthGateTesting", "HealthModel", "HealthStore", "SerialPedometer", "Gateway"]),
        .testTarget(name: "HeartRateVariabilityTests", dependencies: ["HeartRateVariability", "HealthStore", "HealthModel", "HealthGateTesting"],
                    exclude: ["neurokit_hrv.py", "hrv-requirements.txt"]),
        .testTarget(name: "ExportTests", dependencies: ["SampleExport", "HealthStore", "HealthModel", "HealthGateTesting"],
                    exclude: ["validate_export.py", "interop-requirements.txt", "OpenMHealthSchemas"]),
        .testTarget(name: "AppleHealthExportTests", dependencies: ["AppleHealthExport", "HealthModel", "HealthStore", "HealthGateTesting"],
                    exclude: ["make_export.py"]),
        .testTarget(name: "WorkoutTests", dependencies: ["WorkoutSummary", "HealthStore", "HealthModel", "HealthGateTesting"]),
        // The workout files read back by independent PyPI readers (garmin-fit-sdk, fitdecode, tcxreader,
        // gpxpy; GPX against its XSD with lxml) through .venv-workout-files.
        .testTarget(name: "WorkoutFilesTests", dependencies: ["WorkoutFiles", "HealthGateTesting"],
                    exclude: ["read_workout_file.py", "workout-files-requirements.txt"]),
        .testTarget(name: "TOMLTests", dependencies: ["TOML", "HealthGateTesting", "ChildProcess"], exclude: ["tomllib_compare.py"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["HealthGateConfiguration", "Ingest", "SerialPedometer", "Udev"]),
        // The notifier, the journal's log format, and the Debian package (scripts/package-deb.sh).
        .testTarget(name: "SystemdTests", dependencies: ["Locking", "Systemd", "HealthGateTesting", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ChildProcessTests", dependencies: ["ChildProcess", "HealthGateTesting"]),
        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel"]),
        .testTarget(name: "HealthStoreTests", dependencies: ["HealthStore", "HealthModel", "HealthGateTesting", "ChildProcess"]),
        .testTarget(name: "BluetoothLinuxTests",
                    dependencies: ["Locking", "BluetoothLinux", "GATT", "HealthGateTesting", "Simulators", "HealthModel", "HealthStore", "HeartRateProfile", "Capture"]),
        .testTarget(name: "HeartRateProfileTests", dependencies: ["HeartRateProfile", "HealthModel", "HealthGateTesting"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "HealthModel"]),
        .testTarget(name: "GATTTests", dependencies: ["Locking", "GATT", "HealthGateTesting", "Simulators", "HeartRateProfile", "HealthModel", "Gateway", "Ingest"]),
        .testTarget(name: "SerialPedometerTests", dependencies: ["Locking", "SerialPedometer", "HealthModel", "HealthStore", "HealthGateTesting"]),
        .testTarget(name: "UdevTests", dependencies: ["Locking", "Udev", "HealthGateTesting"]),
        .testTarget(name: "IngestTests",
                    dependencies: ["Locking", "Ingest", "Gateway", "HealthModel", "HealthStore", "HealthGateTesting", "Simulators", "GATT", "SerialPedometer", "Udev",
                                   "BluetoothLinux", "HeartRateProfile", "HeartRateVariability", "Capture", "Systemd", "HealthGateConfiguration", "Platform"]),
        // Every committed fuzz corpus and crash reproducer, replayed through its target.
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"], exclude: ["Corpus"]),
        // Anchored queries, cross-process observers (real `healthgate` children), following stats.
        .testTarget(name: "ChangeFeedTests", dependencies: ["HealthStore", "HealthModel", "HealthGateTesting"]),
        // The HTTP API over a real socket, tokens and their migration, the OpenAPI document.
        .testTarget(name: "HTTPAPITests",
                    dependencies: ["HTTPAPI", "AccessTokens", "HealthStore", "HealthModel", "HealthGateTesting",
                                   .product(name: "Hummingbird", package: "hummingbird"),
                                   .product(name: "Logging", package: "swift-log")],
                    // The PyPI peers' pins and drivers, run through their venvs: the OpenAPI
                    // validator (OpenAPITests) and Selenium for headless Chromium (LivePageTests).
                    exclude: ["openapi-requirements.txt", "openapi_check.py", "browser-requirements.txt", "live_page_browser.py"]),
        // The PostgreSQL uplink against a real throwaway cluster (initdb + pg_ctl), `uplink` children.
        .testTarget(name: "UplinkTests",
                    dependencies: ["Uplink", "MQTTUplink", "HealthGateConfiguration", "HealthStore", "HealthModel", "HealthGateTesting",
                                   "ChildProcess", "ScratchPostgres",
                                   .product(name: "PostgresNIO", package: "postgres-nio")]),
    ]
)

// Settings every Swift target shares, applied once here: Swift 6 language mode with strict
// concurrency (the default of tools version 6.1) plus these upcoming features. Warnings are
// defects: scripts/test.sh fails on any warning in Sources/ or Tests/.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
