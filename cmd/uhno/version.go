package main

import "runtime/debug"

// version is the release name of this binary. `make build` sets it from
// `git describe` with -ldflags "-X main.version=..."; a plain `go build`
// leaves "dev", which init extends with the commit the toolchain
// recorded, so that results.json and reports written by such a binary
// still name their source ("dev+0123456789ab", "+dirty" for uncommitted
// changes). doctor adds the rest of the VCS details.
var version = "dev"

func init() {
	if version == "dev" {
		info, ok := debug.ReadBuildInfo()
		version = devVersion(info, ok)
	}
}

// devVersion is "dev" with the VCS revision (12 hex digits) and "+dirty"
// for a modified tree appended, when the build info records them.
func devVersion(info *debug.BuildInfo, ok bool) string {
	v := "dev"
	if !ok || info == nil {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	v += "+" + rev[:min(12, len(rev))]
	if dirty {
		v += "+dirty"
	}
	return v
}
