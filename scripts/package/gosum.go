package main

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// parseSum parses go.sum content into "path version[/go.mod]" → "h1:...".
func parseSum(data []byte) (map[string]string, error) {
	sum := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want 3 fields, got %q", i+1, line)
		}
		sum[f[0]+" "+f[1]] = f[2]
	}
	return sum, nil
}

// readSum reads and parses a go.sum file.
func readSum(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum, err := parseSum(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sum, nil
}

// formatSum renders sum as go.sum content, sorted.
func formatSum(sum map[string]string) []byte {
	var b strings.Builder
	for _, k := range sortedKeys(sum) {
		b.WriteString(k + " " + sum[k] + "\n")
	}
	return []byte(b.String())
}

// escapeModule applies the module cache's case encoding: every upper-case
// letter becomes '!' and its lower-case form (golang.org/x/mod/module).
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// goModHash returns the go.sum hash ("h1:...") of the go.mod file of
// path@version, read from the module cache's download directory, where the
// go command keeps every go.mod it has fetched (and checked against the
// checksum database).
func goModHash(modCache, path, version string) (string, error) {
	file := filepath.Join(modCache, "cache", "download", filepath.FromSlash(escapeModule(path)), "@v", escapeModule(version)+".mod")
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("go.mod of %s@%s not in the module cache: %w", path, version, err)
	}
	return hash1GoMod(data), nil
}

// hash1GoMod is dirhash.Hash1 of a single file named go.mod: the base64
// SHA-256 of the line "<hex sha256>  go.mod\n".
func hash1GoMod(data []byte) string {
	summary := fmt.Sprintf("%x  %s\n", sha256.Sum256(data), "go.mod")
	h := sha256.Sum256([]byte(summary))
	return "h1:" + base64.StdEncoding.EncodeToString(h[:])
}
