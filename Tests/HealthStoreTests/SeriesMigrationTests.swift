import CSQLite
import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// Migration 3 (quantity series, issue #12) from a schema-2 store made by HealthGate before it
/// (`healthgate` of main at schema 2: `replay` of 30 strap notifications with RR and 20
/// pedometer lines, `add` of a manual heart rate and of steps with metadata, `delete` of one
/// strap sample, `import` of a sync-identified body mass and of its replacement), kept here as
/// SQL text (its schema and rows, every REAL written with the 17 digits that read back exactly —
/// `sqlite3 .dump` prints 15 and would move receipt times by a microsecond) plus what
/// `healthgate samples --json` printed for it.
@Suite("Migration 2 → 3 (series tables): every sample, anchor and tombstone keeps its meaning")
struct SeriesMigrationTests {
    /// The schema-2 store as SQL (`user_version` is set after it).
    static let schema2Dump = #"""
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE types(
    id INTEGER PRIMARY KEY,
    identifier TEXT NOT NULL UNIQUE,
    unit TEXT NOT NULL,
    aggregation TEXT NOT NULL
);
INSERT INTO "types" VALUES(1,'activeEnergyBurned','kJ','cumulative');
INSERT INTO "types" VALUES(2,'bodyMass','kg','discreteArithmetic');
INSERT INTO "types" VALUES(3,'distanceWalkingRunning','m','cumulative');
INSERT INTO "types" VALUES(4,'heartRate','count/min','discreteTemporallyWeighted');
INSERT INTO "types" VALUES(5,'heartRateVariabilitySDNN','ms','discreteArithmetic');
INSERT INTO "types" VALUES(6,'restingHeartRate','count/min','discreteArithmetic');
INSERT INTO "types" VALUES(7,'stepCount','count','cumulative');
CREATE TABLE sources(
    id INTEGER PRIMARY KEY,
    identifier TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    version TEXT,
    tier INTEGER NOT NULL,          -- 0 manual entry, 1 HealthGate's own, 2 other
    rank INTEGER NOT NULL,          -- 1 = highest priority; ranks are 1…n without gaps
    first_seen REAL NOT NULL
);
INSERT INTO "sources" VALUES(1,'org.healthgate.ble','HealthGate BLE',NULL,1,3,1795488304.7046576);
INSERT INTO "sources" VALUES(2,'org.healthgate.serial','HealthGate serial',NULL,1,2,1795488305.12471);
INSERT INTO "sources" VALUES(3,'org.healthgate.manual','Manual entry',NULL,0,1,1795488308.734231);
INSERT INTO "sources" VALUES(4,'Watch','Watch',NULL,2,5,1795488309.0865564);
INSERT INTO "sources" VALUES(5,'Scale','Scale',NULL,2,4,1795488481.4590936);
CREATE TABLE devices(
    id INTEGER PRIMARY KEY,
    name TEXT, manufacturer TEXT, model TEXT,
    hardware_version TEXT, firmware_version TEXT, software_version TEXT,
    local_identifier TEXT UNIQUE,
    udi_device_identifier TEXT,
    kind TEXT NOT NULL DEFAULT 'other' CHECK (kind IN ('ble', 'serial', 'other')),
    address TEXT,
    address_type TEXT,
    alias TEXT,
    last_seen REAL,
    battery INTEGER,
    sensor_location INTEGER,
    extra TEXT
);
INSERT INTO "devices" VALUES(1,'Sim Strap 1','HealthGate','SIM-HR1',NULL,NULL,NULL,'AA:BB:CC:DD:EE:01',NULL,'other',NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "devices" VALUES(2,'Sim Pedometer 1',NULL,NULL,NULL,NULL,NULL,'serial:sim-1',NULL,'other',NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE samples(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid BLOB NOT NULL UNIQUE,
    type_id INTEGER NOT NULL REFERENCES types(id),
    value REAL NOT NULL,
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    source_id INTEGER NOT NULL REFERENCES sources(id),
    device_id INTEGER REFERENCES devices(id),
    sensor_location INTEGER,
    sensor_contact INTEGER,
    motion_context INTEGER,
    sync_identifier TEXT,
    sync_version INTEGER,
    metadata TEXT,
    rr BLOB,
    rr_gap INTEGER
);
INSERT INTO "samples" VALUES(1,X'01A20B714E407001ADFBCFA7953A614F',4,88.0,1790000000.01,1790000000.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'BA02',1);
INSERT INTO "samples" VALUES(3,X'01A20B714E4070039091BA2BA8788216',4,88.0,1790000002.01,1790000002.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'BA02',0);
INSERT INTO "samples" VALUES(4,X'01A20B714E4170D89EC86B25DDB84256',4,88.0,1790000003.01,1790000003.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'BA02',0);
INSERT INTO "samples" VALUES(5,X'01A20B714E4170D991CDE72DD916E0DC',4,88.0,1790000004.01,1790000004.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'BA02',0);
INSERT INTO "samples" VALUES(6,X'01A20B714E4170DA94BE906508CAA2A6',4,88.0,1790000005.01,1790000005.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'BA02',0);
INSERT INTO "samples" VALUES(7,X'01A20B714E4170DBAF6AC92EAFD1C773',4,89.0,1790000006.01,1790000006.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(8,X'01A20B714E4170DC84F2E6AF73058F51',4,89.0,1790000007.01,1790000007.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(9,X'01A20B714E4170DDA5B66F99D068B93A',4,89.0,1790000008.01,1790000008.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(10,X'01A20B714E4170DEB254709D81F635FC',4,89.0,1790000009.01,1790000009.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(11,X'01A20B714E4170DFABE0B2D494076854',4,89.0,1790000010.01,1790000010.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(12,X'01A20B714E4170E0B30DE56DD242503C',4,89.0,1790000011.01,1790000011.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(13,X'01A20B714E4170E18D4305571D3EDA24',4,89.0,1790000012.01,1790000012.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(14,X'01A20B714E4170E2B10B9CFC6ECEF057',4,89.0,1790000013.01,1790000013.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(15,X'01A20B714E4170E388F88BF81E47C295',4,89.0,1790000014.01,1790000014.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(16,X'01A20B714E4170E4ADA1DF41744CDE9C',4,89.0,1790000015.01,1790000015.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(17,X'01A20B714E4170E582C8F5F54CBA5D53',4,89.0,1790000016.01,1790000016.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(18,X'01A20B714E4170E6864C9D1B9EC98A5B',4,89.0,1790000017.01,1790000017.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(19,X'01A20B714E4170E7983172250A500AED',4,89.0,1790000018.01,1790000018.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(20,X'01A20B714E4170E887AF000986975CFE',4,89.0,1790000019.01,1790000019.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(21,X'01A20B714E4170E9A8D4DF785177E08C',4,89.0,1790000020.01,1790000020.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(22,X'01A20B714E4170EA9B10B0790B1A9751',4,89.0,1790000021.01,1790000021.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(23,X'01A20B714E4170EB8353804DB4A32E30',4,89.0,1790000022.01,1790000022.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(24,X'01A20B714E4170EC8D59E841D5FA7886',4,89.0,1790000023.01,1790000023.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(25,X'01A20B714E4170ED9EC2B1A728410661',4,89.0,1790000024.01,1790000024.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(26,X'01A20B714E4170EEA76A3807E2E7DDA6',4,89.0,1790000025.01,1790000025.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(27,X'01A20B714E4170EF8CF0129C32F317D4',4,89.0,1790000026.01,1790000026.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(28,X'01A20B714E4170F0A1B1761291C34E8D',4,89.0,1790000027.01,1790000027.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(29,X'01A20B714E4170F1A13ED8900FD76D0C',4,89.0,1790000028.01,1790000028.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(30,X'01A20B714E4170F2A4B5972AE7629206',4,89.0,1790000029.01,1790000029.01,1,1,NULL,3,NULL,NULL,NULL,NULL,X'B202',0);
INSERT INTO "samples" VALUES(31,X'01A20B714FE47131B004179C8BF50984',7,1.0,1790000001.02,1790000002.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(32,X'01A20B714FE571BF9A54D1F2CA83CD14',7,3.0,1790000002.02,1790000003.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(33,X'01A20B714FE571C0A285D30E32241780',7,2.0,1790000006.02,1790000007.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(34,X'01A20B714FE571C18332FA9DEEDC19FE',7,1.0,1790000008.02,1790000009.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(35,X'01A20B714FE571C283E433A99162BF29',7,3.0,1790000011.02,1790000012.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(36,X'01A20B714FE571C3A8404603853AE37E',7,3.0,1790000012.02,1790000013.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(37,X'01A20B714FE571C4AC78F094E25F6FE5',7,1.0,1790000014.02,1790000015.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(38,X'01A20B714FE571C5B3C8D4714326C1E3',7,3.0,1790000016.02,1790000017.02,2,2,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "samples" VALUES(39,X'01A20B715DFC7DF08D1D68A45AD8701D',4,72.0,1789999200.0,1789999200.0,3,NULL,1,NULL,NULL,NULL,NULL,'{"wasUserEntered":true}',NULL,NULL);
INSERT INTO "samples" VALUES(40,X'01A20B715F5C7D32BEDB28C46B672AAD',7,1000.0,1789977600.0,1789981200.0,4,NULL,NULL,NULL,NULL,NULL,NULL,'{"user":{"note":"hello"},"wasUserEntered":true}',NULL,NULL);
INSERT INTO "samples" VALUES(42,X'01A0BD9D5580702A84C987961B9059C7',2,70.25,1789887600.0,1789887600.0,5,NULL,NULL,NULL,NULL,'scale-1',2,NULL,NULL,NULL);
CREATE TABLE deleted_samples(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid BLOB NOT NULL,
    type_id INTEGER NOT NULL,
    deleted_at REAL NOT NULL
);
INSERT INTO "deleted_samples" VALUES(1,X'01A20B714E407002AAFE1F1A5CACC4CC',4,1795488317.140013);
INSERT INTO "deleted_samples" VALUES(2,X'01A0BD9D55807FC19CFF0FA9A2CC760F',2,1795488481.7729964);
CREATE TABLE state(
    key TEXT PRIMARY KEY,
    value BLOB,
    updated_at REAL NOT NULL
);
CREATE TABLE change_feed(
    key TEXT PRIMARY KEY,
    value NOT NULL
);
INSERT INTO "change_feed" VALUES('store_id','aee5fd16c87a82b3');
INSERT INTO "change_feed" VALUES('pruned_through',0);
INSERT INTO "change_feed" VALUES('tombstone_retention',2592000);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('samples',42);
INSERT INTO sqlite_sequence VALUES('deleted_samples',2);
CREATE INDEX devices_alias ON devices(alias) WHERE alias IS NOT NULL;
CREATE INDEX devices_address ON devices(address) WHERE address IS NOT NULL;
CREATE INDEX samples_type_start ON samples(type_id, start);
CREATE INDEX samples_type_end ON samples(type_id, "end");
CREATE INDEX samples_source ON samples(source_id);
CREATE UNIQUE INDEX samples_sync ON samples(sync_identifier) WHERE sync_identifier IS NOT NULL;
CREATE TRIGGER samples_tombstone AFTER DELETE ON samples BEGIN
    INSERT INTO deleted_samples(uuid, type_id, deleted_at)
    VALUES (old.uuid, old.type_id, (julianday('now') - 2440587.5) * 86400.0);
END;
CREATE INDEX deleted_samples_type ON deleted_samples(type_id, seq);
COMMIT;
"""#

    /// `healthgate samples --json` of that store, printed by the schema-2 build (one object a line).
    static let schema2Samples = #"""
{"device":null,"end":"2026-09-20T07:00:00Z","metadata":{"syncIdentifier":"scale-1","syncVersion":2},"source":"Scale","sourceIdentifier":"Scale","start":"2026-09-20T07:00:00Z","type":"bodyMass","unit":"kg","uuid":"01a0bd9d-5580-702a-84c9-87961b9059c7","value":70.25}
{"device":null,"end":"2026-09-21T09:00:00Z","metadata":{"note":"hello","wasUserEntered":true},"source":"Watch","sourceIdentifier":"Watch","start":"2026-09-21T08:00:00Z","type":"stepCount","unit":"count","uuid":"01a20b71-5f5c-7d32-bedb-28c46b672aad","value":1000}
{"device":null,"end":"2026-09-21T14:00:00Z","metadata":{"heartRateSensorLocation":"chest","wasUserEntered":true},"source":"Manual entry","sourceIdentifier":"org.healthgate.manual","start":"2026-09-21T14:00:00Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-5dfc-7df0-8d1d-68a45ad8701d","value":72}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:20.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":true,"ticks":[698]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:20.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e40-7001-adfb-cfa7953a614f","value":88}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:22.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:21.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe4-7131-b004-179c8bf50984","value":1}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:22.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[698]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:22.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e40-7003-9091-ba2ba8788216","value":88}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:23.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:22.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71bf-9a54-d1f2ca83cd14","value":3}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:23.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[698]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:23.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70d8-9ec8-6b25ddb84256","value":88}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:24.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[698]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:24.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70d9-91cd-e72dd916e0dc","value":88}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:25.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[698]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:25.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70da-94be-906508caa2a6","value":88}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:26.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:26.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70db-af6a-c92eafd1c773","value":89}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:27.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:26.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71c0-a285-d30e32241780","value":2}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:27.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:27.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70dc-84f2-e6af73058f51","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:28.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:28.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70dd-a5b6-6f99d068b93a","value":89}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:29.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:28.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71c1-8332-fa9deedc19fe","value":1}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:29.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:29.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70de-b254-709d81f635fc","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:30.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:30.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70df-abe0-b2d494076854","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:31.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:31.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e0-b30d-e56dd242503c","value":89}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:32.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:31.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71c2-83e4-33a99162bf29","value":3}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:32.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:32.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e1-8d43-05571d3eda24","value":89}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:33.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:32.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71c3-a840-4603853ae37e","value":3}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:33.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:33.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e2-b10b-9cfc6ecef057","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:34.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:34.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e3-88f8-8bf81e47c295","value":89}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:35.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:34.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71c4-ac78-f094e25f6fe5","value":1}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:35.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:35.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e4-ada1-df41744cde9c","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:36.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:36.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e5-82c8-f5f54cba5d53","value":89}
{"device":{"localIdentifier":"serial:sim-1","name":"Sim Pedometer 1"},"end":"2026-09-21T14:13:37.019Z","metadata":{},"source":"HealthGate serial","sourceIdentifier":"org.healthgate.serial","start":"2026-09-21T14:13:36.019Z","type":"stepCount","unit":"count","uuid":"01a20b71-4fe5-71c5-b3c8-d4714326c1e3","value":3}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:37.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:37.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e6-864c-9d1b9ec98a5b","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:38.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:38.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e7-9831-72250a500aed","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:39.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:39.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e8-87af-000986975cfe","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:40.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:40.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70e9-a8d4-df785177e08c","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:41.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:41.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70ea-9b10-b0790b1a9751","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:42.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:42.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70eb-8353-804db4a32e30","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:43.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:43.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70ec-8d59-e841d5fa7886","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:44.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:44.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70ed-9ec2-b1a728410661","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:45.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:45.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70ee-a76a-3807e2e7dda6","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:46.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:46.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70ef-8cf0-129c32f317d4","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:47.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:47.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70f0-a1b1-761291c34e8d","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:48.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:48.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70f1-a13e-d8900fd76d0c","value":89}
{"device":{"localIdentifier":"AA:BB:CC:DD:EE:01","manufacturer":"HealthGate","model":"SIM-HR1","name":"Sim Strap 1"},"end":"2026-09-21T14:13:49.009Z","metadata":{"sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[690]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-09-21T14:13:49.009Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70f2-a4b5-972ae7629206","value":89}
"""#

    /// Column `column` (the first unless given) of every row `sql` gives, as text, read through
    /// the C API. For `EXPLAIN QUERY PLAN`, the plan's text is column 3.
    static func strings(_ path: String, _ sql: String, column: Int32 = 0) -> [String] {
        var db: OpaquePointer?
        guard rawOpen(path, &db, SQLITE_OPEN_READONLY) == SQLITE_OK else { return [] }
        defer { sqlite3_close(db) }
        var st: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &st, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(st) }
        var out: [String] = []
        while sqlite3_step(st) == SQLITE_ROW { out.append(sqlite3_column_text(st, column).map { String(cString: $0) } ?? "NULL") }
        return out
    }

    static func schema2Store() throws -> (dir: URL, path: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("series-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("v2.sqlite").path
        try sqliteExec(path, schema2Dump + "\nPRAGMA user_version = 2;")
        return (dir, path)
    }

    @Test("the dump is a schema-2 store: read-only refuses it until it is migrated")
    func isSchema2() throws {
        let (dir, path) = try Self.schema2Store()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try sqliteInt(path, "PRAGMA user_version") == 2)
        #expect(throws: StoreError.self) { _ = try HealthStore(path: path, mode: .readOnly) }
    }

    @Test("after migrating: same samples (every field), same anchor, same tombstones, series tables empty")
    func keepsEverything() throws {
        let (dir, path) = try Self.schema2Store()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rowsBefore = try sqliteInt(path, "SELECT count(*) FROM samples")
        let contentSQL = "SELECT hex(uuid) || type_id || quote(value) || quote(start) || quote(\"end\") || source_id || quote(device_id) || quote(sensor_location) || quote(sensor_contact) || quote(motion_context) || quote(sync_identifier) || quote(sync_version) || quote(metadata) || quote(rr) || quote(rr_gap) || id AS r FROM samples"
        let tombstonesSQL = "SELECT hex(uuid) || seq || type_id || quote(deleted_at) FROM deleted_samples ORDER BY seq"
        let contentBefore = Self.strings(path, contentSQL + " ORDER BY id"), tombstonesBefore = Self.strings(path, tombstonesSQL)
        #expect(contentBefore.count == 40 && tombstonesBefore.count == 2)
        let store = try HealthStore(path: path)
        #expect(try store.schemaVersion == Schema.version)
        #expect(Schema.version >= 3)
        #expect(try sqliteInt(path, "SELECT count(*) FROM samples") == rowsBefore)
        #expect(try sqliteInt(path, "SELECT count(*) FROM series") == 0)
        #expect(try sqliteInt(path, "SELECT count(*) FROM series_chunks") == 0)

        #expect(Self.strings(path, contentSQL + " ORDER BY id") == contentBefore)
        #expect(Self.strings(path, tombstonesSQL) == tombstonesBefore)

        // Every sample reads back as the schema-2 build printed it. That build printed dates
        // cut to milliseconds (today's prints the digits that read back exactly), so dates
        // compare as instants within that millisecond; every other field compares exactly.
        let expected = Self.schema2Samples.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        let got = try store.samples(SampleQuery())
        #expect(got.count == 40 && expected.count == 40)
        for (g, e) in zip(got, expected) {
            var object = try SampleJSON.object(g)
            var old = e
            for key in ["start", "end"] {
                let printed = try #require(ISO8601.date(old.removeValue(forKey: key) as? String ?? ""))
                let now = try #require(ISO8601.date(object.removeValue(forKey: key) as? String ?? ""))
                let delta = now.timeIntervalSince(printed)
                #expect(delta >= 0 && delta < 0.001, "\(g.uuid) \(key)")
            }
            #expect(object as NSDictionary == old as NSDictionary, "\(g.uuid)")
        }

        // The anchor of everything is unchanged, and an anchor from before the sync replacement
        // still yields exactly that replacement.
        let all = try store.changes(since: nil)
        #expect(all.anchor.description == "v1:aee5fd16c87a82b3:42:2")
        #expect(all.samples.count == 40)
        #expect(all.deleted.map(\.uuid.uuidString) == ["01A20B71-4E40-7002-AAFE-1F1A5CACC4CC", "01A0BD9D-5580-7FC1-9CFF-0FA9A2CC760F"])
        let since = try store.changes(since: try ChangeAnchor(string: "v1:aee5fd16c87a82b3:40:1"))
        #expect(since.deleted.map(\.uuid.uuidString) == ["01A0BD9D-5580-7FC1-9CFF-0FA9A2CC760F"])
        #expect(since.samples.map(\.uuid.uuidString) == ["01A0BD9D-5580-702A-84C9-87961B9059C7"])
        #expect(since.anchor.description == "v1:aee5fd16c87a82b3:42:2")

        // The next sample saved gets the next id: the sequence went on where it was.
        try store.save([try sample(.heartRate, 70, from: 0)])
        #expect(try sqliteInt(path, "SELECT max(id) FROM samples") == 43)

        // Opening again does not migrate again; the file is stamped as HealthGate's.
        let again = try HealthStore(path: path, mode: .readOnly)
        #expect(try again.schemaVersion == Schema.version)
        #expect(try sqliteInt(path, "PRAGMA application_id") == Int64(Schema.applicationID))
    }
}
