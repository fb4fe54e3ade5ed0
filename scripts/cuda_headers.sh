#!/usr/bin/env bash
# Unpacks the CUDA 11.8 headers and the stub libcuda.so from Debian's
# packages into a cache folder, installing nothing system-wide, and prints
# the cgo flags that make `go vet -tags cuda` and `go build -tags cuda` use
# them. This is the light route of GUIDE section 1, for a compile-only
# check of the cuda build tag on a machine without the CUDA toolkit (CI).
# `make vet-cuda` runs it when /usr/include/cuda.h is absent.
#
# Usage: bash scripts/cuda_headers.sh [DIR]
#   DIR defaults to $UHNO_CUDA_CACHE, else .cache/cuda in the repository
#   (ignored by git). A filled DIR is reused: the ~860 MB of packages are
#   downloaded and unpacked only once (about 40 s), and deleted afterwards;
#   DIR keeps about 16 MB: DIR/usr/include and
#   DIR/usr/lib/<multiarch>/stubs/libcuda.so.
#
# Output on stdout, for `eval "$(bash scripts/cuda_headers.sh)"`:
#   export CGO_CFLAGS='<$CGO_CFLAGS, else -O2 -g> -IDIR/usr/include'
#   export CGO_LDFLAGS='<$CGO_LDFLAGS> -LDIR/usr/lib/<multiarch>/stubs'
# Progress and errors go to stderr.
#
# The packages are nvidia-cuda-dev (cuda.h and the rest of the toolkit's
# headers, the stub libcuda.so), nvidia-cuda-toolkit (nvvm.h) and
# libcub-dev (cub/), from Debian bookworm's non-free and main components.
# When apt cannot download them (non-free not enabled, as on a fresh
# machine, or no package lists yet), the script runs `apt-get update` against a private copy
# of the machine's sources with non-free added, under DIR/apt, and leaves
# /etc/apt and /var/lib/apt untouched. UHNO_CUDA_APT=private forces that
# route.
set -euo pipefail

PACKAGES=(nvidia-cuda-dev nvidia-cuda-toolkit libcub-dev)

repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-${UHNO_CUDA_CACHE:-$repo/.cache/cuda}}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
stamp="$dir/.complete"

log() { echo "cuda_headers: $*" >&2; }

# stubdir prints the folder holding the unpacked stub libcuda.so.
stubdir() {
  local f
  f="$(find "$dir/usr/lib" -path '*/stubs/libcuda.so' -print -quit 2>/dev/null || true)"
  [ -n "$f" ] && dirname "$f"
}

# quote prints its argument single-quoted for the shell.
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# private_apt prepares apt state under $dir/apt from the machine's sources
# with the non-free component added, and sets APT_OPTS to use it.
private_apt() {
  local a="$dir/apt" f
  rm -rf "$a"
  mkdir -p "$a/sources.list.d" "$a/lists/partial" "$a/cache/archives/partial"
  : >"$a/sources.list"
  if [ -f /etc/apt/sources.list ]; then
    # one-line format: add non-free to every deb line that lacks it
    sed -E '/^[[:space:]]*deb[[:space:]]/{/[[:space:]]non-free([[:space:]]|$)/!s/[[:space:]]*$/ non-free/}' \
      /etc/apt/sources.list >"$a/sources.list"
  fi
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed -E -e '/^[[:space:]]*deb[[:space:]]/{/[[:space:]]non-free([[:space:]]|$)/!s/[[:space:]]*$/ non-free/}' \
      -e '/^Components:/{/[[:space:]]non-free([[:space:]]|$)/!s/[[:space:]]*$/ non-free/}' \
      "$f" >"$a/sources.list.d/$(basename "$f")"
  done
  APT_OPTS=(-o "Dir::Etc::SourceList=$a/sources.list" -o "Dir::Etc::SourceParts=$a/sources.list.d"
    -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache" -o "APT::Sandbox::User=root")
  log "apt cannot download ${PACKAGES[*]}: updating private package lists with non-free in $a"
  apt-get "${APT_OPTS[@]}" -qq update >&2
}

if [ ! -f "$stamp" ] || [ ! -f "$dir/usr/include/cuda.h" ] || [ -z "$(stubdir)" ]; then
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
    log "needs apt-get and dpkg-deb (a Debian machine)"
    exit 1
  }
  rm -rf "$dir/usr" "$stamp"
  APT_OPTS=(-o "APT::Sandbox::User=root")
  if [ "${UHNO_CUDA_APT:-}" = private ] || ! apt-get "${APT_OPTS[@]}" -qq --print-uris download "${PACKAGES[@]}" >/dev/null 2>&1; then
    private_apt
  fi
  debs="$(mktemp -d "$dir/debs.XXXXXX")"
  trap 'rm -rf "$debs"' EXIT
  log "downloading ${PACKAGES[*]} (about 860 MB) into $debs"
  (cd "$debs" && apt-get "${APT_OPTS[@]}" -qq download "${PACKAGES[@]}" >&2)
  for p in "${PACKAGES[@]}"; do
    deb="$(ls "$debs/${p}"_*.deb)"
    log "unpacking usr/include$([ "$p" = nvidia-cuda-dev ] && echo " and the stub libcuda.so") of $(basename "$deb")"
    members=(./usr/include)
    [ "$p" = nvidia-cuda-dev ] && members+=('./usr/lib/*/stubs/libcuda.so')
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards "${members[@]}"
  done
  for deb in "$debs"/*.deb; do dpkg-deb -f "$deb" Package Version | sed 's/^[^:]*: //' | paste -sd' '; done >"$dir/.versions"
  rm -rf "$debs" "$dir/apt"
  [ -f "$dir/usr/include/cuda.h" ] && [ -n "$(stubdir)" ] || {
    log "the packages did not provide cuda.h and stubs/libcuda.so"
    exit 1
  }
  mv "$dir/.versions" "$stamp"
  log "done: $(du -sh "$dir" | cut -f1) in $dir"
fi

echo "export CGO_CFLAGS=$(quote "${CGO_CFLAGS:--O2 -g} -I$dir/usr/include")"
echo "export CGO_LDFLAGS=$(quote "${CGO_LDFLAGS:+$CGO_LDFLAGS }-L$(stubdir)")"
