#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test HealthGate. Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=(pkg-config libsqlite3-dev libbluetooth-dev libudev-dev sqlite3 gcc gdb curl openssl zlib1g-dev)  # zlib1g-dev: import --apple-health export.zip (inflate)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- BLE heart rate (blecore): tshark is the Wireshark peer of the differential 0x2A37
# decoder tests (PeerDifferentialTests). ~30 s to install on a fresh machine.
if ! command -v tshark >/dev/null 2>&1; then
  echo "setup: installing tshark (Wireshark peer for the BLE decoder tests)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends tshark >/dev/null
fi

# ---- Real-stack harness (issue 4, Tests/RealStack): QEMU + Debian's stock kernel (its vmlinuz and
# modules become the guest), BlueZ's tools inside the guest (btmgmt, btmon), busybox for
# virtme-ng's init, gcc for the guest helpers, Debian's python3 for the guest agent, venv for the
# pinned virtme-ng/bumble (created by Tests/RealStack/run itself), systemd-nspawn for the systemd
# container the systemd-deb scenario installs the package into.
realstack_need=(qemu-system-x86 linux-image-amd64 bluez busybox-static gcc python3 python3-venv util-linux systemd-container)
realstack_missing=()
for p in "${realstack_need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || realstack_missing+=("$p"); done
if [ ${#realstack_missing[@]} -gt 0 ]; then
  echo "setup: installing ${realstack_missing[*]} (real-stack harness)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${realstack_missing[@]}" >/dev/null
fi

# ---- HTTP API (issue 13): the live page's real-browser test (LivePageTests) drives Debian's
# headless Chromium through its chromedriver. About 1–2 min to install on a fresh machine.
browser_need=(chromium chromium-driver fonts-liberation)
browser_missing=()
for p in "${browser_need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || browser_missing+=("$p"); done
if [ ${#browser_missing[@]} -gt 0 ]; then
  echo "setup: installing ${browser_missing[*]} (live page browser test)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${browser_missing[@]}" >/dev/null
fi

# ---- PostgreSQL uplink (issue 14, Tests/UplinkTests): Debian's server programs (initdb, pg_ctl
# under /usr/lib/postgresql/*/bin) and psql. The tests start their own throwaway cluster in a
# temporary directory (as the postgres account when run as root) and stop it at the end; the
# package's own cluster service is not needed.
uplink_need=(postgresql postgresql-client)
uplink_missing=()
for p in "${uplink_need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || uplink_missing+=("$p"); done
if [ ${#uplink_missing[@]} -gt 0 ]; then
  echo "setup: installing ${uplink_missing[*]} (PostgreSQL uplink tests)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${uplink_missing[@]}" >/dev/null
fi

# ---- MQTT uplink (issue 14, Tests/UplinkTests/MQTTTests): libmosquitto to build against (the
# CMosquitto system library), and the broker and its independent client for the tests, which
# start a throwaway mosquitto on a loopback port; the package's own service is not needed.
mqtt_need=(libmosquitto-dev mosquitto mosquitto-clients)
mqtt_missing=()
for p in "${mqtt_need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || mqtt_missing+=("$p"); done
if [ ${#mqtt_missing[@]} -gt 0 ]; then
  echo "setup: installing ${mqtt_missing[*]} (MQTT uplink)"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${mqtt_missing[@]}" >/dev/null
fi
