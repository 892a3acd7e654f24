package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// benchYDBFake prints the RPCs and request units per business operation as
// the real SDK sends them to the fake YDB server of the adapter's tests
// (shared/adapters/ydbstore/fakeydb_*_test.go: the real use cases, ydbstore.Open and
// ydb-go-sdk against a gRPC server that records every RPC). The fake lives
// in the adapter's tests so that it never ships, so the bench runs that
// test (TestRequestUnitsPerOrder) and reprints its table. The RU are the
// I/O part of YDB's published rule, a read 1 RU and a write 2 RU per row,
// index rows included (https://yandex.cloud/en/docs/ydb/pricing/ru-yql;
// docs/ydb.md, "What is verified, and against what").
func benchYDBFake() []row {
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestRequestUnitsPerOrder$", "-v", "./shared/adapters/ydbstore/")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: fake YDB measurement: %v\n%s", err, out.String())
		return nil
	}
	var rows []row
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		_, line, ok := strings.Cut(sc.Text(), "ydbfake\t")
		if !ok {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			continue
		}
		detail := "-"
		if f[3] != "-" {
			detail = fmt.Sprintf("%s reads, %s writes", f[3], f[4])
		}
		rows = append(rows, row{"YDB via the fake server: " + f[0], fmt.Sprintf("%s RPCs, %s RU (I/O)", f[1], f[2]), detail, "-"})
	}
	return rows
}
