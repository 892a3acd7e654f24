package selfcheck

import (
	"runtime/debug"
)

// Code names the build that answers a self-check.
type Code struct {
	// GoVersion is the toolchain the binary was built with.
	GoVersion string `json:"go_version"`
	// Module is the main module's path and version ("(devel)" when built
	// from a source tree, as the Cloud Functions builder does).
	Module string `json:"module"`
	// Revision is the VCS revision the build recorded, if any (a local
	// build from a git checkout; the zip the platform builds has none).
	Revision string `json:"revision,omitempty"`
	// FunctionVersion is the platform's version id of the running
	// function (its tags, code-<zip hash> and cfg-<settings hash>, are read
	// with `yc serverless function version get <id>`); empty locally.
	FunctionVersion string `json:"function_version,omitempty"`
}

// BuildCode returns the Code of the running binary, with the platform's
// function version id (empty outside the platform).
func BuildCode(functionVersion string) Code {
	c := Code{FunctionVersion: functionVersion}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return c
	}
	c.GoVersion = bi.GoVersion
	c.Module = bi.Main.Path + "@" + bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			c.Revision = s.Value
		}
	}
	return c
}
