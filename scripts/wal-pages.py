#!/usr/bin/env python3
"""What pages each commit in a store's write-ahead log wrote, by table or index.

Usage: scripts/wal-pages.py STORE.sqlite   (its STORE.sqlite-wal must exist: copy both from a
daemon stopped with SIGKILL, or while it runs, before the next checkpoint)

Reads the WAL's frames (docs: sqlite.org/fileformat2.html#walformat), groups them into commits
(a frame with a non-zero "database size" ends one), and names each page by the b-tree that owns
it in a copy of the store with the WAL applied (SQLite's dbstat table). Prints the frames per
commit and, over all commits, how many commits wrote each b-tree's pages: the input for the
SD-card write design in docs/store.md ("Writes").
"""
import collections, os, shutil, sqlite3, struct, sys, tempfile

db = sys.argv[1]
wal = open(db + "-wal", "rb").read()
magic, version, page_size, ckpt, salt1, salt2 = struct.unpack(">IIIIII", wal[:24])
commits, current = [], []
off = 32
while off + 24 + page_size <= len(wal):
    pgno, size_after, s1, s2 = struct.unpack(">IIII", wal[off:off + 16])
    if (s1, s2) != (salt1, salt2):
        break
    current.append(pgno)
    if size_after:
        commits.append(current)
        current = []
    off += 24 + page_size

with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "copy.sqlite")
    shutil.copy(db, copy)
    shutil.copy(db + "-wal", copy + "-wal")
    con = sqlite3.connect(copy)
    owner = {p: n for n, p in con.execute("SELECT name, pageno FROM dbstat")}
    con.close()

per_commit = collections.Counter(len(c) for c in commits)
print(f"page size {page_size}; {len(commits)} commits in the WAL, {sum(map(len, commits))} frames")
print("frames per commit: " + ", ".join(f"{k}: {v}" for k, v in sorted(per_commit.items())))
touched = collections.Counter()
pages = collections.Counter()
for c in commits:
    names = collections.Counter(owner.get(p, "(free or new)") for p in c)
    for n, k in names.items():
        touched[n] += 1
        pages[n] += k
print(f"{'b-tree':32} {'commits writing it':>20} {'pages written':>14} {'pages/commit':>13}")
for n, k in touched.most_common():
    print(f"{n:32} {k:>20} {pages[n]:>14} {pages[n] / max(1, len(commits)):>13.2f}")
