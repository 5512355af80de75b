"""Shared workload for the Python baselines: the same heart-rate rows HealthGate's bench inserts
(UUID v7 id, type, value, start/end, source, sensor contact, 2-byte RR blob) into a copy of a
fresh HealthGate database (same schema and indexes)."""
import os, struct, time, random

def uuid7(ms, counter):
    hi = (ms << 16) | 0x7000 | (counter & 0x0FFF)
    lo = (random.getrandbits(62)) | (1 << 63)
    return struct.pack(">QQ", hi, lo)

def rows(n):
    base = time.time()
    ms = int(base * 1000)
    for i in range(n):
        t = base + i * 0.001
        bpm = 60 + (i % 40)
        rr = int(60 * 1024 / bpm)
        yield (uuid7(ms + i // 4096, i), 1, float(bpm), t, t, 1, None, None, 3, None, None, None, None,
               struct.pack("<H", rr), 0)

INSERT = ('INSERT INTO samples(uuid, type_id, value, start, "end", source_id, device_id, sensor_location, '
          'sensor_contact, motion_context, sync_identifier, sync_version, metadata, rr, rr_gap) '
          'VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)')
