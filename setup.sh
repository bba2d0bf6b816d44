#!/usr/bin/env bash
# Set up vraid on a fresh Debian machine (as root): system packages, then a
# virtual environment in .venv with vraid installed in editable mode.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v fusermount3 >/dev/null || need+=(fuse3)
pkg-config --exists fuse3 2>/dev/null || need+=(libfuse3-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v losetup >/dev/null || need+=(mount)
command -v gcc >/dev/null || need+=(gcc)
command -v tmux >/dev/null || need+=(tmux)
command -v fio >/dev/null || need+=(fio)
command -v dbench >/dev/null || need+=(dbench)  # bench/run.py: dbench on ext4 over a loop device
command -v postmark >/dev/null || need+=(postmark)  # vraid experiment vc-raid: PostMark on ext4 over a loop device
command -v bonnie++ >/dev/null || need+=(bonnie++)  # vraid experiment vc-raid: bonnie++ (Fig. 8) on ext4 over a loop device
python3 -c 'import sysconfig,os,sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"],"Python.h")))' || need+=(python3-dev)
python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
modprobe loop 2>/dev/null || true
modprobe fuse 2>/dev/null || true

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip 'setuptools>=77'  # the build backend pyproject.toml names (tests build the wheel offline)
.venv/bin/python -m pip install -q -e '.[test,mount]'  # mount: pyfuse3 (the extra vraid[mount])
echo "setup: ready (.venv/bin/vraid)"
