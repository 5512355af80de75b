"""A batched Python writer: executemany, 1,000 rows per transaction.
Usage: batched.py DB N  -> prints {"rows": N, "seconds": s, "rowsPerSecond": r}"""
import json, sqlite3, sys, time
from common import rows, INSERT

db, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
con.execute("PRAGMA synchronous=FULL")
data = list(rows(n))
start = time.perf_counter()
for i in range(0, n, 1000):
    with con:
        con.executemany(INSERT, data[i:i + 1000])
s = time.perf_counter() - start
print(json.dumps({"rows": n, "seconds": s, "rowsPerSecond": n / s}))
