#!/usr/bin/env bash
# Platforms (issue 18): cross-compile and vet every supported GOOS/GOARCH
# without cgo, then run the test suite for linux/s390x (big-endian) and
# linux/arm64 under qemu-user. Called by .ci/run; runs on its own too:
#   bash .ci/platforms.sh            everything
#   bash .ci/platforms.sh cross      only the cross-compile and vet
#   bash .ci/platforms.sh emulated   only the emulated test runs
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}

targets=(
	linux/amd64 linux/arm64 linux/386 linux/s390x linux/ppc64le linux/riscv64
	darwin/amd64 darwin/arm64
	windows/amd64 windows/arm64
	freebsd/amd64
)

if [ "$what" = all ] || [ "$what" = cross ]; then
	echo "== cross-compile and vet: ${targets[*]}"
	start=$(date +%s)
	for t in "${targets[@]}"; do
		# go vet type-checks the test files too, so every test package
		# compiles for the target.
		GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go vet ./...
		GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go build -o /dev/null ./cmd/mpigo
		echo "ok   $t"
	done
	echo "cross-compile and vet took $(($(date +%s) - start)) s"
fi

if [ "$what" = all ] || [ "$what" = emulated ]; then
	if ! command -v qemu-s390x-static >/dev/null 2>&1 || ! command -v qemu-aarch64-static >/dev/null 2>&1; then
		apt-get -o DPkg::Lock::Timeout=600 update
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y qemu-user-static
	fi
	# Every package but cmd/mpigo, whose tests build programs and start
	# them as processes (the launcher, ranks): without binfmt_misc (not
	# registered in a container) the kernel cannot run those foreign
	# binaries. The test binaries themselves run under qemu through
	# go test -exec. -short: under emulation every test is 10-50 times
	# slower; -short keeps the suite's shape (every test runs) with
	# smaller sizes.
	pkgs=$(go list ./... | grep -v '/cmd/mpigo$')
	# s390x: the whole suite, big-endian, but TestStress (3 minutes under
	# emulation even with -short; it stresses concurrency, which the
	# native race run covers, not byte order).
	echo "== go test -short under qemu: linux/s390x (big-endian)"
	start=$(date +%s)
	# shellcheck disable=SC2086
	GOARCH=s390x CGO_ENABLED=0 go test -exec qemu-s390x-static -short -count=1 -timeout 30m -json \
		-skip '^TestStress$' $pkgs | go run .ci/testreport.go
	echo "linux/s390x tests took $(($(date +%s) - start)) s"
	# arm64: little-endian like amd64 but with a weaker memory model, where
	# the lock-free rings and boxes of shm and the engine's atomics would
	# show a missing barrier. The transports, the engine and the wire
	# format in full; of the root package (10 minutes under emulation on its own),
	# the tests below, which run every transport of the matrix (inproc,
	# tcp, shm rings and boxes) through point-to-point, rendezvous, large
	# messages, collectives and concurrent traffic.
	arm64_root_tests='^(TestBarrierBcast|TestReduceAllreduce|TestGatherScatterAlltoall|TestLargeMessage|TestConcurrentCollectives|TestHierarchicalCollectives|TestFailureDuringRendezvous|TestDerivedSendRecv|TestCancelSendKinds|TestScanExscan)$'
	echo "== go test -short under qemu: linux/arm64"
	start=$(date +%s)
	GOARCH=arm64 CGO_ENABLED=0 go test -exec qemu-aarch64-static -short -count=1 -timeout 30m -json \
		./internal/transport/... ./internal/engine ./internal/wire | go run .ci/testreport.go
	GOARCH=arm64 CGO_ENABLED=0 go test -exec qemu-aarch64-static -short -count=1 -timeout 30m -json \
		-run "$arm64_root_tests" . | go run .ci/testreport.go
	echo "linux/arm64 tests took $(($(date +%s) - start)) s"
fi
