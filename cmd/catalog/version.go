package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// buildVersion is what the binary knows of its build (runtime/debug):
// the module version ("(devel)" for a build from a work tree) and, when
// the build recorded it (go build with VCS stamping, the default in a git
// work tree unless -buildvcs=false), the revision, its time and whether
// the tree had local changes.
type buildVersion struct {
	Version  string
	Revision string
	Time     string
	Modified bool
	Go       string
}

func readVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf reads bi (nil when the binary has no build information).
func versionOf(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: "(devel)", Go: runtime.Version()}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// shortRevision is the revision's first 12 digits, "+dirty" when the tree
// was modified; "" when unknown.
func (v buildVersion) shortRevision() string {
	r := v.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if r != "" && v.Modified {
		r += "+dirty"
	}
	return r
}

// String is the version line: "v1.2.0 (revision 4dfb5322c1ab, 2026-12-01T10:00:00Z) go1.26.8 linux/amd64".
func (v buildVersion) String() string {
	var b strings.Builder
	b.WriteString(v.Version)
	if r := v.shortRevision(); r != "" {
		b.WriteString(" (revision " + r)
		if v.Time != "" {
			b.WriteString(", " + v.Time)
		}
		b.WriteString(")")
	}
	b.WriteString(" " + v.Go + " " + runtime.GOOS + "/" + runtime.GOARCH)
	return b.String()
}
