#!/usr/bin/env bash
# scripts/package-deb.sh — builds healthgate_VERSION_ARCH.deb with dpkg-deb (issue 16; docs/operations.md,
# "Install from the package").
#
#   scripts/package-deb.sh [--binary PATH] [--arch ARCH] [--version V] [--out DIR] [--compression xz|gzip|none]
#                          [--allow-unpackaged-libs]
#
# Without --binary it builds the release binary with the Swift runtime and Foundation linked in
# (`swift build -c release --static-swift-stdlib`), so a Pi needs no Swift toolchain: the package
# depends only on the Debian libraries the binary links (found with ldd and dpkg -S, as
# dpkg-shlibdeps does). A library no Debian package provides (a dynamically linked Swift runtime
# from a debug build) stops the build, unless --allow-unpackaged-libs (a test of the layout only).
# ARCH defaults to this machine's (`dpkg --print-architecture`); the binary must be of that
# architecture (there is no cross toolchain here: build the arm64 package on an arm64 machine).
#
# The package holds: /usr/bin/healthgate; the systemd unit (samples/healthgate.service with
# ExecStart=/usr/bin/healthgate); sysusers.d (the `healthgate` system user, in group dialout) and
# tmpfiles.d (/var/lib/healthgate, 0700) entries; the udev rules; /etc/healthgate/healthgate.toml, a
# conffile that configures nothing yet (the full example is in /usr/share/doc/healthgate/); the docs.
# The maintainer scripts create the user and directory, reload udev, and enable and start the
# service (it idles until straps or pedometers are configured); removing or purging the package
# never deletes /var/lib/healthgate.
set -euo pipefail
cd "$(dirname "$0")/.."

binary="" arch="" version="" out="$PWD/.build/deb" allow_unpackaged=0 compression=xz
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --allow-unpackaged-libs) allow_unpackaged=1; shift ;;
    --compression) compression=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
  esac
done
for tool in dpkg-deb dpkg ldd; do
  command -v "$tool" >/dev/null || { echo "package-deb.sh: '$tool' is missing (apt-get install dpkg-dev)" >&2; exit 69; }
done
arch=${arch:-$(dpkg --print-architecture)}

if [ -z "$binary" ]; then
  echo "package-deb.sh: building the release binary with the Swift runtime linked in (several minutes)"
  swift build -c release --static-swift-stdlib --product healthgate 2>&1 | grep -E "error:|warning:|Compiling healthgate|Build complete" || true
  binary="$(swift build -c release --show-bin-path)/healthgate"
fi
[ -x "$binary" ] || { echo "package-deb.sh: $binary is not an executable" >&2; exit 66; }

# The binary's architecture, from its ELF header (e_machine), must be the package's.
machine=$(od -An -t u2 -j 18 -N 2 "$binary" | tr -d ' ')
case "$machine" in 62) elf_arch=amd64 ;; 183) elf_arch=arm64 ;; 40) elf_arch=armhf ;; *) elf_arch="e_machine $machine" ;; esac
if [ "$elf_arch" != "$arch" ]; then
  echo "package-deb.sh: $binary is built for $elf_arch, not $arch: build on a $arch machine (or pass --arch $elf_arch)" >&2
  exit 65
fi
version=${version:-$("$binary" --version 2>/dev/null | awk '{print $NF}')}
[ -n "$version" ] || { echo "package-deb.sh: could not read the version from '$binary --version'; pass --version" >&2; exit 65; }

# Depends: the Debian package of every library the binary loads.
depends=() unpackaged=()
while read -r lib path; do
  [ -n "$path" ] || continue
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null || true)
  if [ -z "$owner" ] && [ "${path#/lib/}" != "$path" ]; then owner=$(dpkg -S "/usr$path" 2>/dev/null || true); fi
  if [ -z "$owner" ]; then unpackaged+=("$lib ($path)"); continue; fi
  depends+=("${owner%%:*}")
done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
if [ ${#unpackaged[@]} -gt 0 ]; then
  echo "package-deb.sh: $binary loads libraries no Debian package provides: ${unpackaged[*]}" >&2
  if [ "$allow_unpackaged" != 1 ]; then
    echo "  build it with --static-swift-stdlib (what this script does without --binary)" >&2
    exit 65
  fi
fi
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

root=$(mktemp -d)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT
install -D -m 0755 "$binary" "$root/usr/bin/healthgate"
# Symbols and debug info: the static release binary is 182 MB unstripped, 85 MB stripped (2026-11-28, amd64).
if command -v strip >/dev/null; then strip --strip-unneeded "$root/usr/bin/healthgate"; fi
install -d -m 0755 "$root/lib/systemd/system"
sed -e 's|^ExecStart=/usr/local/bin/healthgate|ExecStart=/usr/bin/healthgate|' \
    -e '/^#   sudo /d' samples/healthgate.service > "$root/lib/systemd/system/healthgate.service"
chmod 0644 "$root/lib/systemd/system/healthgate.service"
install -D -m 0644 udev-rules/70-healthgate.rules "$root/lib/udev/rules.d/70-healthgate.rules"
install -d -m 0755 "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d"
cat > "$root/usr/lib/sysusers.d/healthgate.conf" <<'EOF'
# The HealthGate daemon's system user (healthgate.service runs as it); dialout: the pedometers' ttys.
u healthgate - "HealthGate daemon" /var/lib/healthgate /usr/sbin/nologin
m healthgate dialout
EOF
cat > "$root/usr/lib/tmpfiles.d/healthgate.conf" <<'EOF'
# The store's directory (the unit's StateDirectory creates it too); never removed by the package.
d /var/lib/healthgate 0700 healthgate healthgate -
EOF
install -d -m 0755 "$root/etc/healthgate"
cat > "$root/etc/healthgate/healthgate.toml" <<'EOF'
# /etc/healthgate/healthgate.toml — healthgate.service's configuration. It configures nothing yet:
# the daemon runs and idles. Add [[strap]] tables (`healthgate scan` lists straps) and
# [[pedometer]] rules, then `sudo systemctl restart healthgate`. Every key, with its default and
# what it costs on an SD card: /usr/share/doc/healthgate/healthgate.toml.example.
[store]
path = "/var/lib/healthgate/health.sqlite"
EOF
chmod 0644 "$root/etc/healthgate/healthgate.toml"
doc="$root/usr/share/doc/healthgate"
install -d -m 0755 "$doc"
install -m 0644 README.md docs/operations.md "$doc/"
install -m 0644 samples/healthgate.toml "$doc/healthgate.toml.example"
cat > "$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: healthgate
Comment: HealthGate, a Linux gateway for wearable health sensors. See README.md.
EOF

install -d -m 0755 "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: healthgate
Version: $version
Architecture: $arch
Maintainer: HealthGate developers <healthgate@localhost>
Installed-Size: $size
Depends: $depends_line, systemd
Recommends: bluez
Section: misc
Priority: optional
Homepage: https://github.com/healthgate/healthgate
Description: gateway for BLE heart-rate straps and serial pedometers
 HealthGate pairs Bluetooth LE heart-rate straps and serial (USB) pedometers,
 captures their data live and keeps it in a typed, queryable SQLite health
 store, HealthKit-style. healthgate.service runs it headless (a Raspberry Pi
 left collecting for months); the store is served over HTTP and sent to
 PostgreSQL or MQTT when configured.
EOF
echo "/etc/healthgate/healthgate.toml" > "$root/DEBIAN/conffiles"
cat > "$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    systemd-sysusers healthgate.conf
    systemd-tmpfiles --create healthgate.conf
    if command -v udevadm >/dev/null && [ -d /run/udev ]; then
        udevadm control --reload || true
        udevadm trigger --subsystem-match=tty --action=change || true
    fi
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload
        systemctl enable healthgate.service
        systemctl restart healthgate.service
    fi
fi
EOF
cat > "$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
# Stopping commits everything the daemon holds. The store in /var/lib/healthgate stays.
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    systemctl disable --now healthgate.service || true
fi
EOF
cat > "$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
# Neither remove nor purge deletes /var/lib/healthgate (the health store) or the healthgate user.
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

mkdir -p "$out"
deb="$out/healthgate_${version}_${arch}.deb"
dpkg-deb --root-owner-group "-Z$compression" --build "$root" "$deb" >/dev/null
echo "$deb"
echo "package-deb.sh: Depends: $depends_line, systemd" >&2
