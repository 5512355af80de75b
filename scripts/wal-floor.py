#!/usr/bin/env python3
"""What one small commit costs an SD card through SQLite's WAL, on this machine's disk.

Usage: scripts/wal-floor.py [DIR]   (default /var/tmp: a real disk; tmpfs accounts no writes)

For each SQLite page size (4096, the default HealthGate stores are created with, and 1024), for
a commit that appends one row of ROW bytes to one table (the least a commit can write: one leaf
page at a b-tree's right edge, the shape of an append-only log) and for two sync policies
(`synchronous=FULL`: an fsync of the WAL at every commit, as HealthGate's group commit does at
one commit a second; `NORMAL` with no fsync between commits), it commits 300 times and reads
this process's /proc/self/io write_bytes (bytes sent to the storage layer, counted per 4 KiB
page-cache page made dirty). Prints bytes per commit and the ratio to one 4 KiB page: the
floor of issue #12's write goal (docs/store.md, "Writes").

Why FULL costs two pages for one: a WAL frame is the page plus a 24-byte header (4,120 bytes),
so it always straddles two 4 KiB file pages, and after each fsync the next commit dirties the
shared one again.
"""
import os, shutil, sqlite3, sys, tempfile

BASE = sys.argv[1] if len(sys.argv) > 1 else "/var/tmp"


def write_bytes():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("write_bytes:"):
                return int(line.split()[1])


def per_commit(page, sync, row, commits=300):
    d = tempfile.mkdtemp(dir=BASE, prefix="hg-wal-floor.")
    try:
        con = sqlite3.connect(os.path.join(d, "s.sqlite"), isolation_level=None)
        con.execute(f"PRAGMA page_size={page}")
        con.execute("PRAGMA journal_mode=WAL")
        con.execute(f"PRAGMA synchronous={sync}")
        con.execute("PRAGMA wal_autocheckpoint=4000")
        con.execute("CREATE TABLE log(id INTEGER PRIMARY KEY, data BLOB)")
        blob = os.urandom(row)
        for _ in range(50):   # past the first pages
            con.execute("INSERT INTO log(data) VALUES (?)", (blob,))
        os.sync()
        before = write_bytes()
        for _ in range(commits):
            con.execute("BEGIN IMMEDIATE")
            con.execute("INSERT INTO log(data) VALUES (?)", (blob,))
            con.execute("COMMIT")
        after = write_bytes()
        con.close()
        return (after - before) / commits
    finally:
        shutil.rmtree(d, ignore_errors=True)


print(f"{'page size':>9} {'synchronous':>11} {'row B':>6} {'B/commit':>9} {'x 4 KiB floor':>14}")
for page in (4096, 1024):
    for sync in ("FULL", "NORMAL"):
        for row in (150, 600):
            b = per_commit(page, sync, row)
            print(f"{page:>9} {sync:>11} {row:>6} {b:>9.0f} {b / 4096:>14.2f}")
