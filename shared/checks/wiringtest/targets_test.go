package wiringtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Import-path prefixes of each target's adapters and of the SDKs they pull in.
var (
	localOnly = []string{
		"ordersaga/shared/wiring/localwiring", "ordersaga/shared/adapters/sqlitestore", "ordersaga/shared/adapters/sqlitequeue",
		"ordersaga/shared/adapters/prommetrics", "modernc.org/sqlite", "modernc.org/libc", "github.com/prometheus/",
	}
	cloudOnly = []string{
		"ordersaga/shared/wiring/cloudwiring", "ordersaga/shared/adapters/ydbstore", "ordersaga/shared/adapters/ymq",
		"ordersaga/shared/adapters/ycmetrics", "github.com/ydb-platform/", "github.com/aws/", "github.com/yandex-cloud/",
	}
)

// deps lists the packages a build of pkg compiles (tests excluded), with
// the tags the Cloud Functions builder uses.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", "ycf", "-f", "{{.ImportPath}}", pkg)
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, msg)
	}
	return strings.Fields(string(out))
}

// matching returns the packages of list that are one of prefixes or below
// it ("github.com/aws/" matches every package under github.com/aws).
func matching(list, prefixes []string) []string {
	var out []string
	for _, p := range list {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, strings.TrimSuffix(pre, "/")+"/") {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func summary(pkgs []string) string {
	if len(pkgs) > 8 {
		return strings.Join(pkgs[:8], " ") + " …"
	}
	return strings.Join(pkgs, " ")
}

// Every cloud function compiles the cloud adapters and nothing of SQLite or
// Prometheus (the zips stay within the builder's limits).
func TestCloudFunctionsCarryNoLocalAdapter(t *testing.T) {
	dirs, err := os.ReadDir("../../../functions")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join("../../../functions", d.Name(), "index.go")); err != nil {
			continue
		}
		n++
		pkg := "ordersaga/functions/" + d.Name()
		list := deps(t, pkg)
		if bad := matching(list, localOnly); len(bad) > 0 {
			t.Errorf("%s compiles local adapters (%d packages): %s", pkg, len(bad), summary(bad))
		}
		if got := matching(list, []string{"ordersaga/shared/adapters/ydbstore", "ordersaga/shared/adapters/ymq", "ordersaga/shared/adapters/ycmetrics"}); len(got) != 3 {
			t.Errorf("%s lacks cloud adapters: has only %v", pkg, got)
		}
	}
	if n < 5 {
		t.Fatalf("found %d functions under functions/, want the five", n)
	}
}

// The local runner's default build compiles no cloud adapter and no cloud
// SDK (its first `go run` on a fresh machine stays short); the explicit
// cloud-adapter build carries both kinds.
func TestLocalRunnerCarriesNoCloudAdapter(t *testing.T) {
	list := deps(t, "ordersaga/scripts/localcloud")
	if bad := matching(list, cloudOnly); len(bad) > 0 {
		t.Errorf("scripts/localcloud compiles cloud adapters or SDKs (%d packages): %s", len(bad), summary(bad))
	}
	if got := matching(list, []string{"ordersaga/shared/adapters/sqlitestore", "ordersaga/shared/adapters/sqlitequeue", "ordersaga/shared/adapters/prommetrics"}); len(got) != 3 {
		t.Errorf("scripts/localcloud lacks local adapters: has only %v", got)
	}
	opt := deps(t, "ordersaga/scripts/localcloud/cloudadapters")
	if got := matching(opt, []string{"ordersaga/shared/adapters/ydbstore", "ordersaga/shared/adapters/ymq", "ordersaga/shared/adapters/sqlitestore"}); len(got) != 3 {
		t.Errorf("scripts/localcloud/cloudadapters should carry YDB, YMQ and SQLite: has %v", got)
	}
}
