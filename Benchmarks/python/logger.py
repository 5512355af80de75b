"""The design of common BLE heart-rate loggers: per notification, decode it, INSERT its row and
COMMIT. Usage: logger.py DB N  -> prints {"rows": N, "seconds": s, "rowsPerSecond": r}"""
import json, sys, time
from common import notifications, row, INSERT, connect

db, n = sys.argv[1], int(sys.argv[2])
con = connect(db)
data = notifications(n)
start = time.perf_counter()
for t, p in data:
    r = row(t, p)
    if r is not None:
        con.execute(INSERT, r)
        con.commit()
s = time.perf_counter() - start
print(json.dumps({"rows": n, "seconds": s, "rowsPerSecond": n / s}))
