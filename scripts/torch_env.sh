# Sourced by the compare_*.sh scripts: the shared set-up of a side-by-side
# run with the PyTorch yardstick. Sets yard, threads, out (a scratch
# directory) and ld (the OpenBLAS library directory for LD_LIBRARY_PATH
# when the first argument is --openblas, else empty), installing Debian's
# python3-torch if it is missing.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH=$PATH:/usr/local/go/bin
yard=${YARDSTICK:-../shared/yardstick}
threads=${THREADS:-2}
out=$(mktemp -d)

if ! /usr/bin/python3 -c 'import torch, h5py' 2>/dev/null; then
  apt-get install -y --no-install-recommends python3-torch python3-numpy python3-h5py >/dev/null
fi
ld=""
if [[ "${1:-}" == "--openblas" ]]; then
  ob=$out/openblas
  mkdir -p "$ob" && (cd "$ob" && apt-get download libopenblas0-pthread >/dev/null && dpkg -x libopenblas0-pthread_*.deb root)
  ld=$ob/root/usr/lib/x86_64-linux-gnu/openblas-pthread
fi
