#!/usr/bin/env bash
# Prepares a fresh Debian bookworm machine to build and test uhno: system
# packages from apt, then the Go modules. Run it as root (or with sudo
# available). Go 1.26 must already be installed at /usr/local/go.
#
# APT_PACKAGES lists the system packages: make (minimal images lack it), a
# C compiler for the cgo fast paths of internal/cpu, the HDF5 headers and
# libraries that gonum.org/v1/hdf5 links against (internal/data/h5), and
# for the CUDA emulator (internal/cuda/emu, which compiles kernels/*.cu as
# C++) a C++ compiler and FFTW in single precision, its stand-in for cuFFT;
# and Open MPI (openmpi-bin: mpirun; libopenmpi-dev: libmpi.so.40 and its
# headers) for data-parallel training and its tests (uhno loads libmpi at
# run time, so the binary builds and runs without it; the MPI tests fail
# without mpirun when CI=true and skip otherwise).
# Packages already installed are skipped.
set -euo pipefail

APT_PACKAGES=(make gcc g++ libc6-dev libhdf5-dev libfftw3-dev openmpi-bin libopenmpi-dev)

export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "setup: run as root (apt-get needs it) or install sudo" >&2
  exit 1
fi

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go not found on PATH or in /usr/local/go/bin; install Go 1.26 from https://go.dev/dl" >&2
  exit 1
fi

"${SUDO[@]}" apt-get update
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

go version
go mod download
