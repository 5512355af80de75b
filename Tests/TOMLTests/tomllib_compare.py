"""Compares HealthGate's TOML reader with CPython's tomllib, document by document.

Reads a JSON file: a list of {"doc": TEXT, "ours": TAGGED or {"error": MESSAGE}} written by
TOMLReaderTests; writes a JSON list of the documents where the two disagree. TAGGED is the
tagged form both sides build ({"string": s}, {"integer": "12"}, {"float": BITS-or-"nan"}, …).
A decimal integer outside 64 bits is the one known difference: tomllib (Python ints) takes it,
TOML 1.0 and HealthGate refuse it; such documents are reported as "skipped", never as agreeing.
"""
import json, struct, sys, tomllib, datetime

class OutOfRange(Exception):
    pass

def tagged(v):
    if isinstance(v, bool):
        return {"boolean": v}
    if isinstance(v, int):
        if not -(1 << 63) <= v < (1 << 63):
            raise OutOfRange()
        return {"integer": str(v)}
    if isinstance(v, float):
        return {"float": "nan" if v != v else struct.pack(">d", v).hex()}
    if isinstance(v, str):
        return {"string": v}
    if isinstance(v, datetime.datetime):
        return {"offsetDateTime" if v.tzinfo is not None else "localDateTime": ""}
    if isinstance(v, datetime.date):
        return {"localDate": ""}
    if isinstance(v, datetime.time):
        return {"localTime": ""}
    if isinstance(v, list):
        return {"array": [tagged(e) for e in v]}
    if isinstance(v, dict):
        return {"table": {k: tagged(e) for k, e in v.items()}}
    raise TypeError(type(v))

cases = json.load(open(sys.argv[1], encoding="utf-8"))
report = {"compared": 0, "skipped": 0, "disagree": []}
for case in cases:
    doc, ours = case["doc"], case["ours"]
    if "nested more than" in ours.get("error", ""):
        report["skipped"] += 1   # HealthGate's depth bound; tomllib's is Python's recursion limit
        continue
    try:
        theirs = tagged(tomllib.loads(doc))
    except tomllib.TOMLDecodeError as e:
        theirs = {"error": str(e)}
    except OutOfRange:
        report["skipped"] += 1
        continue
    except RecursionError:
        theirs = {"error": "nested too deep for Python"}
    report["compared"] += 1
    if ("error" in ours) != ("error" in theirs) or ("error" not in ours and ours != theirs):
        report["disagree"].append({"doc": doc, "ours": ours, "tomllib": theirs})
json.dump(report, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False, indent=1)
