package ydbstore

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"ordersaga/shared/domain/apperr"
)

// Migration is one schema migration file NNNN_name.sql.
type Migration struct {
	Version    int64    // NNNN
	Name       string   // the file name
	Statements []string // the file's YQL statements, comments kept, in order
}

var migrationName = regexp.MustCompile(`^([0-9]{4,})_[a-z0-9_]+\.sql$`)

// LoadMigrations reads the migrations at the root of fsys (schema/ydb's
// ydbschema.FS), sorted by version. Errors (Invalid): a .sql file not named
// NNNN_name.sql, two files with one version, or a file without statements.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "ydbstore: read migrations")
	}
	var out []Migration
	seen := make(map[int64]string)
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, apperr.New(apperr.Invalid, "ydbstore: migration %q is not named NNNN_name.sql", e.Name())
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err, "ydbstore: migration %q", e.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, apperr.New(apperr.Invalid, "ydbstore: migrations %q and %q share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		text, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, apperr.Wrap(apperr.Internal, err, "ydbstore: read migration %q", e.Name())
		}
		stmts, err := SplitStatements(string(text))
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err, "ydbstore: migration %q", e.Name())
		}
		if len(stmts) == 0 {
			return nil, apperr.New(apperr.Invalid, "ydbstore: migration %q has no statements", e.Name())
		}
		out = append(out, Migration{Version: v, Name: e.Name(), Statements: stmts})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// SplitStatements splits YQL text into statements at semicolons outside
// comments (-- and /* */), string literals ('...', "...") and backquoted
// names. Statements are trimmed; empty ones (and comment-only text) are
// dropped. An unterminated literal, name or block comment is an error.
// Each schema statement runs as its own query, so a failure names it.
func SplitStatements(text string) ([]string, error) {
	var (
		out   []string
		start int
		code  bool // the current statement has something besides comments
	)
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); code && s != "" {
			out = append(out, s)
		}
		start, code = end+1, false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(text)
			}
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("unterminated /* comment at byte %d", i)
			}
			i += j + 3
		case c == '\'' || c == '"' || c == '`':
			j := closing(text, i+1, c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c at byte %d", c, i)
			}
			i, code = j, true
		case c == ';':
			flush(i)
		case c > ' ':
			code = true
		}
	}
	if start < len(text) {
		flush(len(text))
	}
	return out, nil
}

// closing returns the index of the quote q closing a literal that starts at
// from, honouring backslash escapes, or -1.
func closing(text string, from int, q byte) int {
	for i := from; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return -1
}
