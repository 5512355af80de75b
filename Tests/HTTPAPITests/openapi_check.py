"""Checks HealthGate's OpenAPI document with an independent validator, and real responses against it.

Usage: openapi_check.py SPEC EXCHANGES
  SPEC       Sources/HTTPAPI/openapi.json
  EXCHANGES  a JSON array of {"method", "path" (the document's path template), "status", "body"}
             recorded from a running `healthgate serve` (OpenAPITests).
Prints one line per problem and exits 1 if there is any; prints "ok: …" and exits 0 otherwise.
"""
import json
import sys

from jsonschema import Draft202012Validator
from openapi_spec_validator import validate


def main() -> int:
    spec = json.load(open(sys.argv[1]))
    exchanges = json.load(open(sys.argv[2]))
    validate(spec)  # raises on an invalid OpenAPI 3.1 document
    problems = []
    for x in exchanges:
        op = spec["paths"].get(x["path"], {}).get(x["method"].lower())
        if op is None:
            problems.append(f"{x['method']} {x['path']}: not in the document")
            continue
        response = op["responses"].get(str(x["status"]))
        if response is None:
            problems.append(f"{x['method']} {x['path']}: status {x['status']} is not documented")
            continue
        media = response.get("content", {}).get("application/json")
        if media is None:
            continue  # text/plain (metrics): nothing to check structurally
        pointer = "/".join(["#/paths", x["path"].replace("~", "~0").replace("/", "~1"), x["method"].lower(),
                            "responses", str(x["status"]), "content", "application~1json", "schema"])
        schema = dict(spec)
        schema["$ref"] = pointer
        validator = Draft202012Validator(schema)
        for e in validator.iter_errors(json.loads(x["body"])):
            problems.append(f"{x['method']} {x['path']} {x['status']}: {e.message} at {list(e.absolute_path)}")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"ok: the document is valid OpenAPI 3.1 and {len(exchanges)} responses match it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
