"""A batched Python writer: decode each notification, build its row, executemany 1,000 rows
per transaction. Usage: batched.py DB N  -> prints {"rows": N, "seconds": s, "rowsPerSecond": r}"""
import json, sys, time
from common import notifications, row, INSERT, connect

db, n = sys.argv[1], int(sys.argv[2])
con = connect(db)
data = notifications(n)
start = time.perf_counter()
for i in range(0, n, 1000):
    batch = [r for r in (row(t, p) for t, p in data[i:i + 1000]) if r is not None]
    with con:
        con.executemany(INSERT, batch)
s = time.perf_counter() - start
print(json.dumps({"rows": n, "seconds": s, "rowsPerSecond": n / s}))
