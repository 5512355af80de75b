#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs into Tests/FuzzTargetsTests/Corpus/<target>/seed-*.

Seeds are valid inputs of each parser (from the shared Heart Rate Measurement vectors, the
docs' pedometer lines, the sample configuration, an export line, a capture), so the fuzzer
starts from the shapes the parsers accept. Run it again after adding a seed here; inputs a
fuzzing run found worth keeping (and every crash reproducer) are committed beside the seeds.
Usage: scripts/fuzz-seeds.py [VECTORS.jsonl]   (default: ../shared/vectors/heart-rate-measurement.jsonl)
"""
import json, os, struct, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
corpus = os.path.join(root, "Tests", "FuzzTargetsTests", "Corpus")
vectors = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "vectors", "heart-rate-measurement.jsonl")

def write(target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

# Heart Rate Measurement payloads (0x2A37): the shared vectors, plus the field combinations.
if os.path.exists(vectors):
    for i, line in enumerate(open(vectors)):
        write("heart-rate-measurement", f"vector-{i:02}", bytes.fromhex(json.loads(line)["hex"]))
write("heart-rate-measurement", "u16-energy-rr", bytes([0x1F, 0x40, 0x01, 0x10, 0x00, 0x00, 0x03, 0x10, 0x03]))

# Profile values: selector byte (0 location, 1 battery, 2 device information) then the value.
write("profile-values", "location-chest", bytes([0, 1]))
write("profile-values", "battery-87", bytes([1, 87]))
write("profile-values", "manufacturer", bytes([2]) + b"Polar Electro Oy\x00\x00")

# ATT PDUs: the GATT client's conversation with a strap.
att = {
    "exchange-mtu-rsp": bytes([0x03, 0x17, 0x00]),
    "read-by-group-type-rsp": bytes([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x0D, 0x18]),
    "read-by-type-rsp": bytes([0x09, 0x07, 0x02, 0x00, 0x10, 0x03, 0x00, 0x37, 0x2A]),
    "find-information-rsp": bytes([0x05, 0x01, 0x04, 0x00, 0x02, 0x29]),
    "read-rsp": bytes([0x0B, 0x01]),
    "write-rsp": bytes([0x13]),
    "error-rsp": bytes([0x01, 0x10, 0x01, 0x00, 0x0A]),
    "notification": bytes([0x1B, 0x03, 0x00, 0x16, 0x4D, 0x16, 0x03]),
    "indication": bytes([0x1D, 0x09, 0x00, 0x01]),
}
for name, pdu in att.items():
    write("att-pdu", name, pdu)

# Advertising data and an HCI LE Advertising Report event (packet type 0x04, LE meta 0x3E).
ad = bytes([0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18, 0x0A, 0x09]) + b"Polar H10" + bytes([0x02, 0x0A, 0x04, 0x05, 0xFF, 0x6B, 0x00, 0x72, 0x08])
write("advertising", "ad-polar", ad)
report = bytes([0x01, 0x00, 0x00]) + bytes([0x02, 0x22, 0xD0, 0xAA, 0xBB, 0xCC][::-1]) + bytes([len(ad)]) + ad + bytes([0xC5])
write("advertising", "hci-le-report", bytes([0x04, 0x3E, len(report) + 1, 0x02]) + report)

# Pedometer byte streams: every line format the docs name, CRLF and LF.
lines = ['{"steps":1234,"t":1700000001.25,"seq":7,"boot":"b3"}', "steps:1234,seq:7", "steps=1235 seq=8", "steps: 1236",
         "1237", "123.00", "Step: 1234", "Steps: 12, Activity: Walking", "Step count: 5\tDetected activity type: Walking",
         "Total Steps: 123.00", "Current Run Steps: 4.00", '{"steps":10,"dsteps":3,"t0":1700000000,"t1":1700000001}']
write("pedometer-lines", "formats-lf", "\n".join(lines) + "\n")
write("pedometer-lines", "formats-crlf", "\r\n".join(lines) + "\r\n")

# Step counter: a selector byte, then 13-byte readings (see FuzzTargets.stepCounter).
def reading(count, dt=None, seq=None, delta=None, advance=2):
    return struct.pack("<I", count) + bytes([1 if dt is not None else 0, (dt or 0) & 0xFF, 1 if seq is not None else 0, (seq or 0) & 0xFF,
                                             0, 1 if delta is not None else 0, (delta or 0) & 0xFF, 0, advance])
write("step-counter", "rising", bytes([1]) + b"".join(reading(100 + 5 * i, seq=i) for i in range(8)))
write("step-counter", "reset-and-wrap", bytes([2]) + b"".join(reading(c) for c in [65530, 65534, 3, 9, 0, 4]))

# Configuration: the sample file and a minimal one.
sample = os.path.join(root, "samples", "healthgate.toml")
if os.path.exists(sample):
    write("configuration", "sample", open(sample, "rb").read())
write("configuration", "minimal", '[store]\npath = "/var/lib/healthgate/health.sqlite"\n\n[[strap]]\naddress = "C4:7C:8D:6A:1F:02"\n')

# Import lines: the shapes `samples --json` / `export --format jsonl` write.
write("import-line", "heart-rate", '{"uuid":"0190a4a8-5c00-7000-8000-000000000001","type":"heartRate","value":72,"unit":"count/min",'
      '"start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:00:00Z","source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble",'
      '"device":{"name":"Polar H10","localIdentifier":"ble:C4:7C:8D:6A:1F:02"},"metadata":{"heartRateSensorLocation":"chest"},'
      '"rrIntervals":{"ticks":[812,790],"precededByGap":false}}')
write("import-line", "steps", '{"type":"stepCount","value":1000,"unit":"count","start":"2026-11-02T08:00:00+01:00",'
      '"end":"2026-11-02T09:00:00+01:00","source":"Watch","metadata":{"syncIdentifier":"w-1","syncVersion":1}}')

# Change-feed anchors (v1:<store id>:<last sample id>:<last tombstone seq>).
write("change-anchor", "v1", "v1:0123456789abcdef:42:7")

# A capture: header, a notification and a serial line.
write("capture", "mixed", '{"format":"healthgate-capture","version":1}\n'
      '{"address":"00:22:D0:AA:BB:CC","characteristic":"2A37","device":{"name":"Polar H7"},"hex":"164d1603","kind":"ble","t":1800000000.125}\n'
      '{"device":{"name":"pedometer"},"kind":"serial","line":"steps:42,seq:3","t":1800000001.5}\n')
print("seeds written under", os.path.relpath(corpus, root))
