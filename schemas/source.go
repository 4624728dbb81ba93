package schemas

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
)

// Source kinds, the values of SourceSpec.Kind.
const (
	KindFile = "file"
	KindSQL  = "sql"
	KindREST = "rest"
)

// AnyFile, given as the only data root, lets a file source name any file
// the process can read. It is the command line's mode: selmem profile runs
// as the local user, who may profile any file they can open. A server
// passes its configured data roots instead.
const AnyFile = "*"

// SourceSpec describes a data source to profile, as the command line and
// the profile_source tool receive it.
type SourceSpec struct {
	Kind        string            // KindFile, KindSQL or KindREST
	Path        string            // file: the file (CSV/TSV, JSON, JSON Lines, Parquet, Arrow; optionally .gz)
	DSN         string            // sql: postgres URL or key=value string, or a SQLite file
	DSNEnv      string            // sql: instead of DSN, the environment variable holding it
	Query       string            // sql: the query whose rows to profile
	URL         string            // rest: http or https URL answering JSON
	RecordsPath string            // rest: dot-separated path to the records array, e.g. data.items
	Headers     map[string]string // rest: header name -> environment variable holding its value
	Timeout     time.Duration     // rest: 0 is the profiler's default (30s)
}

// invalid is an argument error the caller can show as it is.
func invalid(msg, hint string) error {
	return &memstore.Error{Kind: memstore.ErrInvalid, Msg: "Error: " + msg, Hint: hint}
}

// Source builds the profiler source of s and its connector reference:
// where the data came from, never a credential (no user, password or
// query string; for files the base name only).
//
// roots are the directories a file source (and a SQLite DSN given
// literally) may read: the path, cleaned and with symbolic links resolved,
// must lie inside one of them; relative paths are refused. []string{AnyFile}
// allows any file and resolves relative paths against the working
// directory. No roots allow no file. Errors are *memstore.Error values
// whose text names the argument at fault and what to do; a missing file
// wraps memstore.ErrNotFound.
func (s SourceSpec) Source(roots []string) (src profiler.Source, connector string, err error) {
	switch s.Kind {
	case KindFile:
		if s.DSN != "" || s.DSNEnv != "" || s.Query != "" || s.URL != "" || s.RecordsPath != "" || len(s.Headers) > 0 {
			return nil, "", invalid("a file source takes only a path.", "Leave out dsn, dsn_env, query, url, records_path and headers.")
		}
		if s.Path == "" {
			return nil, "", invalid("a file source needs a path.", "Give the path of the file to profile.")
		}
		p, err := resolveFile(s.Path, roots)
		if err != nil {
			return nil, "", err
		}
		return profiler.FileSource{Path: p}, "file:" + filepath.Base(s.Path), nil
	case KindSQL:
		if s.Path != "" || s.URL != "" || s.RecordsPath != "" || len(s.Headers) > 0 {
			return nil, "", invalid("a sql source takes only dsn or dsn_env, and query.", "Leave out path, url, records_path and headers.")
		}
		dsn := s.DSN
		switch {
		case s.DSN != "" && s.DSNEnv != "":
			return nil, "", invalid("give either dsn or dsn_env, not both.", "Prefer dsn_env, the name of the environment variable holding the DSN.")
		case s.DSNEnv != "":
			if !validEnvName(s.DSNEnv) {
				return nil, "", invalid(fmt.Sprintf("dsn_env %q is not an environment variable name.", s.DSNEnv), "Use letters, digits and underscores, e.g. SALES_DB_DSN.")
			}
			v, ok := os.LookupEnv(s.DSNEnv)
			if !ok || v == "" {
				return nil, "", invalid(fmt.Sprintf("the environment variable %s is not set.", s.DSNEnv), "Ask the user to set it in the environment of selmem to the database's DSN.")
			}
			dsn = v
		case s.DSN == "":
			return nil, "", invalid("a sql source needs dsn_env (or dsn).", "Give the name of the environment variable holding the DSN as dsn_env.")
		}
		if strings.TrimSpace(s.Query) == "" {
			return nil, "", invalid("a sql source needs a query.", "Give the SELECT whose rows to profile.")
		}
		driver, ref := sqlDriver(dsn)
		if driver == "sqlite" && s.DSNEnv == "" {
			// A SQLite DSN is a file: it obeys the data roots like one.
			if _, err := resolveFile(sqlitePath(dsn), roots); err != nil {
				return nil, "", err
			}
		}
		return profiler.SQLSource{Driver: driver, DSN: dsn, Query: s.Query, Name: "query"}, ref, nil
	case KindREST:
		if s.Path != "" || s.DSN != "" || s.DSNEnv != "" || s.Query != "" {
			return nil, "", invalid("a rest source takes only url, records_path and headers.", "Leave out path, dsn, dsn_env and query.")
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "", invalid("the url must be an http or https URL.", "Give the full URL of the endpoint, e.g. https://api.example.com/v1/items.")
		}
		for h, env := range s.Headers {
			if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " \t:") || !validEnvName(env) {
				return nil, "", invalid(fmt.Sprintf("header %q: the value must be the name of the environment variable holding it.", h),
					"Map each header name to an environment variable name, e.g. {\"Authorization\": \"API_TOKEN\"}.")
			}
		}
		if s.Timeout < 0 {
			return nil, "", invalid("the timeout must not be negative.", "Leave it out for 30 seconds.")
		}
		host := u.Hostname()
		if p := u.Port(); p != "" {
			host += ":" + p
		}
		ref := "rest:" + (&url.URL{Scheme: u.Scheme, Host: host, Path: u.Path}).String()
		return profiler.RESTSource{URL: s.URL, RecordsPath: s.RecordsPath, Headers: s.Headers, Timeout: s.Timeout}, ref, nil
	}
	return nil, "", invalid(fmt.Sprintf("source kind %q is not known.", s.Kind), "Use kind file, sql or rest.")
}

// validEnvName reports whether v looks like an environment variable name.
func validEnvName(v string) bool {
	if v == "" {
		return false
	}
	for i, c := range v {
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// resolveFile returns the real path of the file p after checking that it
// lies inside one of roots (see SourceSpec.Source). A path outside every
// root is refused before its existence is checked, so the answer says
// nothing about files outside the roots.
func resolveFile(p string, roots []string) (string, error) {
	anyFile := len(roots) == 1 && roots[0] == AnyFile
	switch {
	case len(roots) == 0:
		return "", invalid("file sources are disabled: no data roots are configured.",
			"Ask the user to set profile.data_roots (env SELMEM_PROFILE_DATA_ROOTS) to the directories selmem may read data from.")
	case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
		return "", invalid(fmt.Sprintf("the path %s contains a .. element.", p), "Give the file's absolute path"+rootsHint(roots, anyFile)+".")
	case !filepath.IsAbs(p) && !anyFile:
		return "", invalid(fmt.Sprintf("the path %s is not absolute.", p), "Give the file's absolute path"+rootsHint(roots, anyFile)+".")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", invalid(fmt.Sprintf("the path %s cannot be resolved.", p), "Give the file's absolute path.")
	}
	outside := invalid(fmt.Sprintf("%s is outside the data roots.", p),
		"Only files under "+strings.Join(roots, ", ")+" can be profiled; ask the user to copy the file there or to add its directory to profile.data_roots.")
	var real []string // the roots with symbolic links resolved
	if !anyFile {
		for _, r := range roots {
			if rr, err := filepath.EvalSymlinks(r); err == nil {
				real = append(real, rr)
			}
		}
		if !inside(abs, roots) && !inside(abs, real) {
			return "", outside
		}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &memstore.Error{Kind: memstore.ErrNotFound, Msg: fmt.Sprintf("Error: the file %s does not exist.", p),
			Hint: "Check the path" + rootsHint(roots, anyFile) + "."}
	}
	if err != nil {
		return "", invalid(fmt.Sprintf("the path %s cannot be read.", p), "Check the path and its permissions.")
	}
	if !anyFile && !inside(resolved, real) {
		return "", outside // a symbolic link pointing out of the roots
	}
	st, err := os.Stat(resolved)
	if err != nil {
		return "", invalid(fmt.Sprintf("the path %s cannot be read.", p), "Check the path and its permissions.")
	}
	if !st.Mode().IsRegular() {
		return "", invalid(fmt.Sprintf("%s is not a regular file.", p), "Give the path of a data file, not a directory.")
	}
	return resolved, nil
}

func rootsHint(roots []string, anyFile bool) string {
	if anyFile {
		return ""
	}
	return " under " + strings.Join(roots, ", ")
}

// inside reports whether the clean absolute path p is one of dirs or below one.
func inside(p string, dirs []string) bool {
	for _, d := range dirs {
		d = filepath.Clean(d)
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// sqlDriver picks the driver for a DSN and a reference to it without
// credentials: postgres:// and postgresql:// URLs and key=value strings
// are Postgres, anything else a SQLite file.
func sqlDriver(dsn string) (driver, ref string) {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return "postgres", "sql:" + (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	}
	if strings.Contains(dsn, "=") && !strings.HasPrefix(dsn, "file:") {
		return "postgres", "sql:postgres"
	}
	return "sqlite", "sql:sqlite:" + filepath.Base(sqlitePath(dsn))
}

// sqlitePath is the file of a SQLite DSN (sqlite:, file: and ?params stripped).
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

// HasPassword reports whether a DSN holds a password: the password of a
// URL's user information or a password= key.
func HasPassword(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return true
		}
	}
	if u, err := url.Parse(dsn); err == nil && u.Query().Has("password") {
		return true
	}
	for _, kv := range strings.Fields(dsn) {
		if strings.HasPrefix(strings.ToLower(kv), "password=") {
			return true
		}
	}
	return false
}
