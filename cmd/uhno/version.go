package main

// version is the release name of this binary. `make build` sets it from
// `git describe` with -ldflags "-X main.version=..."; plain `go build`
// leaves "dev". doctor adds the VCS details the toolchain records.
var version = "dev"
