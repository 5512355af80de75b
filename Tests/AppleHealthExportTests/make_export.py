#!/usr/bin/env python3
"""A synthetic Apple Health export for AppleHealthExportTests: the independent oracle.

Writes DIR/export.xml (Apple's layout: XML declaration, DOCTYPE with its internal subset,
<HealthData>, <ExportDate>, <Me>, records, correlations, workouts, activity summaries …),
DIR/export.zip (apple_health_export/export_cda.xml first, then export.xml and a route file, as
the Health app zips them) and DIR/summary.json: what it wrote, computed here on its own, without
the reader's code: per HealthGate type the good records with their values in the canonical unit
and their instants as Unix seconds, the unknown types, the bad records with their line numbers,
the HRV beat lists as RR ticks, the workouts with the events that count.

Deterministic by --seed (random.Random(seed); no clock, no hash randomisation involved).
`--big BYTES` writes a plain, large export instead (heart rate, steps, energy in Cal, HRV lists),
streamed to disk line by line, with only counts in the summary: for the memory test and the
benchmark. Standard library only.
"""
import argparse
import datetime as dt
import json
import os
import random
import zipfile

UTC = dt.timezone.utc

DOCTYPE = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 13 -->
<!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
<!ATTLIST HealthData
  locale CDATA #REQUIRED
>
<!ELEMENT ExportDate EMPTY>
<!ATTLIST ExportDate
  value CDATA #REQUIRED
>
<!ELEMENT Me EMPTY>
<!ATTLIST Me
  HKCharacteristicTypeIdentifierDateOfBirth         CDATA #REQUIRED
  HKCharacteristicTypeIdentifierBiologicalSex       CDATA #REQUIRED
>
<!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
<!ATTLIST Record
  type          CDATA #REQUIRED
  unit          CDATA #IMPLIED
  value         CDATA #IMPLIED
  sourceName    CDATA #REQUIRED
  sourceVersion CDATA #IMPLIED
  device        CDATA #IMPLIED
  creationDate  CDATA #IMPLIED
  startDate     CDATA #REQUIRED
  endDate       CDATA #REQUIRED
>
<!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
<!ELEMENT Correlation ((MetadataEntry|Record)*)>
<!ATTLIST Correlation
  type          CDATA #REQUIRED
  sourceName    CDATA #REQUIRED
  startDate     CDATA #REQUIRED
  endDate       CDATA #REQUIRED
>
<!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
<!ATTLIST Workout
  workoutActivityType   CDATA #REQUIRED
  duration              CDATA #IMPLIED
  durationUnit          CDATA #IMPLIED
  sourceName            CDATA #REQUIRED
  startDate             CDATA #REQUIRED
  endDate               CDATA #REQUIRED
>
<!ELEMENT FileReference EMPTY>
<!ATTLIST FileReference
  path CDATA #REQUIRED
>
<!ENTITY % odd "a ']' and a '>' inside a quoted entity value">
]>
"""

# HealthGate type, Apple's identifier, (unit as written, factor onto the canonical unit) choices, value range
MAPPED = {
    "heartRate": ("HKQuantityTypeIdentifierHeartRate", [("count/min", 1.0)], (45, 180), True),
    "restingHeartRate": ("HKQuantityTypeIdentifierRestingHeartRate", [("count/min", 1.0)], (45, 70), True),
    "heartRateVariabilitySDNN": ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", [("ms", 1.0)], (15, 120), False),
    "stepCount": ("HKQuantityTypeIdentifierStepCount", [("count", 1.0)], (1, 3000), True),
    "activeEnergyBurned": ("HKQuantityTypeIdentifierActiveEnergyBurned",
                           [("kcal", 4.184), ("Cal", 4.184), ("kJ", 1.0)], (0.1, 40), False),
    "distanceWalkingRunning": ("HKQuantityTypeIdentifierDistanceWalkingRunning",
                               [("km", 1000.0), ("mi", 1609.344), ("m", 1.0), ("ft", 0.3048)], (0.01, 2), False),
    "bodyMass": ("HKQuantityTypeIdentifierBodyMass", [("kg", 1.0), ("lb", 0.45359237), ("g", 0.001)], (55, 95), False),
}
UNKNOWN = [("HKCategoryTypeIdentifierSleepAnalysis", None, "HKCategoryValueSleepAnalysisAsleepCore"),
           ("HKQuantityTypeIdentifierFlightsClimbed", "count", "3"),
           ("HKQuantityTypeIdentifierOxygenSaturation", "%", "0.97"),
           ("HKCategoryTypeIdentifierAppleStandHour", None, "HKCategoryValueAppleStandHourStood")]

OFFSETS = [60, 120, -300, 330, -210, 345, 0, -480]   # minutes east of UTC: +0530, -0330, +0545 among them

SOURCES = [  # (sourceName as XML attribute text, its decoded value, version, device attribute text, decoded device)
    ("Alice\u2019s Apple Watch", "Alice\u2019s Apple Watch", "9.1",
     "&lt;&lt;HKDevice: 0x283b4c0a0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:9.1&gt;",
     {"name": "Apple Watch", "manufacturer": "Apple Inc.", "model": "Watch", "hardwareVersion": "Watch6,1", "softwareVersion": "9.1"}),
    ("Alice&apos;s iPhone", "Alice's iPhone", "16.2",
     "&lt;&lt;HKDevice: 0x2812f6e90&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,2, software:16.2&gt;",
     {"name": "iPhone", "manufacturer": "Apple Inc.", "model": "iPhone", "hardwareVersion": "iPhone14,2", "softwareVersion": "16.2"}),
    ("Withings &amp; Co", "Withings & Co", "6.3.1",
     "&lt;&lt;HKDevice: 0x1&gt;, name:Body+, manufacturer:Withings, Inc., model:WBS05, localIdentifier:00:24:e4:aa:bb:cc&gt;",
     {"name": "Body+", "manufacturer": "Withings, Inc.", "model": "WBS05", "localIdentifier": "00:24:e4:aa:bb:cc"}),
    ("Strava", "Strava", None, None, None),
    ("Health", "Health", "16.2", None, None),
]

FACTOR = {u: f for (_, units, _, _) in MAPPED.values() for (u, f) in units}


def fmt(instant, offset_minutes):
    """Apple's date format: local wall-clock time and the offset, `2023-01-05 07:31:21 +0100`."""
    tz = dt.timezone(dt.timedelta(minutes=offset_minutes))
    local = instant.astimezone(tz)
    sign = "+" if offset_minutes >= 0 else "-"
    m = abs(offset_minutes)
    return local.strftime("%Y-%m-%d %H:%M:%S") + " %s%02d%02d" % (sign, m // 60, m % 60)


def unix(instant):
    return int(instant.timestamp())


def beat_clock(cs_of_day):
    """A beat's wall-clock time as the export writes it: `7:31:21.40 PM` (centiseconds kept)."""
    cs_of_day %= 86400 * 100
    s, cs = divmod(cs_of_day, 100)
    h, rest = divmod(s, 3600)
    mi, se = divmod(rest, 60)
    h12 = h % 12 or 12
    return "%d:%02d:%02d.%02d %s" % (h12, mi, se, cs, "AM" if h < 12 else "PM")


class Writer:
    def __init__(self, f):
        self.f = f
        self.line = 1

    def write(self, text):
        self.f.write(text)
        self.line += text.count("\n")


def record_xml(apple_type, unit, value, src, start, end, off, created=None, inner="", one_line=False):
    attrs = ['type="%s"' % apple_type, 'sourceName="%s"' % src[0]]
    if src[2]:
        attrs.append('sourceVersion="%s"' % src[2])
    if src[3]:
        attrs.append('device="%s"' % src[3])
    if unit is not None:
        attrs.append('unit="%s"' % unit)
    attrs += ['creationDate="%s"' % fmt(created or end, off), 'startDate="%s"' % fmt(start, off),
              'endDate="%s"' % fmt(end, off), 'value="%s"' % value]
    head = " <Record " + " ".join(attrs)
    if not inner:
        return head + "/>" + ("" if one_line else "\n")
    return head + ">\n" + inner + " </Record>\n"


def small(out_dir, seed):
    rnd = random.Random(seed)
    summary = {"records": [], "unknownRecordTypes": {}, "unknownElements": {}, "bad": [], "hrv": [],
               "workouts": [], "correlationCopies": 0, "dateOfBirth": "1990-05-17", "exportDate": None}
    path = os.path.join(out_dir, "export.xml")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        w = Writer(f)
        w.write(DOCTYPE)
        w.write('<HealthData locale="en_US">\n')
        export_date = dt.datetime(2023, 6, 1, 9, 0, 0, tzinfo=UTC)
        summary["exportDate"] = unix(export_date)
        w.write(' <ExportDate value="%s"/>\n' % fmt(export_date, 120))
        w.write(' <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-05-17" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" '
                'HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" '
                'HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>\n')

        def good(hg_type, unit, raw, src, start, end, metadata=None, motion=None, sync=None, user_entered=None):
            summary["records"].append({
                "type": hg_type, "value": float(raw) * FACTOR[unit], "unit": unit, "start": unix(start), "end": unix(end),
                "source": src[1], "sourceVersion": src[2], "device": src[4], "line": w.line,
                "metadata": metadata or {}, "motionContext": motion, "sync": sync, "wasUserEntered": user_entered})

        t = dt.datetime(2023, 1, 5, 6, 0, 0, tzinfo=UTC)
        # Apple sorts records by type: so do we, with sources and offsets mixed within a type.
        for hg_type, (apple_type, units, (lo, hi), integral) in MAPPED.items():
            for i in range(40):
                src = SOURCES[rnd.randrange(len(SOURCES))]
                off = OFFSETS[rnd.randrange(len(OFFSETS))]
                unit, _ = units[rnd.randrange(len(units))]
                raw = str(rnd.randint(lo, hi)) if integral else repr(round(rnd.uniform(lo, hi), rnd.randint(0, 4)))
                start = t + dt.timedelta(minutes=37 * i, seconds=rnd.randint(0, 59))
                end = start if hg_type in ("heartRate", "restingHeartRate", "bodyMass") else start + dt.timedelta(seconds=rnd.randint(1, 900))
                inner, meta, motion, sync, entered = "", {}, None, None, None
                if i % 7 == 3:
                    meta = {"HKExternalUUID": "ext-%d" % i, "note": "a & b < c"}
                    inner += '  <MetadataEntry key="HKExternalUUID" value="ext-%d"/>\n  <MetadataEntry key="note" value="a &amp; b &lt; c"/>\n' % i
                if hg_type == "heartRate" and i % 5 == 1:
                    motion = i % 3
                    inner += '  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="%d"/>\n' % motion
                if i % 11 == 5:
                    sync = ["sync-%s-%d" % (hg_type, i), 2]
                    inner += ('  <MetadataEntry key="HKMetadataKeySyncIdentifier" value="%s"/>\n'
                              '  <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>\n') % tuple(sync[:1])
                if i % 13 == 6:
                    entered = True
                    inner += '  <MetadataEntry key="HKWasUserEntered" value="1"/>\n'
                good(hg_type, unit, raw, src, start, end, meta, motion, sync, entered)
                w.write(record_xml(apple_type, unit, raw, src, start, end, off, inner=inner))
            # Three on one line, and one with its attributes spread over lines (line breaks mean nothing).
            src = SOURCES[0]
            unit = units[0][0]
            parts = []
            for k in range(3):
                start = t + dt.timedelta(days=3, minutes=k)
                good(hg_type, unit, str(lo + k), src, start, start)
                parts.append(record_xml(apple_type, unit, str(lo + k), src, start, start, 60, one_line=True))
            w.write("".join(parts) + "\n")
            start = t + dt.timedelta(days=4)
            good(hg_type, unit, str(lo), (src[0], src[1], None, None, None), start, start)
            w.write(' <Record\n   type="%s"\tsourceName="%s"\n   unit="%s" startDate="%s"\n   endDate="%s" value="%s"\n  />\n'
                    % (apple_type, src[0], unit, fmt(start, -210), fmt(start, -210), lo))

        # A record crossing a daylight-saving change in Berlin: the offsets differ at start and end.
        start = dt.datetime(2023, 3, 26, 0, 30, tzinfo=UTC)   # 01:30 +0100
        end = dt.datetime(2023, 3, 26, 1, 30, tzinfo=UTC)     # 03:30 +0200
        src = SOURCES[1]
        good("stepCount", "count", "1234", (src[0], src[1], "16.2", None, None), start, end)
        w.write(' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="%s" sourceVersion="16.2" unit="count" '
                'startDate="%s" endDate="%s" value="1234"/>\n' % (src[0], fmt(start, 60), fmt(end, 120)))

        # HRV with beat lists; the second crosses local midnight; the third has a gap (a missed beat).
        for n, (start, off, gap_at) in enumerate([(dt.datetime(2023, 2, 1, 18, 31, 20, tzinfo=UTC), 60, None),
                                                  (dt.datetime(2023, 2, 2, 23, 59, 30, tzinfo=UTC) - dt.timedelta(minutes=330), 330, None),
                                                  (dt.datetime(2023, 2, 3, 7, 0, 0, tzinfo=UTC), -300, 20)]):
            src = SOURCES[0]
            local = start + dt.timedelta(minutes=off)
            cs = (local.hour * 3600 + local.minute * 60 + local.second) * 100 + 12
            first_cs = cs
            beats, runs, run = [], [], []
            prev = None
            for b in range(45):
                rr_cs = 80 + rnd.randint(-12, 12)        # 0.68–0.92 s
                cs += rr_cs
                if gap_at is not None and b == gap_at:
                    cs += 85                            # a beat the watch did not keep: the next time jumps
                    prev_ok = False
                else:
                    prev_ok = True
                bpm = round(6000 / rr_cs)
                if b == 0:
                    first_beat_cs = cs
                beats.append('   <InstantaneousBeatsPerMinute bpm="%d" time="%s"/>\n' % (bpm, beat_clock(cs)))
                if prev is not None and prev_ok:
                    run.append((cs - prev) * 1024 // 100 + (1 if ((cs - prev) * 1024) % 100 >= 50 else 0))
                elif prev is not None:
                    if run:
                        runs.append(run)
                    run = []
                prev = cs
            runs.append(run)
            end = start + dt.timedelta(seconds=(cs - first_cs) // 100 + 1)
            sdnn = "%.4f" % rnd.uniform(20, 80)
            good("heartRateVariabilitySDNN", "ms", sdnn, src, start, end)
            # The first beat's instant: the start's local midnight, its clock time, less the offset.
            midnight_local = dt.datetime(local.year, local.month, local.day, tzinfo=UTC)
            summary["hrv"].append({"start": unix(start), "runs": runs,
                                   "firstBeat": midnight_local.timestamp() - off * 60 + first_beat_cs / 100.0})
            w.write(record_xml("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", "ms", sdnn, src, start, end, off,
                               inner="  <HeartRateVariabilityMetadataList>\n" + "".join(beats) + "  </HeartRateVariabilityMetadataList>\n"))

        # Unknown record types, a blood-pressure correlation whose records also stand at top level.
        for i in range(30):
            apple_type, unit, value = UNKNOWN[i % len(UNKNOWN)]
            start = t + dt.timedelta(hours=i)
            w.write(record_xml(apple_type, unit, value, SOURCES[1], start, start + dt.timedelta(minutes=5), 60))
            summary["unknownRecordTypes"][apple_type] = summary["unknownRecordTypes"].get(apple_type, 0) + 1
        for i in range(6):
            start = t + dt.timedelta(days=1, hours=i)
            sys_v, dia_v = 110 + i, 70 + i
            for apple_type, v in (("HKQuantityTypeIdentifierBloodPressureSystolic", sys_v), ("HKQuantityTypeIdentifierBloodPressureDiastolic", dia_v)):
                w.write(record_xml(apple_type, "mmHg", str(v), SOURCES[2], start, start, 60))
                summary["unknownRecordTypes"][apple_type] = summary["unknownRecordTypes"].get(apple_type, 0) + 1
            w.write(' <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="%s" sourceVersion="6.3.1" creationDate="%s" startDate="%s" endDate="%s">\n'
                    % (SOURCES[2][0], fmt(start, 60), fmt(start, 60), fmt(start, 60)))
            w.write('  <MetadataEntry key="HKWasUserEntered" value="0"/>\n')
            for apple_type, v in (("HKQuantityTypeIdentifierBloodPressureSystolic", sys_v), ("HKQuantityTypeIdentifierBloodPressureDiastolic", dia_v)):
                w.write(" " + record_xml(apple_type, "mmHg", str(v), SOURCES[2], start, start, 60))
                summary["correlationCopies"] += 1
            w.write(" </Correlation>\n")
        # A correlation that copies a mapped record (body mass with a food entry, say): counted once too.
        start = t + dt.timedelta(days=2)
        good("bodyMass", "kg", "70.5", SOURCES[2], start, start)
        w.write(record_xml("HKQuantityTypeIdentifierBodyMass", "kg", "70.5", SOURCES[2], start, start, 60))
        w.write(' <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="%s" startDate="%s" endDate="%s">\n'
                % (SOURCES[2][0], fmt(start, 60), fmt(start, 60)))
        w.write(" " + record_xml("HKQuantityTypeIdentifierBodyMass", "kg", "70.5", SOURCES[2], start, start, 60))
        summary["correlationCopies"] += 1
        w.write(" </Correlation>\n")
        summary["unknownElements"]["Correlation"] = 7

        # Bad records: each skipped, reported with the line of its start tag.
        bads = [("HKQuantityTypeIdentifierHeartRate", "kg", "72", "unit"),            # wrong dimension
                ("HKQuantityTypeIdentifierStepCount", "furlong", "10", "unit"),        # unknown unit
                ("HKQuantityTypeIdentifierBodyMass", "kg", "seventy", "value"),        # not a number
                ("HKQuantityTypeIdentifierHeartRate", "count/min", "900", "plausible"),  # implausible
                ("HKQuantityTypeIdentifierStepCount", "count", "-5", "negative")]
        for apple_type, unit, value, why in bads:
            start = t + dt.timedelta(days=5)
            summary["bad"].append({"line": w.line, "type": apple_type, "why": why})
            w.write(record_xml(apple_type, unit, value, SOURCES[0], start, start, 60))
        start = t + dt.timedelta(days=5)
        summary["bad"].append({"line": w.line, "type": "HKQuantityTypeIdentifierStepCount", "why": "date"})
        w.write(' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Health" unit="count" startDate="2023-02-30 10:00:00 +0100" endDate="%s" value="5"/>\n'
                % fmt(start, 60))
        summary["bad"].append({"line": w.line, "type": "HKQuantityTypeIdentifierStepCount", "why": "order"})
        w.write(' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Health" unit="count" startDate="%s" endDate="%s" value="5"/>\n'
                % (fmt(start + dt.timedelta(hours=1), 60), fmt(start, 60)))

        # Workouts: events (pause/resume pairs, motion pauses, laps, segments, a stray resume), statistics, a route.
        for i, activity in enumerate(["Running", "Cycling", "Walking", "TraditionalStrengthTraining"]):
            off = OFFSETS[i]
            start = dt.datetime(2023, 4, 2 + i, 17, 0, 0, tzinfo=UTC)
            end = start + dt.timedelta(minutes=45)
            src = SOURCES[0] if i != 1 else SOURCES[3]
            attrs = 'workoutActivityType="HKWorkoutActivityType%s" duration="%s" durationUnit="min" sourceName="%s"' % (activity, "40.5", src[0])
            if src[2]:
                attrs += ' sourceVersion="%s"' % src[2]
            if src[3]:
                attrs += ' device="%s"' % src[3]
            attrs += ' creationDate="%s" startDate="%s" endDate="%s"' % (fmt(end, off), fmt(start, off), fmt(end, off))
            wk = {"activity": activity[0].lower() + activity[1:], "start": unix(start), "end": unix(end), "source": src[1],
                  "events": [], "statistics": {}, "routes": [], "line": w.line, "metadata": {"HKIndoorWorkout": "0"}}
            w.write(" <Workout %s>\n" % attrs)
            w.write('  <MetadataEntry key="HKIndoorWorkout" value="0"/>\n')
            ev = [("HKWorkoutEventTypeSegment", 0, True), ("HKWorkoutEventTypePause", 5, True), ("HKWorkoutEventTypePause", 6, False),
                  ("HKWorkoutEventTypeResume", 8, True), ("HKWorkoutEventTypeMotionPaused", 10, False),
                  ("HKWorkoutEventTypeMotionResumed", 11, False), ("HKWorkoutEventTypeLap", 15, False),
                  ("HKWorkoutEventTypeResume", 20, False), ("HKWorkoutEventTypePause", 30, True), ("HKWorkoutEventTypeResume", 33, True),
                  ("HKWorkoutEventTypeMarker", 40, False)]
            for kind, minute, kept in ev:
                when = start + dt.timedelta(minutes=minute)
                dur = ' duration="0.5" durationUnit="min"' if kind == "HKWorkoutEventTypeSegment" else ""
                w.write('  <WorkoutEvent type="%s" date="%s"%s/>\n' % (kind, fmt(when, off), dur))
                if kind == "HKWorkoutEventTypeSegment":
                    continue
                if kept:
                    wk["events"].append(["pause" if kind.endswith("Pause") else "resume", unix(when)])
            stats = [("HKQuantityTypeIdentifierActiveEnergyBurned", "Cal", 312.5 + i), ("HKQuantityTypeIdentifierDistanceWalkingRunning", "km", 5.25 + i)]
            for st, unit, s in stats:
                w.write('  <WorkoutStatistics type="%s" startDate="%s" endDate="%s" sum="%s" unit="%s"/>\n' % (st, fmt(start, off), fmt(end, off), s, unit))
                wk["statistics"][st] = {"sum": s, "unit": unit}
            w.write('  <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" startDate="%s" endDate="%s" average="141.5" minimum="98" maximum="171" unit="count/min"/>\n'
                    % (fmt(start, off), fmt(end, off)))
            wk["statistics"]["HKQuantityTypeIdentifierHeartRate"] = {"average": 141.5, "minimum": 98, "maximum": 171, "unit": "count/min"}
            if i < 2:
                route = "/workout-routes/route_2023-04-0%d_5.00pm.gpx" % (2 + i)
                w.write('  <WorkoutRoute sourceName="%s" startDate="%s" endDate="%s">\n   <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>\n'
                        '   <FileReference path="%s"/>\n  </WorkoutRoute>\n' % (src[0], fmt(start, off), fmt(end, off), route))
                wk["routes"].append(route)
            w.write(" </Workout>\n")
            summary["workouts"].append(wk)

        for i in range(3):
            w.write(' <ActivitySummary dateComponents="2023-01-0%d" activeEnergyBurned="410" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="Cal"/>\n' % (i + 1))
        summary["unknownElements"]["ActivitySummary"] = 3
        w.write(' <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="x" sourceName="Clinic" fhirVersion="4.0.1" receivedDate="2023-01-01 00:00:00 +0000" resourceFilePath="/clinical-records/x.json"/>\n')
        summary["unknownElements"]["ClinicalRecord"] = 1
        w.write("<!-- a comment with <Record type=\"HKQuantityTypeIdentifierHeartRate\"/> inside is no record -->\n")
        w.write("</HealthData>\n")
    make_zip(out_dir)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)


def make_zip(out_dir):
    def entry(name):   # a fixed date: the same seed gives the same bytes
        return zipfile.ZipInfo(name, date_time=(2023, 6, 1, 9, 0, 0))
    with zipfile.ZipFile(os.path.join(out_dir, "export.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(entry("apple_health_export/export_cda.xml"), '<?xml version="1.0"?><ClinicalDocument/>\n', zipfile.ZIP_DEFLATED)
        z.writestr(entry("apple_health_export/workout-routes/route_2023-04-02_5.00pm.gpx"), "<gpx/>\n", zipfile.ZIP_DEFLATED)
        with open(os.path.join(out_dir, "export.xml"), "rb") as f:
            z.writestr(entry("apple_health_export/export.xml"), f.read(), zipfile.ZIP_DEFLATED)


def big(out_dir, size, seed, zipped):
    """A large plain export streamed to disk: heart rate every 5 s, steps and energy (Cal) per minute, an HRV list per hour."""
    rnd = random.Random(seed)
    counts = {"heartRate": 0, "stepCount": 0, "activeEnergyBurned": 0, "heartRateVariabilitySDNN": 0}
    path = os.path.join(out_dir, "export.xml")
    watch = SOURCES[0]
    t0 = int(dt.datetime(2020, 1, 1, tzinfo=UTC).timestamp())
    with open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as f:
        f.write(DOCTYPE)
        f.write('<HealthData locale="en_US">\n <ExportDate value="2024-01-01 00:00:00 +0100"/>\n'
                ' <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-05-17"/>\n')
        head = ' <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="%s" sourceVersion="9.1" device="%s" unit="count/min" ' % (watch[0], watch[3])
        written = len(DOCTYPE)
        minute = 0
        while written < size:
            chunk = []
            for _ in range(1000):
                base = t0 + minute * 60
                ds = dt.datetime.fromtimestamp(base, tz=UTC).strftime("%Y-%m-%d %H:%M")
                for s in range(0, 60, 5):
                    stamp = "%s:%02d +0000" % (ds, s)
                    chunk.append('%screationDate="%s" startDate="%s" endDate="%s" value="%d">\n  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>\n </Record>\n'
                                 % (head, stamp, stamp, stamp, 55 + rnd.randrange(60)))
                counts["heartRate"] += 12
                stamp0, stamp1 = "%s:00 +0000" % ds, "%s:59 +0000" % ds
                chunk.append(' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="%s" sourceVersion="16.2" device="%s" unit="count" creationDate="%s" startDate="%s" endDate="%s" value="%d"/>\n'
                             % (SOURCES[1][0], SOURCES[1][3], stamp1, stamp0, stamp1, rnd.randrange(1, 150)))
                chunk.append(' <Record type="HKQuantityTypeIdentifierActiveEnergyBurned" sourceName="%s" sourceVersion="9.1" device="%s" unit="Cal" creationDate="%s" startDate="%s" endDate="%s" value="%.3f"/>\n'
                             % (watch[0], watch[3], stamp1, stamp0, stamp1, rnd.uniform(0.1, 12)))
                counts["stepCount"] += 1
                counts["activeEnergyBurned"] += 1
                if minute % 60 == 0:
                    cs = ((base % 86400) * 100) + 12
                    beats = []
                    for _ in range(60):
                        rr = 80 + rnd.randint(-10, 10)
                        cs += rr
                        beats.append('   <InstantaneousBeatsPerMinute bpm="%d" time="%s"/>\n' % (round(6000 / rr), beat_clock(cs)))
                    chunk.append(' <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="%s" sourceVersion="9.1" device="%s" unit="ms" creationDate="%s" startDate="%s" endDate="%s" value="%.4f">\n  <HeartRateVariabilityMetadataList>\n%s  </HeartRateVariabilityMetadataList>\n </Record>\n'
                                 % (watch[0], watch[3], stamp1, stamp0, stamp1, rnd.uniform(20, 80), "".join(beats)))
                    counts["heartRateVariabilitySDNN"] += 1
                minute += 1
            text = "".join(chunk)
            f.write(text)
            written += len(text.encode("utf-8"))
        f.write("</HealthData>\n")
    if zipped:
        with zipfile.ZipFile(os.path.join(out_dir, "export.zip"), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            z.write(path, "apple_health_export/export.xml")
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"counts": counts, "bytes": os.path.getsize(path)}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", type=int, default=0, help="write a plain export of at least this many bytes")
    ap.add_argument("--zip", action="store_true", help="with --big: zip it too")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.big:
        big(a.out, a.big, a.seed, a.zip)
    else:
        small(a.out, a.seed)


if __name__ == "__main__":
    main()
