"""The independent peer of HeartRateVariabilityTests: neurokit2's Kubios-style artefact correction
(signal_fixpeaks(method="Kubios"), Lipponen & Tarvainen 2019) and its time-domain HRV (hrv_time).

    neurokit_hrv.py CASES.json   # [{"beats": [ticks…]}, …], beat times in 1/1024 s

Prints, per case, the artefacts of the last pass, the corrected beats and RMSSD, SDNN, pNN50 and
MeanNN (ms) of the corrected beats, as one JSON array.
"""
import json
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import neurokit2 as nk  # noqa: E402

out = []
for case in json.load(open(sys.argv[1], encoding="utf-8")):
    beats = np.array(case["beats"], dtype=np.int64)
    info, clean = nk.signal_fixpeaks(beats, sampling_rate=1024, iterative=True, method="Kubios")
    t = nk.hrv_time(np.asarray(clean, dtype=np.int64), sampling_rate=1024)
    out.append({
        "artefacts": {k: [int(i) for i in info[k]] for k in ("ectopic", "missed", "extra", "longshort")},
        "beats": [int(b) for b in clean],
        "rmssd": float(t["HRV_RMSSD"].iloc[0]), "sdnn": float(t["HRV_SDNN"].iloc[0]),
        "pnn50": float(t["HRV_pNN50"].iloc[0]), "meanNN": float(t["HRV_MeanNN"].iloc[0]),
    })
print(json.dumps(out))
