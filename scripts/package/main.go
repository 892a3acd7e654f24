// Command package builds one deployment zip per cloud function for the
// Yandex Cloud Functions golang123 runtime (platform-notes §1.2):
//
//	go run ./scripts/package [-out dist] [-only name] [-verify]
//
// Each dist/<name>.zip holds, with fixed order and timestamps (same input →
// same SHA-256):
//
//   - the function's files (index.go, entry point index.Handler) at the root;
//   - the ordersaga packages it imports, transitively, at their module-relative
//     paths (shared/x stays shared/x, schema stays schema), with the files
//     they embed; non-test sources only, as selected for linux/amd64 with the
//     builder's build tag ycf;
//   - a go.mod (module ordersaga) with the require lines of exactly the
//     modules that function needs and NO go/toolchain line (the builder
//     rejects them), and a go.sum with only the lines that go.mod needs.
//
// A go.mod without a go line means "go 1.16" to the go command: the zip's
// own packages would compile with Go 1.16 language rules (no generics, no
// any, old loop variables: "predeclared any requires go1.18 or later (-lang
// was set to go1.16; check go.mod)"), unless the builder lets the go command
// write a go line first — which it must do in practice, since with Go ≥ 1.21
// a go-line-less go.mod whose dependencies declare newer go lines fails
// -mod=readonly ("updates to go.mod needed"), and under -mod=mod the go
// command writes its own version. So that the code compiles with the rules it
// was written and tested for either way, every .go file in the zip gets the
// build constraint "//go:build go1.N" (N from the root go.mod): it sets that
// file's language version (Go ≥ 1.21 honours per-file versions) and is always
// satisfied on the go1.23 builder.
//
// Without a go line the module graph is not pruned, so go.sum must hold the
// go.mod checksums of the whole unpruned graph; the tool computes them, and
// refuses a function when any module in that graph declares a Go version
// newer than -max-go (the runtime's 1.23.9), or when the cloud build would
// select other module versions than the repository's own build.
//
// -verify then unpacks every zip into a temporary directory and builds it as
// the builder must (see verifyZip): -mod=mod, -tags ycf, -buildmode=plugin;
// the build may not need a checksum the zip lacks, and the plugin must export
// Handler. It then loads the plugin in a host process the way the runtime
// does (scripts/package/pluginhost: plugin.Open, Handler's signature) and
// calls it once with the platform's sample event and no cloud configured: it
// must answer with its documented cold-start failure, never panic.
//
// -toolchain picks the go command of -verify: "local" (the machine's Go, the
// default, fast enough for CI) or a release such as go1.23.9, the runtime's
// (fetched through the module proxy once, like GOTOOLCHAIN=go1.23.9).
// -cold (implies -toolchain go1.23.9 unless given) builds each zip from
// empty module and build caches on one CPU and reports its build time,
// largest process and module download size against the builder's limits
// (5 min, 1 GB, 700 MB), failing past -margin of a limit; -strict also fails
// on the project's targets (120 s, 500 MB, 300 MB). A cold build of one zip
// takes minutes: it is opt-in and not part of scripts/test.sh.
//
// PACKAGE_KEEP_TMP=1 keeps each function's scratch module for inspection.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "package:", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	root      string
	out       string
	only      string
	verify    bool
	maxGo     string
	toolchain string
	cold      bool
	margin    float64
	strict    bool
}

func run(args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("package", flag.ContinueOnError)
	fs.StringVar(&o.root, "root", ".", "repository root (the directory holding go.mod)")
	fs.StringVar(&o.out, "out", "dist", "output directory for the zips (relative to the current directory)")
	fs.StringVar(&o.only, "only", "", "package only this function (a folder name under functions/)")
	fs.BoolVar(&o.verify, "verify", false, "after packaging, build every zip as a plugin the way the builder does")
	fs.StringVar(&o.maxGo, "max-go", "1.23.9", "newest Go version the runtime builder has")
	fs.StringVar(&o.toolchain, "toolchain", "", "go command of -verify: local (default) or a release such as go1.23.9 (default with -cold)")
	fs.BoolVar(&o.cold, "cold", false, "with -verify: build each zip from empty caches on one CPU and measure it against the builder's limits (minutes per zip)")
	fs.Float64Var(&o.margin, "margin", 0.8, "with -cold: fail when a measurement exceeds this fraction of the builder's limit")
	fs.BoolVar(&o.strict, "strict", false, "with -cold: also fail when a measurement misses the project's target")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.cold {
		o.verify = true
	}
	if o.toolchain == "" {
		o.toolchain = "local"
		if o.cold {
			o.toolchain = "go" + o.maxGo
		}
	}
	if o.margin <= 0 || o.margin > 1 {
		return fmt.Errorf("-margin %v: want a fraction in (0, 1]", o.margin)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	repo, err := readRepo(root)
	if err != nil {
		return err
	}
	names, err := functionNames(root, o.only)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var results []result
	var errs []error
	for _, name := range names {
		fmt.Fprintf(os.Stderr, "package: %s: resolving packages and modules\n", name)
		b, err := buildBundle(repo, name, o.maxGo)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		path := filepath.Join(o.out, name+".zip")
		sum, size, err := writeZipFile(path, b.Files)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		results = append(results, result{Name: name, Path: path, Size: size, SHA256: sum, Modules: b.Modules})
	}
	if len(results) > 0 {
		printTable(stdout, results)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.verify {
		return verifyAll(root, o, results, stdout)
	}
	return nil
}

// result is one row of the report.
type result struct {
	Name    string
	Path    string
	Size    int64
	SHA256  string
	Modules int
}

func printTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FUNCTION\tZIP BYTES\tSHA256\tMODULES")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\n", r.Name, r.Size, r.SHA256, r.Modules)
	}
	tw.Flush()
}

// functionNames lists the folders under functions/ (or just only).
func functionNames(root, only string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		return nil, fmt.Errorf("reading functions/: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && (only == "" || e.Name() == only) {
			names = append(names, e.Name())
		}
	}
	if only != "" && len(names) == 0 {
		return nil, fmt.Errorf("no function folder functions/%s", only)
	}
	if len(names) == 0 {
		return nil, errors.New("no function folders under functions/")
	}
	sort.Strings(names)
	return names, nil
}

// verifyAll runs the verifier over every packaged zip.
func verifyAll(root string, o options, results []result, stdout io.Writer) error {
	b, err := newBuilder(o.toolchain)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "package-host-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(os.Stderr, "package: building the plugin host with %s\n", b.Version)
	host, err := buildHost(root, b, tmp)
	if err != nil {
		return fmt.Errorf("plugin host: %w", err)
	}
	v := verifier{Root: root, Builder: b, Host: host, Cold: o.cold, Margin: o.margin, Strict: o.strict, Log: os.Stderr}
	var errs []error
	for _, r := range results {
		fmt.Fprintf(os.Stderr, "package: %s: verifying (plugin build as the builder does, with %s)\n", r.Name, b.Version)
		lines, err := v.verifyZip(r.Name, r.Path)
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("verify %s: %w", r.Name, err))
			continue
		}
		fmt.Fprintf(stdout, "verified %s: %s builds it with -buildmode=plugin -tags ycf -mod=mod, go.sum complete, exports Handler\n", r.Name, b.Version)
	}
	return errors.Join(errs...)
}
