"""The naive importer `healthgate import --jsonl` is measured against (issue 12): json.loads per
line, build the samples row, executemany 5,000 rows per transaction into a copy of a fresh
HealthGate store (same schema, indexes, foreign keys). Values are taken as given (canonical unit),
no validation. Usage: import_baseline.py DB FILE -> {"rows": n, "seconds": s, "rowsPerSecond": r}"""
import json, os, sqlite3, sys, time, uuid
from datetime import datetime

db, path = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
con.execute("PRAGMA synchronous=" + os.environ.get("HG_BENCH_SYNCHRONOUS", "NORMAL"))
con.execute("PRAGMA foreign_keys=ON")
types = dict(con.execute("SELECT identifier, id FROM types"))
contact = {"notSupported": 0, "notDetected": 2, "detected": 3}
ids = {}
INSERT = ('INSERT INTO samples(uuid, type_id, value, start, "end", source_id, device_id, sensor_location, '
          'sensor_contact, motion_context, sync_identifier, sync_version, metadata, rr, rr_gap) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(uuid) DO NOTHING')
def row_id(table, key, insert, args):
    if key not in ids:
        con.execute(insert, args)
        ids[key] = con.execute("SELECT id FROM %s WHERE %s" % (table, key[1]), (key[2],)).fetchone()[0]
    return ids[key]
ts = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
start, rows, n = time.perf_counter(), [], 0
for line in open(path, "rb"):
    if not line.strip(): continue
    o = json.loads(line); m = o.get("metadata") or {}; d = o.get("device") or {}; rr = o.get("rrIntervals")
    src = row_id("sources", ("s", "identifier = ?", o["sourceIdentifier"]), "INSERT OR IGNORE INTO sources(identifier, name, tier, rank, first_seen) VALUES (?, ?, 2, (SELECT coalesce(max(rank), 0) + 1 FROM sources), 0)", (o["sourceIdentifier"], o["source"]))
    dev = row_id("devices", ("d", "local_identifier = ?", d.get("localIdentifier")), "INSERT OR IGNORE INTO devices(name, local_identifier) VALUES (?, ?)", (d.get("name"), d.get("localIdentifier"))) if d else None
    rows.append((uuid.UUID(o["uuid"]).bytes, types[o["type"]], float(o["value"]), ts(o["start"]), ts(o["end"]), src, dev, None, contact.get(m.get("sensorContact")), None, m.get("syncIdentifier"), m.get("syncVersion"), None,
                 b"".join(t.to_bytes(2, "little") for t in rr["ticks"]) if rr else None, int(rr["precededByGap"]) if rr else None))
    if len(rows) == 5000:
        with con: con.executemany(INSERT, rows)
        n += len(rows); rows = []
with con: con.executemany(INSERT, rows)
n += len(rows); s = time.perf_counter() - start
print(json.dumps({"rows": n, "seconds": s, "rowsPerSecond": n / s}))
