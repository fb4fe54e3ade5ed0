package main

import (
	"runtime/debug"
	"testing"
)

// TestDevVersion: a binary without -X main.version names its commit.
func TestDevVersion(t *testing.T) {
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "dev"},
		{"no VCS", &debug.BuildInfo{}, true, "dev"},
		{"clean", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}}, true, "dev+0123456789ab"},
		{"modified", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "abc"}}}, true, "dev+abc+dirty"},
	} {
		if got := devVersion(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
