package schemas

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
)

// Source kinds, the values of SourceSpec.Kind.
const (
	KindFile = "file"
	KindSQL  = "sql"
	KindREST = "rest"
)

// anyFile, given as the only data root, lets a file source name any file
// the process can read: the command line's mode (Access.Local).
const anyFile = "*"

// SourceSpec describes a data source to profile, as the command line and
// the profile_source tool receive it. A model names a configured
// connection or credential; it never gives a DSN, a host of a database or
// a secret. DSN and Headers are for the command line only (Access.Local).
type SourceSpec struct {
	Kind        string            // KindFile, KindSQL or KindREST
	Path        string            // file: the file (CSV/TSV, JSON, JSON Lines, Parquet, Arrow; optionally .gz); sql: a SQLite database file
	Connection  string            // sql: the name of a configured connection (profile.connections)
	DSN         string            // sql, command line only: a postgres URL or key=value string, or a SQLite file
	Query       string            // sql: the query whose rows to profile
	URL         string            // rest: http or https URL answering JSON
	RecordsPath string            // rest: dot-separated path to the records array, e.g. data.items
	Credential  string            // rest: the name of a configured credential (profile.credentials)
	Headers     map[string]string // rest, command line only: header name -> environment variable holding its value, sent to the URL's host only
	Timeout     time.Duration     // rest: 0 is the profiler's default (30s)
}

// Access is what a source may reach.
type Access struct {
	// Roots are the directories file and SQLite sources may read: the
	// path, cleaned and with symbolic links resolved, must lie inside one
	// of them; relative paths are refused. None allow no file.
	Roots []string
	// Policy is the outbound policy, with the configured credentials and
	// connections; nil is egress.Deny().
	Policy *egress.Policy
	// Local is the command line's mode, where the local user is the
	// principal: any file they can read (relative paths resolved against
	// the working directory), a literal DSN (libpq's environment applies),
	// header values from environment variables, and the URL's own host,
	// which they named, are allowed.
	Local bool
}

// invalid is an argument error the caller can show as it is.
func invalid(msg, hint string) error {
	return &memstore.Error{Kind: memstore.ErrInvalid, Msg: "Error: " + msg, Hint: hint}
}

// policyError turns an error of the outbound policy (a name that is not
// configured, a DSN that cannot be used) into an argument error.
func policyError(err error) error {
	return invalid(strings.TrimSuffix(err.Error(), ".")+".", "")
}

// Source builds the profiler source of s and its connector reference:
// where the data came from, never a credential (no user, password or
// query string; for files the base name only; for a connection its name).
// Errors are *memstore.Error values whose text names the argument at fault
// and what to do; a missing file wraps memstore.ErrNotFound.
func (s SourceSpec) Source(a Access) (src profiler.Source, connector string, err error) {
	roots := a.Roots
	if a.Local {
		roots = []string{anyFile}
	}
	policy := a.Policy
	if policy == nil {
		policy = egress.Deny()
	}
	switch s.Kind {
	case KindFile:
		if s.Connection != "" || s.DSN != "" || s.Query != "" || s.URL != "" || s.RecordsPath != "" || s.Credential != "" || len(s.Headers) > 0 {
			return nil, "", invalid("a file source takes only a path.", "Leave out connection, query, url, records_path and credential.")
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
		return s.sqlSource(a, roots, policy)
	case KindREST:
		return s.restSource(a, policy)
	}
	return nil, "", invalid(fmt.Sprintf("source kind %q is not known.", s.Kind), "Use kind file, sql or rest.")
}

func (s SourceSpec) sqlSource(a Access, roots []string, policy *egress.Policy) (profiler.Source, string, error) {
	if s.URL != "" || s.RecordsPath != "" || s.Credential != "" || len(s.Headers) > 0 {
		return nil, "", invalid("a sql source takes only connection (or path), and query.", "Leave out url, records_path and credential.")
	}
	given := 0
	for _, v := range []string{s.Path, s.Connection, s.DSN} {
		if v != "" {
			given++
		}
	}
	switch {
	case s.DSN != "" && !a.Local:
		return nil, "", invalid("a DSN cannot be given here.", "Name a connection the user configured (profile.connections) as connection.")
	case given > 1:
		return nil, "", invalid("give one of connection or path, not both.", "connection names a configured database; path is a SQLite file inside the data roots.")
	case given == 0:
		return nil, "", invalid("a sql source needs connection, the name of a configured database (or path, a SQLite file).",
			"Ask the user to configure the database under profile.connections (driver postgres with dsn_env, or sqlite with path) and pass its name.")
	case strings.TrimSpace(s.Query) == "":
		return nil, "", invalid("a sql source needs a query.", "Give the SELECT whose rows to profile.")
	}
	switch {
	case s.Path != "":
		p, err := resolveFile(s.Path, roots)
		if err != nil {
			return nil, "", err
		}
		return profiler.SQLSource{Driver: egress.DriverSQLite, DSN: p, Query: s.Query, Name: "query"}, "sql:sqlite:" + filepath.Base(p), nil
	case s.Connection != "":
		c, err := policy.Connection(s.Connection)
		if err != nil {
			return nil, "", policyError(err)
		}
		ref := "sql:connection:" + s.Connection
		if c.Driver == egress.DriverSQLite {
			p, err := resolveFile(c.Path, roots)
			if err != nil {
				return nil, "", err
			}
			return profiler.SQLSource{Driver: egress.DriverSQLite, DSN: p, Query: s.Query, Name: "query"}, ref, nil
		}
		cfg, err := policy.Postgres(s.Connection)
		if err != nil {
			return nil, "", policyError(err)
		}
		return profiler.SQLSource{Driver: egress.DriverPostgres, Postgres: cfg, Query: s.Query, Name: "query"}, ref, nil
	}
	driver, ref := sqlDriver(s.DSN)
	dsn := s.DSN
	if driver == egress.DriverSQLite {
		dsn = sqlitePath(dsn)
		if _, err := resolveFile(dsn, roots); err != nil {
			return nil, "", err
		}
	}
	return profiler.SQLSource{Driver: driver, DSN: dsn, Query: s.Query, Name: "query"}, ref, nil
}

func (s SourceSpec) restSource(a Access, policy *egress.Policy) (profiler.Source, string, error) {
	if s.Path != "" || s.Connection != "" || s.DSN != "" || s.Query != "" {
		return nil, "", invalid("a rest source takes only url, records_path and credential.", "Leave out path, connection and query.")
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", invalid("the url must be an http or https URL.", "Give the full URL of the endpoint, e.g. https://api.example.com/v1/items.")
	}
	if u.User != nil {
		return nil, "", invalid("the url must not hold a user or password.", "Name a credential the user configured (profile.credentials) as credential.")
	}
	if s.Timeout < 0 {
		return nil, "", invalid("the timeout must not be negative.", "Leave it out for 30 seconds.")
	}
	host := u.Hostname()
	if p := u.Port(); p != "" {
		host = net.JoinHostPort(host, p)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if len(s.Headers) > 0 && !a.Local {
		return nil, "", invalid("headers cannot be given here.", "Name a credential the user configured (profile.credentials) as credential.")
	}
	var creds []string
	if s.Credential != "" {
		creds = append(creds, s.Credential)
	}
	if a.Local {
		// The user named this host: it is allowed, and header values
		// from their environment go to it alone.
		if policy, err = policy.WithAllowed(host); err != nil {
			return nil, "", invalid("the url's host is not valid.", "Give the full URL of the endpoint.")
		}
		adhoc := map[string]egress.Credential{}
		for i, h := range slices.Sorted(maps.Keys(s.Headers)) {
			env := s.Headers[h]
			if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " \t:") || !egress.IsEnvName(env) {
				return nil, "", invalid(fmt.Sprintf("header %q: the value must be the name of the environment variable holding it.", h),
					"Map each header name to an environment variable name, e.g. {\"Authorization\": \"API_TOKEN\"}.")
			}
			name := fmt.Sprintf("header-%d", i+1)
			adhoc[name] = egress.Credential{Env: env, Hosts: []string{host}, Header: h, AllowHTTP: true}
			creds = append(creds, name)
		}
		if len(adhoc) > 0 {
			if policy, err = policy.WithCredentials(adhoc); err != nil {
				return nil, "", invalid("a header is not valid: "+err.Error()+".", "Give headers as 'Name: ENV_VAR'.")
			}
		}
	}
	if s.Credential != "" {
		// Fail now, before any request, for a name that is not configured.
		if _, err := policy.HTTPClient(&egress.HTTPOptions{Credentials: []string{s.Credential}}); err != nil {
			return nil, "", policyError(err)
		}
	}
	ref := "rest:" + (&url.URL{Scheme: u.Scheme, Host: host, Path: u.Path}).String()
	return profiler.RESTSource{URL: s.URL, RecordsPath: s.RecordsPath, Policy: policy, Credentials: creds, Timeout: s.Timeout}, ref, nil
}

// resolveFile returns the real path of the file p after checking that it
// lies inside one of roots (see SourceSpec.Source). A path outside every
// root is refused before its existence is checked, so the answer says
// nothing about files outside the roots.
func resolveFile(p string, roots []string) (string, error) {
	anyFile := len(roots) == 1 && roots[0] == anyFile
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
		return egress.DriverPostgres, "sql:postgres"
	}
	return egress.DriverSQLite, "sql:sqlite:" + filepath.Base(sqlitePath(dsn))
}

// sqlitePath is the file of a SQLite DSN (sqlite:, file: and ?params stripped).
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

// CheckDir checks that the directory dir, with symbolic links resolved,
// lies inside a's data roots, as a file source's path must: a caller that
// lists a directory (a connector's glob) checks it first.
func (a Access) CheckDir(dir string) error {
	if a.Local {
		return nil
	}
	switch {
	case len(a.Roots) == 0:
		return invalid("file sources are disabled: no data roots are configured.",
			"Ask the user to set profile.data_roots (env SELMEM_PROFILE_DATA_ROOTS) to the directories selmem may read data from.")
	case !filepath.IsAbs(dir) || slices.Contains(strings.Split(filepath.ToSlash(dir), "/"), ".."):
		return invalid(fmt.Sprintf("the directory %s is not an absolute path without .. elements.", dir), "Give an absolute path under "+strings.Join(a.Roots, ", ")+".")
	}
	var real []string
	for _, r := range a.Roots {
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			real = append(real, rr)
		}
	}
	resolved, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		if !inside(filepath.Clean(dir), a.Roots) && !inside(filepath.Clean(dir), real) {
			return invalid(fmt.Sprintf("%s is outside the data roots.", dir), "Only files under "+strings.Join(a.Roots, ", ")+" can be read.")
		}
		return &memstore.Error{Kind: memstore.ErrNotFound, Msg: fmt.Sprintf("Error: the directory %s does not exist.", dir), Hint: "Check the path."}
	}
	if !inside(resolved, real) {
		return invalid(fmt.Sprintf("%s is outside the data roots.", dir), "Only files under "+strings.Join(a.Roots, ", ")+" can be read.")
	}
	return nil
}
