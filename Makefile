# uhno build targets. On a fresh Debian machine run `bash scripts/setup.sh`
# first (or `make setup` where make is already installed).

# Go lives in /usr/local/go on the build machines and may not be on PATH.
export PATH := $(PATH):/usr/local/go/bin

GO ?= go
# The version `uhno doctor` and `uhno --version` print.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# CUDA: nvcc 11.8 from Debian's nvidia-cuda-toolkit (GUIDE section 1);
# PTX for compute capability 8.0, JIT-compiled by the driver for the GPU it
# runs on (sm_90 on the H100).
NVCC ?= nvcc
NVCCFLAGS ?= -ccbin g++-11 -arch=compute_80 -O3 -std=c++14
KERNELS := $(wildcard kernels/*.cu)
PTX := $(patsubst kernels/%.cu,internal/cuda/ptx/%.ptx,$(KERNELS))
# The CUDA binary links HDF5 statically so it runs on the GPU machine,
# which has no HDF5 (GUIDE section 1); libcuda comes from the driver.
CUDA_CGO_LDFLAGS := -Wl,-Bstatic -lhdf5_serial_hl -lhdf5_serial -lsz -laec -lz -Wl,-Bdynamic -lm -ldl

.PHONY: build emu race fuzz test emu-test emu-generate bench setup clean kernels cuda cuda-test vet-cuda ptx-check gpu-kit gpu-kit-rehearsal

## build: the CPU binary bin/uhno
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/uhno ./cmd/uhno

## emu: bin/uhno-emu, the CUDA code path on the CPU under the emulator (for
## debugging the GPU build without a GPU; slow)
emu: emu-generate
	$(GO) build -tags cudaemu -ldflags "$(LDFLAGS)" -o bin/uhno-emu ./cmd/uhno

## test: vet and run every test, uncached, the race detector (race), the
## fuzz targets for a bounded time (fuzz), then the CUDA backend's tests
## under the CPU emulator (emu-test)
test: emu-generate
	$(GO) vet ./...
	$(GO) vet -tags cudaemu ./...
	$(GO) test -count=1 ./...
	$(GO) test -race -count=1 $(RACE_PKGS)
	bash scripts/fuzz.sh
	bash scripts/emu_test.sh

# RACE_PKGS are the packages whose code runs goroutines or is driven by
# them: the CPU backend's parallel loops, datagen's workers, the input
# pipeline and HDF5 access, evaluation's parallel metrics, training with its
# progress reporting, the experiments (internal/experiment: the logic the
# commands run) and the commands. internal/data/pde (serial solvers,
# 3 minutes under -race) and internal/eval/figure (serial rendering, no
# goroutine; 2.5 minutes under -race) are left out (D-ci-time).
RACE_PKGS := ./internal/cpu/ ./internal/datagen/ ./internal/data/ ./internal/data/h5/ ./internal/eval/ ./internal/train/ ./internal/experiment/ ./cmd/uhno/

## fuzz: every fuzz target of the readers of outside input, FUZZTIME
## seconds each (default 10; make test runs it; scripts/fuzz.sh)
fuzz:
	bash scripts/fuzz.sh

## race: the race detector over RACE_PKGS (make test runs it)
race:
	$(GO) test -race -count=1 $(RACE_PKGS)

## emu-test: the CUDA backend's tests on the CPU under the emulator, once per
## thread order (internal/cuda/emu; scripts/emu_test.sh)
emu-test: emu-generate
	bash scripts/emu_test.sh

## emu-generate: the emulator's wrappers and launch table from kernels/*.cu
emu-generate:
	$(GO) generate ./internal/cuda/emu

## bench: the benchmarks of the internal packages, no tests
bench:
	$(GO) test -run '^$$' -bench . ./internal/...

## kernels: compile kernels/*.cu to PTX in internal/cuda/ptx (committed, embedded)
kernels: $(PTX)

internal/cuda/ptx/%.ptx: kernels/%.cu kernels/common.cuh kernels/gemm.cuh
	@mkdir -p internal/cuda/ptx
	$(NVCC) $(NVCCFLAGS) -ptx -o $@ $<

# CUDA_ENV sets the cgo flags of a cuda build: the system headers where
# /usr/include/cuda.h exists, else the ones scripts/cuda_headers.sh unpacks
# (its stub libcuda.so path is kept: CGO_LDFLAGS is extended, not replaced).
CUDA_ENV = if [ ! -f /usr/include/cuda.h ]; then flags="$$(bash scripts/cuda_headers.sh)" && eval "$$flags" || exit 1; fi; \
	export CGO_LDFLAGS="$${CGO_LDFLAGS:-} $(CUDA_CGO_LDFLAGS)";

## ptx-check: the committed PTX is current (every kernel of kernels/*.cu has
## its .entry; TestPTXMatchesKernels, no nvcc). The cuda targets use it
## instead of a file dependency: after a fresh clone git may give
## kernels/*.cu a newer mtime than the PTX, and the GPU and build machines
## need no nvcc. `make kernels` regenerates the PTX.
ptx-check:
	$(GO) test -count=1 -run '^TestPTXMatchesKernels$$' ./internal/cuda/

## cuda: the GPU binary bin/uhno-cuda (needs the CUDA headers; runs only where a GPU is)
cuda: ptx-check
	$(CUDA_ENV) $(GO) build -tags cuda -ldflags "$(LDFLAGS)" -o bin/uhno-cuda ./cmd/uhno

## cuda-test: the GPU test binaries, to run on the GPU machine: bin/cuda.test
## (every kernel against the CPU backend) and bin/cuda-train.test (the GPU's
## loss curve against the CPU's)
cuda-test: ptx-check
	$(CUDA_ENV) $(GO) test -c -tags cuda -o bin/cuda.test ./internal/cuda
	$(CUDA_ENV) $(GO) test -c -tags cuda -o bin/cuda-train.test ./internal/train

## gpu-kit: everything the first GPU run needs, built here (scripts/gpu_kit.sh):
## stripped binaries with static HDF5 checked with readelf -d, the CPU
## reference training log and bench sizes, the yardstick, in bin/ and .gpukit/;
## prints the device command and the carry list (internal/cuda's package
## documentation, "Checking on a GPU: the kit")
gpu-kit: ptx-check build
	VERSION=$(VERSION) CUDA_CGO_LDFLAGS='$(CUDA_CGO_LDFLAGS)' bash scripts/gpu_kit.sh

## gpu-kit-rehearsal: scripts/gpu_checks.sh run here against the emulator
## build with a short fake deadline and a step forced to hang
## (scripts/gpu_kit_rehearsal.sh; REHEARSAL_DEADLINE, default 120 s)
gpu-kit-rehearsal: emu-generate build
	bash scripts/gpu_kit_rehearsal.sh

## vet-cuda: compile-check and vet the cuda build tag (needs the CUDA headers, not a GPU;
## without /usr/include/cuda.h, scripts/cuda_headers.sh unpacks them into .cache/cuda)
vet-cuda:
	@if [ -f /usr/include/cuda.h ]; then \
		echo "$(GO) vet -tags cuda ./..."; \
		$(GO) vet -tags cuda ./...; \
	else \
		flags="$$(bash scripts/cuda_headers.sh)" && eval "$$flags" && \
		echo "$$flags" && echo "$(GO) vet -tags cuda ./..." && \
		$(GO) vet -tags cuda ./...; \
	fi

## setup: system packages (apt-get, as root) and Go modules
setup:
	bash scripts/setup.sh

## clean: remove build outputs
clean:
	rm -rf bin
	$(GO) clean -testcache
