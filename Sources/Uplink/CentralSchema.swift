import Foundation
import Logging
import PostgresNIO
import Sysexits

/// The central schema `healthgate` the gateways create and migrate (docs/uplink.md, "Central
/// schema"). Each migration is one element of ``migrations``, applied once, in order, in one
/// transaction that holds an advisory lock, so gateways starting together migrate it once.
package enum CentralSchema {
    /// The advisory lock key every gateway takes while it migrates (any fixed 64-bit number).
    static let migrationLock: Int64 = 0x4847_5550_4C4E_4B31  // "HGUPLNK1"

    /// The columns a stored quantity has in both `samples` and `series_quantities` (migration
    /// 1), between the table's key columns and its primary key.
    private static let quantityColumns = """
                type text NOT NULL REFERENCES healthgate.types(identifier),
                value double precision NOT NULL,     -- in the type's canonical unit
                start_s double precision NOT NULL,   -- Unix seconds, exactly as the gateway stores them
                end_s double precision NOT NULL,
                start_time timestamptz GENERATED ALWAYS AS (to_timestamp(start_s)) STORED,
                end_time timestamptz GENERATED ALWAYS AS (to_timestamp(end_s)) STORED,
                source text NOT NULL,
                device text,
                metadata jsonb,
                rr_ticks integer[],                  -- RR intervals in 1/1024 s
                rr_gap boolean,
        """

    /// The foreign keys of both quantity tables, closing their definition.
    private static let quantityKeys = """
                FOREIGN KEY (gateway, source) REFERENCES healthgate.sources(gateway, identifier),
                FOREIGN KEY (gateway, device) REFERENCES healthgate.devices(gateway, key));
        """

    /// The migrations, oldest first. Never edit a released one: append.
    package static let migrations: [String] = [
        // 1: gateways, types, sources, devices, samples, series quantities, the fleet views.
        """
        CREATE TABLE healthgate.gateways(
            name text PRIMARY KEY,
            store_id text NOT NULL,              -- the gateway store's change-feed id
            anchor text,                         -- the anchor committed with the last batch
            last_push timestamptz);
        CREATE TABLE healthgate.types(
            identifier text PRIMARY KEY, unit text NOT NULL, aggregation text NOT NULL);
        CREATE TABLE healthgate.sources(
            gateway text NOT NULL REFERENCES healthgate.gateways(name),
            identifier text NOT NULL, name text NOT NULL, version text,
            PRIMARY KEY (gateway, identifier));
        CREATE TABLE healthgate.devices(
            gateway text NOT NULL REFERENCES healthgate.gateways(name),
            key text NOT NULL,                   -- 'id:' local identifier, else 'fields:' its fields
            name text, manufacturer text, model text, hardware_version text, firmware_version text,
            software_version text, local_identifier text, udi_device_identifier text,
            PRIMARY KEY (gateway, key));
        CREATE TABLE healthgate.samples(
            gateway text NOT NULL,
            uuid uuid NOT NULL,
        \(quantityColumns)
            PRIMARY KEY (gateway, uuid),
        \(quantityKeys)
        CREATE INDEX samples_type_start ON healthgate.samples(type, start_time);
        CREATE TABLE healthgate.series_quantities(
            gateway text NOT NULL,
            uuid uuid NOT NULL,                  -- the series' UUID
            series_index integer NOT NULL,       -- the quantity's index in its series
        \(quantityColumns)
            PRIMARY KEY (gateway, uuid, series_index),
        \(quantityKeys)
        CREATE INDEX series_quantities_type_start ON healthgate.series_quantities(type, start_time);
        CREATE VIEW healthgate.quantities AS
            SELECT gateway, uuid, NULL::integer AS series_index, type, value, start_s, end_s,
                   start_time, end_time, source, device, metadata
              FROM healthgate.samples
            UNION ALL
            SELECT gateway, uuid, series_index, type, value, start_s, end_s,
                   start_time, end_time, source, device, metadata
              FROM healthgate.series_quantities;
        CREATE VIEW healthgate.heart_rate_per_minute AS
            SELECT q.gateway, q.device, d.name AS device_name,
                   date_trunc('minute', q.start_time) AS minute,
                   count(*) AS readings, avg(q.value) AS average, min(q.value) AS minimum,
                   max(q.value) AS maximum
              FROM healthgate.quantities q
              LEFT JOIN healthgate.devices d ON d.gateway = q.gateway AND d.key = q.device
             WHERE q.type = 'heartRate'
             GROUP BY q.gateway, q.device, d.name, date_trunc('minute', q.start_time);
        CREATE VIEW healthgate.steps_per_day AS
            SELECT gateway, (start_time AT TIME ZONE 'UTC')::date AS day, sum(value) AS steps,
                   count(*) AS samples
              FROM healthgate.quantities
             WHERE type = 'stepCount'
             GROUP BY gateway, (start_time AT TIME ZONE 'UTC')::date;
        """,
        // 2: workouts (issue 15, docs/workouts.md) as the user marked them, mirrored by their own
        // anchor (the gateway's workout change position); totals are sums of the quantities.
        """
        CREATE TABLE healthgate.workouts(
            gateway text NOT NULL REFERENCES healthgate.gateways(name),
            uuid uuid NOT NULL,
            activity text NOT NULL,              -- HKWorkoutActivityType's Swift name
            start_s double precision NOT NULL,
            end_s double precision,              -- NULL while in progress
            start_time timestamptz GENERATED ALWAYS AS (to_timestamp(start_s)) STORED,
            end_time timestamptz GENERATED ALWAYS AS (to_timestamp(end_s)) STORED,
            events jsonb NOT NULL,               -- [{"kind": "pause"|"resume", "at": Unix seconds}]
            devices jsonb NOT NULL,              -- names in priority order, [] for every device
            source text NOT NULL,
            PRIMARY KEY (gateway, uuid));
        CREATE INDEX workouts_start ON healthgate.workouts(start_time);
        ALTER TABLE healthgate.gateways ADD COLUMN workout_anchor text
        """,
    ]

    /// The schema version this build writes.
    package static var currentVersion: Int { migrations.count }

    /// Creates schema `healthgate` when missing and applies the migrations it lacks, in one
    /// transaction under the advisory lock. Returns the version before.
    /// - Throws: ``UplinkError`` (78) when the server's schema is newer than this build knows.
    @discardableResult
    package static func migrate(_ connection: PostgresConnection, logger: Logger, target: String) async throws -> Int {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query("CREATE SCHEMA IF NOT EXISTS healthgate", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS healthgate.schema_migrations(
                    version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var before = 0
            for try await v in try await connection.query(
                "SELECT coalesce(max(version), 0)::int4 FROM healthgate.schema_migrations", logger: logger).decode(Int32.self) {
                before = Int(v)
            }
            guard before <= currentVersion else {
                throw UplinkError("the central schema at \(target) is version \(before), newer than this healthgate knows (\(currentVersion)); upgrade healthgate on this gateway.", .config)
            }
            for version in (before + 1)...max(before + 1, currentVersion) where version <= currentVersion {
                // The extended protocol takes one statement per query: run them one by one
                // (no statement of a migration contains a ';' of its own).
                for statement in migrations[version - 1].split(separator: ";")
                where !statement.allSatisfy(\.isWhitespace) {
                    try await connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: logger)
                }
                try await connection.query("INSERT INTO healthgate.schema_migrations(version) VALUES (\(Int32(version)))", logger: logger)
            }
            try await connection.query("COMMIT", logger: logger)
            return before
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
