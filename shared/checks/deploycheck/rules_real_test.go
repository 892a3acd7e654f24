package deploycheck

import (
	"os"
	"path/filepath"
	"testing"
)

// The provider's and the platform's rules, held against terraform/.

func TestYDBRoleIsOneRootBinding(t *testing.T) {
	d := load(t)
	report(t, ydbGrantProblems(d.Root, d.Mods))
	if len(d.Root.blocks("resource", "yandex_ydb_database_iam_binding")) == 0 {
		t.Error("no yandex_ydb_database_iam_binding: the functions could not read or write the database")
	}
}

func TestGrantsWaitForPropagation(t *testing.T) {
	d := load(t)
	report(t, grantWaitProblems(d.Root))
	for _, m := range modulesOf(d) {
		report(t, grantWaitProblems(m))
	}
}

func TestEveryFunctionChecksItsVersion(t *testing.T) {
	d := load(t)
	n := len(d.Root.blocks("resource", "yandex_function"))
	report(t, functionVersionProblems(d.Root))
	for _, m := range modulesOf(d) {
		n += len(m.blocks("resource", "yandex_function"))
		report(t, functionVersionProblems(m))
	}
	if n == 0 {
		t.Fatal("no yandex_function found")
	}
}

func TestStaticKeysRotateWithoutGap(t *testing.T) {
	d := load(t)
	report(t, staticKeyProblems(d.Root))
	for _, m := range modulesOf(d) {
		report(t, staticKeyProblems(m))
	}
}

func TestFilePathsDoNotDependOnWorkingDirectory(t *testing.T) {
	d := load(t)
	report(t, pathProblems(d.Root, nil))
	for _, call := range sortedKeys(d.Calls) {
		report(t, pathProblems(d.Mods[call], rootedCallArgs(d.Root, d.Calls[call])))
	}
}

func TestDashboardShowsPushedMetricsAndRunbookPointsToIt(t *testing.T) {
	d := load(t)
	panels, err := dashboardPanels(d.Root)
	if err != nil {
		t.Fatal(err)
	}
	runbook, err := os.ReadFile(filepath.Join(repoRoot, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	report(t, dashboardProblems(panels, string(runbook)))
}
