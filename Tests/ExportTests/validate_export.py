"""Validates a `healthgate export` file with independent implementations (ExportTests).

    validate_export.py fhir FILE          FHIR R4 Bundle through fhir.resources' models, and every
                                          reference resolves to an entry of the bundle
    validate_export.py omh FILE SCHEMAS   every data point against data-point-1.0 and its body
                                          against the schema its header names (format-checked)

Prints one JSON line (counts) and exits 0, or prints the problems and exits 1.
"""
import json
import os
import sys


def paths(value, prefix=""):
    """Every key path of a JSON value (list positions as [])."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + "." + k)
            out |= paths(v, prefix + "." + k)
    elif isinstance(value, list):
        for v in value:
            out |= paths(v, prefix + "[]")
    return out


def fhir(path):
    from fhir.resources.R4B.bundle import Bundle
    text = open(path, encoding="utf-8").read()
    bundle = Bundle.model_validate_json(text)   # raises on a missing or mistyped field
    doc = json.loads(text)
    # The models keep only the fields FHIR defines: a field they dropped is one FHIR lacks.
    dumped = json.loads(bundle.model_dump_json(by_alias=True, exclude_none=True))
    unknown = sorted(paths(doc) - paths(dumped))
    urls = {e["fullUrl"] for e in doc.get("entry", [])}
    problems, kinds = [f"not a FHIR field: {p}" for p in unknown], {}
    for e in doc.get("entry", []):
        r = e["resource"]
        kinds[r["resourceType"]] = kinds.get(r["resourceType"], 0) + 1
        ref = r.get("device", {}).get("reference")
        if ref is not None and ref not in urls:
            problems.append(f"{e['fullUrl']}: device {ref} is not an entry of the bundle")
    if len(urls) != len(doc.get("entry", [])):
        problems.append("two entries share a fullUrl")
    return problems, {"entries": len(doc.get("entry", [])), "kinds": kinds}


def omh(path, schemas):
    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4
    resources = []
    for name in os.listdir(schemas):
        if name.endswith(".json"):
            with open(os.path.join(schemas, name), encoding="utf-8") as f:
                resources.append((name, Resource.from_contents(json.load(f), default_specification=DRAFT4)))
    registry = Registry().with_resources(resources)

    def validator(name):
        schema = registry[name].contents
        cls = jsonschema.validators.validator_for(schema)
        return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)

    point = validator("data-point-1.0.json")
    bodies, problems, kinds, ids = {}, [], {}, set()
    points = json.load(open(path, encoding="utf-8"))
    for i, p in enumerate(points):
        for e in point.iter_errors(p):
            problems.append(f"data point {i}: {e.message}")
        sid = p["header"]["schema_id"]
        name = f"{sid['name']}-{sid['version']}.json"
        if name not in bodies:
            bodies[name] = validator(name)
        for e in bodies[name].iter_errors(p["body"]):
            problems.append(f"data point {i} ({name}): {e.message} at {list(e.absolute_path)}")
        kinds[sid["name"]] = kinds.get(sid["name"], 0) + 1
        ids.add(p["header"]["id"])
    if len(ids) != len(points):
        problems.append("two data points share an id")
    return problems, {"points": len(points), "kinds": kinds}


if __name__ == "__main__":
    kind = sys.argv[1]
    try:
        problems, summary = fhir(sys.argv[2]) if kind == "fhir" else omh(sys.argv[2], sys.argv[3])
    except Exception as e:  # a model's validation error: say it, fail
        print(f"{type(e).__name__}: {e}")
        sys.exit(1)
    if problems:
        print("\n".join(problems[:50]))
        sys.exit(1)
    print(json.dumps(summary, sort_keys=True))
