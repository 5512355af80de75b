#!/usr/bin/env python3
"""Generates the sample captures in samples/ (docs/capture-format.md), deterministically:
  strap-session.capture.jsonl      one strap, 5 minutes at 1 Hz, RR intervals, a contact loss
  pedometer-session.capture.jsonl  one pedometer, 5 minutes, JSON and key:value lines, a banner, noise
  mixed.capture.jsonl              2 straps at 4 Hz + 2 pedometers at 2 lines/s, interleaved (~12,000 records, ~2 MB)
Run: python3 samples/make-captures.py"""
import json, math, os, random

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1_790_000_000.0
random.seed(7)

def header():
    return json.dumps({"format": "healthgate-capture", "version": 1}, separators=(",", ":"))

def strap(k):
    return {"name": f"Sim Strap {k}", "manufacturer": "HealthGate", "model": "SIM-HR1",
            "localIdentifier": f"AA:BB:CC:DD:EE:{k:02X}"}

def pedometer(k):
    return {"name": f"Sim Pedometer {k}", "localIdentifier": f"serial:sim-{k}"}

def hrm(bpm, rr, contact=True):
    flags = 0x10 | (0x06 if contact else 0x04)
    b = [flags, bpm]
    for t in rr:
        b += [t & 0xFF, t >> 8]
    return bytes(b).hex().upper()

def strap_records(k, seconds, hz):
    out = []
    for i in range(int(seconds * hz)):
        t = T0 + i / hz + k * 0.01
        bpm = int(65 + 25 * (1 + math.sin(i / (30 * hz) + k)) / 2)
        rr = [int(60 * 1024 / bpm)]
        contact = not (100 <= i % 400 < 104)   # a brief loss of skin contact now and then
        out.append({"t": round(t, 3), "kind": "ble", "device": strap(k), "address": strap(k)["localIdentifier"],
                    "characteristic": "2A37", "hex": hrm(bpm if contact else 0, rr if contact else [], contact)})
    return out

def pedometer_records(k, seconds, every):
    out = [{"t": T0 + k * 0.02, "kind": "serial", "device": pedometer(k), "line": "PEDO v1.2 boot ok"}]
    steps, seq = 1000 * k, 0
    for i in range(1, int(seconds / every)):
        t = T0 + i * every + k * 0.02
        seq += 1
        steps += random.randint(0, 3)
        if seq % 37 == 0:
            line = "#@!noise"
        elif seq % 5 == 0:
            line = f"steps:{steps},seq:{seq}"
        else:
            line = json.dumps({"steps": steps, "seq": seq}, separators=(",", ":"))
        out.append({"t": round(t, 3), "kind": "serial", "device": pedometer(k), "line": line})
    return out

def write(name, records):
    records.sort(key=lambda r: r["t"])
    with open(os.path.join(HERE, name), "w") as f:
        f.write(header() + "\n")
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(name, len(records), "records")

write("strap-session.capture.jsonl", strap_records(1, 300, 1))
write("pedometer-session.capture.jsonl", pedometer_records(1, 300, 1.0))
write("mixed.capture.jsonl", strap_records(1, 1000, 4) + strap_records(2, 1000, 4)
      + pedometer_records(1, 1000, 0.5) + pedometer_records(2, 1000, 0.5))
