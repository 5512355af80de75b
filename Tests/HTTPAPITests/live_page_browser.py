#!/usr/bin/env python3
"""The live page (`/`) in a real browser: Debian's headless Chromium driven by Selenium
(pinned in .venv-browser/, Tests/HTTPAPITests/browser-requirements.txt) against
`healthgate run` fed by `healthgate simulate` (docs/http-api.md, "The live page").

Checks, each bounded in time:
  1. every strap gets a tile that shows, as current, the bpm its simulator last sent (read from
     `simulate --sent-log`) and the store last committed for that strap;
  2. a strap that stops notifying (its simulator SIGSTOPped: the socket stays connected, so
     only time can tell) shows the very last bpm it sent, then turns stale: its tile shows no
     bpm as current, the others stay live;
  3. the bars of the seven-day steps chart equal `healthgate stats --interval 1d`'s daily sums,
     and each pedometer tile equals `stats` for that pedometer today;
  4. on a phone-sized window the page does not scroll sideways;
  5. the token given as ?token= is kept (localStorage) and removed from the address bar.
Saves a desktop and a phone screenshot. Prints one JSON line of figures at the end; exits 1
with the reason on the first failed check. Every child is stopped at the end, bounded.
"""
import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request


class Failed(Exception):
    pass


def wait_for(what, seconds, probe, interval=0.2):
    """Polls probe() until it returns a truthy value; fails naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except Exception as e:  # a page still loading, a request racing a commit
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise Failed(f"{what} did not happen within {seconds} s (last: {last!r})")


class Child:
    """A healthgate child whose output is collected; stopped with SIGTERM, then SIGKILL."""

    def __init__(self, args, name):
        self.name = name
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.out, self.err = [], []
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, sink), daemon=True).start()

    @staticmethod
    def _read(stream, sink):
        for line in stream:
            sink.append(line)

    def wait_line(self, needle, seconds, stream="err"):
        lines = self.err if stream == "err" else self.out
        return wait_for(f"{self.name} printing {needle!r}", seconds,
                        lambda: next((l for l in list(lines) if needle in l), None)
                        or (self.proc.poll() is not None and Failed(f"{self.name} exited: {''.join(self.err)[-2000:]}")) or None)

    def stop(self, seconds=30):
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGCONT)
                self.proc.terminate()
                self.proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return self.proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--healthgate", required=True, help="the healthgate executable")
    ap.add_argument("--screenshot", required=True, help="where to save the desktop screenshot (PNG)")
    ap.add_argument("--phone-screenshot", help="where to save the phone-sized screenshot (PNG)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = ap.parse_args()
    os.environ["TZ"] = "UTC"   # the browser's day boundaries are UTC, as `stats --tz UTC`'s

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="hg-livepage-")
    db = os.path.join(work, "live.sqlite")
    hg = args.healthgate
    children, driver = [], None
    figures = {}

    def cli(*a):
        r = subprocess.run([hg, *a], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise Failed(f"healthgate {' '.join(a)} exited {r.returncode}: {r.stderr}")
        return r.stdout

    sent_logs = []

    def simulate(name, straps, pedometers):
        log = os.path.join(work, name + "-sent.jsonl")
        sent_logs.append(log)
        c = Child([hg, "simulate", "--straps", str(straps), "--pedometers", str(pedometers), "--rate", "2",
                   "--dir", os.path.join(work, name), "--config-out", os.path.join(work, name + ".toml"), "--json",
                   "--sent-log", log], "simulate " + name)
        children.append(c)
        c.wait_line("{", 60, stream="out")
        return c, json.loads(next(l for l in c.out if "{" in l))

    try:
        token = cli("token", "create", "--db", db, "--name", "coach", "--read", "heartRate,stepCount,workout", "--write", "stepCount").strip()
        # Three simulators: two steady straps, one strap to stop, two pedometers to stop.
        steady, steady_info = simulate("steady", 2, 0)
        halting, halting_info = simulate("halting", 1, 0)
        steps_sim, steps_info = simulate("steps", 0, 2)
        config = open(steady_info["config"]).read()
        for info in (halting_info, steps_info):
            text = open(info["config"]).read()
            blocks = text[min(i for i in (text.find("[[strap]]"), text.find("[[pedometer]]")) if i >= 0):]
            config += "\n" + blocks.replace('name = "Sim Strap 1"', 'name = "Halting strap"')
        config += '\n[http]\nlisten = "127.0.0.1:0"\n'
        with open(os.path.join(work, "run.toml"), "w") as f:
            f.write(config)
        run = Child([hg, "run", "--config", os.path.join(work, "run.toml"), "--db", db], "run")
        children.append(run)
        line = run.wait_line("serving the HTTP API on http://", 120)
        base = line[line.index("http://"):].strip()

        def api(path, body=None):
            req = urllib.request.Request(base + path, data=body, headers={"Authorization": "Bearer " + token,
                                                                          "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=20) as r:
                return json.loads(r.read())

        # Six earlier days of steps (one sample crossing a midnight), so the chart has history.
        today = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        history = []
        for k in range(1, 7):
            d = today - datetime.timedelta(days=k)
            history.append({"type": "stepCount", "value": 1000 * k + 137, "start": (d + datetime.timedelta(hours=9)).isoformat(),
                            "end": (d + datetime.timedelta(hours=10)).isoformat()})
        history.append({"type": "stepCount", "value": 600, "start": (today - datetime.timedelta(days=3, minutes=30)).isoformat(),
                        "end": (today - datetime.timedelta(days=3) + datetime.timedelta(minutes=30)).isoformat()})
        api("/v1/samples", json.dumps(history).encode())

        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000",
                  "--no-first-run", "--disable-extensions", "--disable-background-networking"):
            options.add_argument(a)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=args.chromedriver), options=options)
        driver.set_page_load_timeout(30)
        driver.set_script_timeout(30)
        browser_ready = time.monotonic()
        driver.get(base + "/?token=" + token)

        # 5. the token left the address bar and is kept.
        wait_for("the token being removed from the address bar", 10, lambda: "token=" not in driver.current_url)
        if driver.execute_script("return localStorage.getItem('healthgate.token')") != token:
            raise Failed("the token was not kept in localStorage")

        straps = [s["socket"] for s in steady_info["straps"] + halting_info["straps"]]
        keys = ["socket:" + s for s in straps]
        halted_key = "socket:" + halting_info["straps"][0]["socket"]

        def tiles():
            return driver.execute_script("""
              return [...document.querySelectorAll('.tile.strap')].map(t => ({device: t.dataset.device,
                state: t.dataset.state, bpm: t.dataset.bpm, end: t.dataset.end, shown: t.querySelector('.value').textContent,
                name: t.querySelector('.name').textContent}));""")

        def all_live():
            ts = {t["device"]: t for t in tiles()}
            return all(ts.get(k, {}).get("state") == "live" for k in keys) and ts
        wait_for("a live tile for each of the 3 straps", 60, all_live)
        figures["first_live_s"] = round(time.monotonic() - browser_ready, 1)

        def last_sent(key):
            """The bpm the strap of `key` last sent, from its simulator's sent log (whole lines)."""
            bpm = None
            for log in sent_logs:
                with open(log) as f:
                    for line in f:
                        o = json.loads(line)
                        if "socket:" + o["socket"] == key:
                            bpm = o["bpm"]
            return bpm

        # 1. each tile shows the bpm its simulator last sent, which is the store's last heart
        # rate of that strap (the simulators keep sending: the check is repeated until the page
        # has caught up with a notification before the next one is sent, 500 ms later).
        for key in keys:
            def matches():
                t = next(t for t in tiles() if t["device"] == key)
                sent = last_sent(key)
                last = api("/v1/samples?" + urllib.parse.urlencode({"type": "heartRate", "device": key, "sort": "end", "order": "desc", "limit": "1"}))[0]
                same_end = t["end"] and abs(datetime.datetime.fromisoformat(t["end"].replace("Z", "+00:00")).timestamp()
                                            - datetime.datetime.fromisoformat(last["end"].replace("Z", "+00:00")).timestamp()) < 0.001
                return (t["state"] == "live" and same_end and float(t["bpm"]) == float(last["value"]) == sent
                        and t["shown"] == str(sent) and last_sent(key) == sent) and t
            wait_for(f"the tile of {key} showing the bpm its simulator last sent", 15, matches, interval=0.05)

        # HRV: the page's RMSSD (the function the tiles use) against the definition, on intervals
        # with a reported gap, an artefact and a pause; then each tile shows it when its strap sends RR.
        got = driver.execute_script("""const now = Date.now();
            return [rmssd({rr: [[now - 3000, [800, 810, 790, 805, 800, 795], false]]}, now),
                    rmssd({rr: [[now - 3000, [800, 810, 790], false], [now - 2000, [805, 800, 795], true], [now - 1000, [3000, 800, 790], false]]}, now),
                    rmssd({rr: [[now - 61000, [800, 810, 790, 805, 800, 795], false]]}, now)];""")
        # the second: 10, -20 | gap | -5, -5 | artefact | -10 (never 805-790 across the gap, nor 3000)
        want = [(775 / 5) ** 0.5, (650 / 5) ** 0.5, None]   # the third: older than a minute
        if got[2] is not None or any(abs(g - w) > 1e-9 for g, w in zip(got[:2], want[:2]) if g is not None) or None in got[:2]:
            raise Failed(f"RMSSD in the page: {got}, expected {want}")
        recent = api("/v1/samples?" + urllib.parse.urlencode({"type": "heartRate", "sort": "end", "order": "desc", "limit": "50"}))
        if any(r.get("rrIntervals") for r in recent):
            wait_for("an HRV figure on every live tile (the simulated straps send RR)", 20,
                     lambda: all(t.text.startswith("HRV ") for t in driver.find_elements(By.CSS_SELECTOR, ".tile.strap .hrv")))
            figures["hrv_shown"] = True

        # 2. a strap that stops notifying turns stale; the others stay live.
        halting.proc.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        # Before it turns stale, its tile shows exactly the last notification it sent.
        final = last_sent(halted_key)
        wait_for("the stopped strap's tile showing the last bpm it sent", 4,
                 lambda: any(t["device"] == halted_key and t["state"] == "live" and t["shown"] == str(final)
                             and float(t["bpm"]) == final for t in tiles()), interval=0.05)

        def halted_stale():
            ts = {t["device"]: t for t in tiles()}
            h = ts[halted_key]
            return h["state"] == "stale" and h["shown"] == "--" and h["bpm"] == "" and ts
        ts = wait_for("the stopped strap's tile turning stale", 15, halted_stale)
        figures["stale_after_s"] = round(time.monotonic() - stopped, 1)
        for key in keys:
            if key != halted_key and ts[key]["state"] != "live":
                raise Failed(f"{key} should still be live: {ts[key]}")
        note = driver.find_element(By.CSS_SELECTOR, f'.tile[data-device="{halted_key}"] .note').text
        if "no signal" not in note:
            raise Failed(f"the stale tile does not say so: {note!r}")
        names = {t["device"]: t["name"] for t in tiles()}
        if names[halted_key] != "Halting strap":
            raise Failed(f"the tile is not named by the configured alias: {names}")
        # The whole desktop page, with the stale strap and the pedometers still counting.
        driver.set_window_size(1280, 1500)
        time.sleep(0.5)
        driver.save_screenshot(args.screenshot)
        driver.set_window_size(1280, 1000)

        # 3. the steps: stop the pedometers, then the chart's bars must equal stats' daily sums.
        steps_sim.stop()

        def bars_equal_stats():
            bars = driver.execute_script("""return [...document.querySelectorAll('#steps-week rect.bar')]
                .map(b => [b.dataset.start, Number(b.dataset.sum)]);""")
            now = datetime.datetime.now(datetime.timezone.utc)
            stats = json.loads(cli("stats", "--db", db, "--type", "stepCount", "--interval", "1d", "--tz", "UTC", "--json",
                                   "--from", (today - datetime.timedelta(days=6)).strftime("%Y-%m-%d"), "--to", now.isoformat()))
            expected = [[b["start"], b["sum"] or 0] for b in stats]
            norm = lambda rows: [[datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp(), v] for s, v in rows]
            return (len(bars) == 7 and norm(bars) == norm(expected) and expected[-1][1] > 0
                    and all(v > 0 for _, v in expected[:-1])) and (bars, expected)
        bars, expected = wait_for("the steps chart's bars equal to stats' daily sums", 30, bars_equal_stats, interval=0.5)
        figures["step_bars"] = [v for _, v in bars]

        def pedometers_equal_stats():
            shown = driver.execute_script("""return [...document.querySelectorAll('.tile.pedometer')]
                .map(t => [t.dataset.device, Number(t.dataset.steps)]);""")
            if len(shown) != 2:
                return False
            for key, steps in shown:
                s = json.loads(cli("stats", "--db", db, "--type", "stepCount", "--tz", "UTC", "--json", "--device", key,
                                   "--from", today.strftime("%Y-%m-%d"), "--to", datetime.datetime.now(datetime.timezone.utc).isoformat()))
                if (s.get("sum") or 0) != steps or steps <= 0:
                    return False
            return shown
        figures["pedometer_steps"] = wait_for("each pedometer tile equal to stats for that pedometer today", 30, pedometers_equal_stats, interval=0.5)

        # 6. a workout started beside the daemon (another process) shows at the top of the page at
        # once, then paused, and is gone when it stops.
        def banner():
            return driver.execute_script("""const e = document.getElementById('workout');
                return e.hidden ? 'hidden' : [e.dataset.state, e.textContent];""")
        if banner() != "hidden":
            raise Failed(f"a workout banner before any workout: {banner()}")
        cli("workout", "start", "--db", db, "--activity", "running")
        figures["workout_banner"] = wait_for("the workout banner saying running", 15,
                                             lambda: (b := banner()) != "hidden" and b[0] == "running" and "Running in progress" in b[1] and b)
        cli("workout", "pause", "--db", db)
        wait_for("the workout banner saying paused", 15, lambda: (b := banner()) != "hidden" and b[0] == "paused" and "paused" in b[1] and b)
        cli("workout", "stop", "--db", db)
        wait_for("the workout banner gone after the stop", 15, lambda: banner() == "hidden")

        # 4. a phone: one column of the page, no sideways scrolling.
        driver.set_window_size(390, 844)
        def fits():
            wide = driver.execute_script("""const w = window.innerWidth;
                return document.documentElement.scrollWidth <= w ? null
                  : [w, document.documentElement.scrollWidth, [...document.querySelectorAll('body *')]
                      .filter(e => e.getBoundingClientRect().right > w + 1).slice(0, 5).map(e => e.tagName + '.' + e.className)];""")
            return wide is None or Failed(f"wider than the window: {wide}")
        wait_for("the page fitting a phone's width", 10, fits)
        if args.phone_screenshot:
            driver.save_screenshot(args.phone_screenshot)
        figures["seconds"] = round(time.monotonic() - started, 1)
        print(json.dumps(figures))
        return 0
    except Failed as e:
        print(f"live page check failed: {e}", file=sys.stderr)
        if driver is not None:
            try:
                driver.save_screenshot(args.screenshot)
                logs = driver.get_log("browser")
                print("browser console: " + json.dumps(logs)[-3000:], file=sys.stderr)
            except Exception:
                pass
        for c in children:
            print(f"--- {c.name} stderr (tail):\n{''.join(c.err)[-1500:]}", file=sys.stderr)
        return 1
    finally:
        if driver is not None:
            driver.quit()
        for c in reversed(children):
            c.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
