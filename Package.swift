// swift-tools-version: 6.1
// HealthGate: a Linux-native gateway that pairs wearable sensors, captures their data live and
// keeps it in a typed, queryable health store. See README.md and docs/architecture.md.
import PackageDescription

/// Settings every HealthGate target shares: Swift 6 language mode (strict concurrency) and
/// warnings treated as defects by CI (`swift build -Xswiftc -warnings-as-errors`).
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

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
        .library(name: "HealthGateTesting", targets: ["HealthGateTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),

        // (dependencies for BLE)

        // (dependencies for serial)

        // (dependencies for ingest / daemon)
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),

    ],
    targets: [
        // Thin system-library targets over the C libraries HealthGate links.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),

        // Pure model: quantity types, units, samples, metadata. No I/O.
        .target(name: "HealthModel", swiftSettings: strict),

        // ---- Store (issue 2)
        // SQLite store on the raw C API (docs/store.md): samples, sources, devices, statistics.
        .target(name: "HealthStore", dependencies: ["HealthModel", "CSQLite"], swiftSettings: strict),

        // ---- Bluetooth LE (issues 3, 4)
        // The Linux transport: raw-HCI LE scanning, advertising-data parsing, the L2CAP ATT
        // bearer, kernel errors as sentences (helper blelinux).
        .target(name: "BluetoothLinux", dependencies: ["CBlueZ", "GATT", "HealthModel", "HealthStore", "HeartRateProfile", "Capture"],
                swiftSettings: strict),
        // ATT PDU codec, the ATTBearer transport protocol and a GATT client. Pure Swift.
        .target(name: "GATT", swiftSettings: strict),
        // Heart Rate Profile codecs (0x2A37/38/39, DIS, Battery) and notification → sample mapping.
        .target(name: "HeartRateProfile", dependencies: ["HealthModel"], swiftSettings: strict),
        // The JSON-lines capture format written by `record` and read by `replay`.
        .target(name: "Capture", dependencies: ["HealthModel"], swiftSettings: strict),

        // ---- Serial pedometers (issue 5)
        // Serial pedometers: termios port, line framing, line formats, the exact step-counter
        // state machine (pure) and the reader that ties them together.
        .target(name: "SerialPedometer",
                dependencies: ["HealthModel", "HealthStore", "Udev",
                               .product(name: "TOMLKit", package: "TOMLKit"),
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),
        // libudev: tty enumeration with sysfs fallback, add/remove monitor, device matching rules.
        .target(name: "Udev", dependencies: ["CUdev"], swiftSettings: strict),

        // ---- Ingestion (issue 6)
        // Hot path: fixed-size records, per-source SPSC rings, one batching writer thread.
        .target(name: "Ingest", dependencies: ["HealthModel", "HealthStore", "CSQLite"], swiftSettings: strict),
        // The daemon's parts: TOML config, systemd notify, wiring sources to the pipeline.
        .target(
            name: "Gateway",
            dependencies: [
                "Ingest", "HealthModel", "HealthStore", "GATT", "HeartRateProfile", "SerialPedometer", "Capture",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // ---- Testing peers (shared by later tests)
        // Simulated BLE peripherals (an ATT server in Swift) and in-memory / socketpair bearers.
        .target(name: "HealthGateTesting", dependencies: ["GATT", "HeartRateProfile", "HealthModel"], swiftSettings: strict),

        // The command-line tool.
        .executableTarget(
            name: "healthgate",
            dependencies: [
                "HealthModel",
                "HealthStore",
                "BluetoothLinux",
                "Ingest", "Gateway", "HealthGateTesting", "GATT", "HeartRateProfile", "Capture", "CSQLite",
                "SerialPedometer",
                "Udev",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        .testTarget(name: "HealthModelTests", dependencies: ["HealthModel"], swiftSettings: strict),

        // ---- Store tests
        .testTarget(name: "HealthStoreTests", dependencies: ["HealthStore", "HealthModel", "HealthGateTesting"], swiftSettings: strict),

        // ---- Bluetooth LE tests
        .testTarget(name: "BluetoothLinuxTests", dependencies: ["BluetoothLinux", "GATT", "HealthGateTesting", "HealthModel", "HealthStore", "HeartRateProfile", "Capture"],
                    swiftSettings: strict),
        .testTarget(name: "HeartRateProfileTests", dependencies: ["HeartRateProfile", "HealthModel", "HealthGateTesting"], swiftSettings: strict),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "HealthModel"], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: ["GATT", "HealthGateTesting", "HeartRateProfile", "HealthModel"], swiftSettings: strict),

        // ---- Serial tests
        .testTarget(name: "SerialPedometerTests", dependencies: ["SerialPedometer", "HealthModel", "HealthStore", "HealthGateTesting"],
                    swiftSettings: strict),
        .testTarget(name: "UdevTests", dependencies: ["Udev"], swiftSettings: strict),

        // ---- Ingestion tests
        .testTarget(name: "IngestTests", dependencies: ["Ingest", "Gateway", "HealthModel", "HealthStore", "HealthGateTesting", "GATT", "SerialPedometer"], swiftSettings: strict),

        // ---- Change feed tests
        // Anchored queries, cross-process observers (real `healthgate` children), following stats.
        .testTarget(name: "ChangeFeedTests", dependencies: ["HealthStore", "HealthModel", "HealthGateTesting"], swiftSettings: strict),

    ]
)
