"""Shared workload for the Python baselines: the notifications HealthGate's end-to-end bench
feeds its pipeline (Heart Rate Measurement payloads with receipt times), decoded and turned into
the same rows (UUID v7 id, type, value, start/end, source, device, sensor contact, RR blob) in a
copy of a fresh HealthGate database (same schema, indexes and constraints).

The timed part of each baseline is what a Python logger does per notification: decode the
payload, build the row, insert it. Generating the notifications is not timed (in HealthGate's
bench it is not either)."""
import os, struct, time, random

# Row ids in the bench's template database: the "org.healthgate.ble" source and the bench strap
# device are the first rows of their tables; the heartRate type's id is looked up (connect()).
TYPE_ID, SOURCE_ID, DEVICE_ID = None, 1, 1

def notifications(n):
    """(receipt time, payload) pairs: flags 0x16 (uint8 bpm, contact detected, RR present),
    bpm 60..99, one RR interval of 60/bpm s in 1/1024 s ticks — exactly what bench.swift sends."""
    base = time.time()
    out = []
    for i in range(n):
        bpm = 60 + (i % 40)
        rr = (60 * 1024) // bpm
        out.append((base + i * 0.001, bytes((0x16, bpm, rr & 0xFF, rr >> 8))))
    return out

def decode(payload):
    """Heart Rate Measurement (0x2A37): (bpm, sensor contact 0..3, energy or None, [RR ticks])."""
    flags = payload[0]
    if flags & 0x01:
        bpm = payload[1] | payload[2] << 8
        i = 3
    else:
        bpm = payload[1]
        i = 2
    contact = (flags >> 1) & 0x03
    energy = None
    if flags & 0x08:
        energy = payload[i] | payload[i + 1] << 8
        i += 2
    rr = []
    if flags & 0x10:
        while i + 1 < len(payload):
            rr.append(payload[i] | payload[i + 1] << 8)
            i += 2
    return bpm, contact, energy, rr

_last_ms = 0
_counter = 0

def uuid7():
    """A time-ordered UUID (RFC 9562 v7, 12-bit counter method), as 16 bytes."""
    global _last_ms, _counter
    ms = time.time_ns() // 1_000_000
    if ms <= _last_ms:
        ms = _last_ms
        _counter += 1
        if _counter > 0x0FFF:
            ms += 1
            _counter = random.getrandbits(9)
    else:
        _counter = random.getrandbits(9)
    _last_ms = ms
    hi = (ms << 16) | 0x7000 | _counter
    lo = random.getrandbits(62) | (1 << 63)
    return struct.pack(">QQ", hi, lo)

def row(t, payload):
    """The samples row for one notification (None when it carries no heart rate)."""
    bpm, contact, _, rr = decode(payload)
    if bpm == 0:
        return None
    # HealthGate stores the flag value, with 1 (also "not supported") folded into 0.
    stored_contact = contact if contact >= 2 else 0
    blob = struct.pack("<%dH" % len(rr), *rr) if rr else None
    return (uuid7(), TYPE_ID, float(bpm), t, t, SOURCE_ID, DEVICE_ID, None, stored_contact, None, None,
            None, None, blob, 0 if rr else None)

INSERT = ('INSERT INTO samples(uuid, type_id, value, start, "end", source_id, device_id, sensor_location, '
          'sensor_contact, motion_context, sync_identifier, sync_version, metadata, rr, rr_gap) '
          'VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(uuid) DO NOTHING')

def connect(db):
    """The connection as HealthGate's writer configures it (WAL is already set in the file)."""
    import sqlite3
    con = sqlite3.connect(db)
    con.execute("PRAGMA synchronous=" + os.environ.get("HG_BENCH_SYNCHRONOUS", "FULL"))
    con.execute("PRAGMA foreign_keys=ON")
    global TYPE_ID
    TYPE_ID = con.execute("SELECT id FROM types WHERE identifier = 'heartRate'").fetchone()[0]
    return con
