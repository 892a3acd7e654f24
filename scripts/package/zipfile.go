package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// zipTime is the timestamp of every zip entry (the earliest MS-DOS date), so
// the archive depends on file names and contents only.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// zipBytes builds a deterministic zip of files: entries sorted by name,
// fixed timestamps and modes, deflate compression. Duplicate or unsafe names
// are errors.
func zipBytes(files []file) ([]byte, error) {
	sorted := append([]file(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, f := range sorted {
		if !safeName(f.Name) {
			return nil, fmt.Errorf("unsafe zip entry name %q", f.Name)
		}
		if i > 0 && sorted[i-1].Name == f.Name {
			return nil, fmt.Errorf("duplicate zip entry %q", f.Name)
		}
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: zipTime}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// safeName reports whether name is a clean relative slash path.
func safeName(name string) bool {
	return name != "" && !strings.HasPrefix(name, "/") && path.Clean(name) == name &&
		name != ".." && !strings.HasPrefix(name, "../") && !strings.Contains(name, `\`)
}

// writeZipFile writes the zip of files to dst atomically and returns its
// SHA-256 (hex) and size.
func writeZipFile(dst string, files []file) (string, int64, error) {
	data, err := zipBytes(files)
	if err != nil {
		return "", 0, err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", 0, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), int64(len(data)), nil
}

// unzipTo extracts the zip at src into dir.
func unzipTo(src, dir string) ([]string, error) {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		if !safeName(f.Name) {
			return nil, fmt.Errorf("unsafe zip entry name %q", f.Name)
		}
		names = append(names, f.Name)
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
	}
	return names, nil
}
