"""The design of common BLE heart-rate loggers: one INSERT and one COMMIT per notification.
Usage: logger.py DB N  -> prints {"rows": N, "seconds": s, "rowsPerSecond": r}"""
import json, sqlite3, sys, time
from common import rows, INSERT

db, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
con.execute("PRAGMA synchronous=FULL")
data = list(rows(n))
start = time.perf_counter()
for r in data:
    con.execute(INSERT, r)
    con.commit()
s = time.perf_counter() - start
print(json.dumps({"rows": n, "seconds": s, "rowsPerSecond": n / s}))
