#!/usr/bin/env bash
# Installs what MONet-open needs on Debian 12, idempotently: apt packages that are missing, then a project
# venv (.venv) with pinned Python packages and the project itself in editable mode.
# Skips every step whose result is already present; the venv is re-synced only when pins change.
set -euo pipefail
cd "$(dirname "$0")/.."

# Sim and firmware; the application benchmarks: YCSB (Maven, a JDK), memcached, numactl, perf; the
# board-in-a-box: QEMU, the aarch64 cross compiler, cpio and depmod to pack Debian's arm64 packages, dtc
# for its device tree; Yosys for the board cores' resource and logic-depth estimates (monet board estimate);
# clang 19 for the sim model (it runs 20-30 % faster than clang 14's, which ran 15-20 % faster than gcc's:
# host/monet/sim/verilator.py).
APT_PACKAGES=(libevent-dev libjson-c-dev zlib1g-dev gcc-riscv64-unknown-elf meson ninja-build
              python3-venv build-essential ccache clang-19
              maven default-jdk-headless memcached numactl linux-perf
              qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross cpio kmod device-tree-compiler
              yosys)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing apt packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    echo "setup: apt packages present"
fi

PYTHON="${PYTHON:-python3}"
VENV=.venv
stamp="$VENV/.monet-pins"
want="$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing pinned Python packages"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
    echo "$want" > "$stamp"
else
    echo "setup: venv up to date"
fi
