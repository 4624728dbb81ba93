package egress

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Connection returns the configured connection name.
func (p *Policy) Connection(name string) (Connection, error) {
	c, ok := p.cfg.Connections[name]
	if !ok {
		return Connection{}, notConfigured("connection", name, p.cfg.key("connections"), p.cfg.Connections)
	}
	return c, nil
}

// Postgres returns the pgx configuration of the postgres connection name:
// its DSN, read from its dsn_env, alone (see PostgresConfig). A configured
// connection's host is trusted: the operator named it, so the address
// check does not apply to it.
func (p *Policy) Postgres(name string) (*pgx.ConnConfig, error) {
	c, err := p.Connection(name)
	if err != nil {
		return nil, err
	}
	key := p.cfg.key("connections." + name)
	if c.Driver != DriverPostgres {
		return nil, &NameError{Kind: "connection", Name: name, Msg: "is not a postgres connection", Key: key}
	}
	dsn, ok := p.cfg.lookupEnv(c.DSNEnv)
	if !ok || dsn == "" {
		return nil, &NameError{Kind: "connection", Name: name, Msg: "has no DSN: its environment variable " + c.DSNEnv + " is not set", Key: key + ".dsn_env"}
	}
	cfg, err := PostgresConfig(dsn)
	if err != nil {
		return nil, &NameError{Kind: "connection", Name: name, Msg: "has an unusable DSN (" + err.Error() + ")", Key: key + ".dsn_env"}
	}
	return cfg, nil
}

// forbiddenKeys make pgconn read files named by the connection string.
var forbiddenKeys = map[string]bool{"service": true, "servicefile": true, "passfile": true}

// neutralKeys are settings pgconn would otherwise take from PG* variables
// or files under the home directory; a DSN that does not set them gets an
// empty value, which means none.
var neutralKeys = []string{"sslcert", "sslkey", "sslrootcert", "sslpassword"}

// PostgresConfig parses dsn (a postgres:// URL or key=value string) into a
// configuration that uses dsn alone: PGPASSWORD and the other PG*
// credential variables, ~/.pgpass, service files and the client
// certificates under ~/.postgresql are not used, and the service,
// servicefile and passfile keys are refused. Errors never quote the DSN.
func PostgresConfig(dsn string) (*pgx.ConnConfig, error) {
	keys, err := dsnKeys(dsn)
	if err != nil {
		return nil, err
	}
	for k := range keys {
		if forbiddenKeys[k] {
			return nil, fmt.Errorf("the key %s is not supported: give every setting in the DSN itself", k)
		}
	}
	full := dsn
	var add []string
	for _, k := range neutralKeys {
		if !keys[k] {
			add = append(add, k)
		}
	}
	if isURL(dsn) {
		u, _ := url.Parse(dsn) // parsed by dsnKeys
		q := u.Query()
		for _, k := range add {
			q.Set(k, "")
		}
		u.RawQuery = q.Encode()
		full = u.String()
	} else {
		for _, k := range add {
			full = k + "='' " + full
		}
	}
	cfg, err := pgx.ParseConfig(full)
	if err != nil {
		return nil, errors.New("it is not a valid postgres connection string")
	}
	if !keys["password"] {
		// Whatever PGPASSWORD or a password file supplied.
		cfg.Password = ""
	}
	return cfg, nil
}

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// dsnKeys returns the keys a connection string sets.
func dsnKeys(dsn string) (map[string]bool, error) {
	keys := map[string]bool{}
	if isURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, errors.New("it is not a valid postgres URL")
		}
		if u.User != nil {
			keys["user"] = true
			if _, ok := u.User.Password(); ok {
				keys["password"] = true
			}
		}
		for k := range u.Query() {
			keys[k] = true
		}
		return keys, nil
	}
	s := dsn
	for {
		s = strings.TrimLeft(s, " \t\n\r\v\f")
		if s == "" {
			return keys, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, errors.New("it is not a valid key=value connection string")
		}
		keys[strings.TrimSpace(s[:eq])] = true
		s = strings.TrimLeft(s[eq+1:], " \t\n\r\v\f")
		if strings.HasPrefix(s, "'") {
			i := 1
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return nil, errors.New("it has an unterminated quoted value")
			}
			s = s[i+1:]
			continue
		}
		i := 0
		for ; i < len(s) && !strings.ContainsRune(" \t\n\r\v\f", rune(s[i])); i++ {
			if s[i] == '\\' {
				i++
			}
		}
		s = s[min(i, len(s)):]
	}
}

// OpenPostgres opens a pool of one connection configured by cfg, which
// refuses a row of more than MaxValueBytes.
func OpenPostgres(cfg *pgx.ConnConfig) *sql.DB {
	c := *cfg
	c.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		f := pgproto3.NewFrontend(r, w)
		f.SetMaxBodyLen(MaxValueBytes)
		return f
	}
	db := stdlib.OpenDB(c)
	db.SetMaxOpenConns(1)
	return db
}

// sqliteDenyFunctions are SQL functions no query may call.
var sqliteDenyFunctions = map[string]bool{"load_extension": true, "fts3_tokenizer": true, "readfile": true, "writefile": true, "edit": true}

// sqliteReadPragmas are the pragmas a query may read, as pragma_*
// table-valued functions: true for those whose argument names a table or
// index, false for those that take none (an argument would set them).
var sqliteReadPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "collation_list": false, "function_list": false,
	"module_list": false, "pragma_list": false, "compile_options": false, "user_version": false,
	"application_id": false, "encoding": false, "page_size": false, "page_count": false, "freelist_count": false,
	"schema_version": false, "query_only": false,
}

// sqliteAuthorize allows reading and nothing else: no write, no schema
// change, no ATTACH or DETACH, no transaction control, no pragma that sets
// anything, no extension loading.
func sqliteAuthorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if sqliteDenyFunctions[strings.ToLower(arg2)] {
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		if takesName, ok := sqliteReadPragmas[strings.ToLower(arg1)]; ok && (arg2 == "" || takesName) {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// sqliteConnector opens read-only connections to one database through a
// driver of its own, so its hook reaches no other SQLite connection of the
// process (the index's, for one).
type sqliteConnector struct {
	d    *sqlite.Driver
	name string
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.name) }
func (c sqliteConnector) Driver() driver.Driver                        { return c.d }

// OpenSQLite opens the database file path read-only and immutable, with
// PRAGMA query_only on, ATTACH disabled and an authorizer that allows
// reading only (see Query). The caller checks path against its roots.
func OpenSQLite(path string) *sql.DB {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
		if _, err := conn.ExecContext(context.Background(), "PRAGMA query_only = ON", nil); err != nil {
			return err
		}
		reg, ok := conn.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver has no authorizer")
		}
		return reg.RegisterAuthorizer(sqliteAuthorize)
	})
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&immutable=1"}
	// file:/abs/path: SQLite wants an empty or "localhost" authority.
	name := "file://" + u.EscapedPath() + "?" + u.RawQuery
	db := sql.OpenDB(sqliteConnector{d: d, name: name})
	db.SetMaxOpenConns(1)
	return db
}

// Dialects of CheckQuery.
const (
	DialectPostgres = DriverPostgres
	DialectSQLite   = DriverSQLite
)

// QueryError is a query the policy refuses.
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return "the query " + e.Msg }

// CheckQuery accepts exactly one statement that starts with SELECT, WITH or
// VALUES (after comments, white space and opening parentheses); a
// statement ending in a semicolon is one. Strings, quoted identifiers and
// comments are skipped as dialect lexes them.
func CheckQuery(query, dialect string) error {
	first := ""
	statements := 0
	inStatement := false
	s := query
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(s[i:], "--"):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
		case strings.HasPrefix(s[i:], "/*"):
			j, ok := blockComment(s[i:], dialect == DialectPostgres)
			if !ok {
				return &QueryError{Msg: "has an unterminated comment"}
			}
			i += j
		case c == ';':
			inStatement = false
			i++
		default:
			if !inStatement {
				inStatement = true
				statements++
			}
			if statements > 1 {
				return &QueryError{Msg: "holds more than one statement; give a single SELECT"}
			}
			n, word, err := token(s[i:], dialect)
			if err != nil {
				return err
			}
			if first == "" && word != "" {
				first = strings.ToUpper(word)
			}
			i += n
		}
	}
	switch first {
	case "SELECT", "WITH", "VALUES":
		return nil
	case "":
		return &QueryError{Msg: "is empty; give a SELECT"}
	}
	return &QueryError{Msg: "must be a SELECT (or WITH … SELECT); " + first + " is not allowed, the source is read only"}
}

// blockComment returns the length of the comment starting s.
func blockComment(s string, nested bool) (int, bool) {
	depth := 0
	for i := 0; i+1 < len(s); {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			if depth == 0 || nested {
				depth++
			}
			i += 2
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return 0, false
}

// token returns the length of the token starting s, and the word when it
// is a bare word.
func token(s, dialect string) (int, string, error) {
	c := s[0]
	quoted := func(q byte, backslash bool) (int, string, error) {
		for i := 1; i < len(s); i++ {
			if backslash && s[i] == '\\' {
				i++
				continue
			}
			if s[i] == q {
				if i+1 < len(s) && s[i+1] == q {
					i++
					continue
				}
				return i + 1, "", nil
			}
		}
		return 0, "", &QueryError{Msg: "has an unterminated string or quoted name"}
	}
	switch {
	case c == '\'' || c == '"':
		return quoted(c, false)
	case dialect == DialectSQLite && c == '`':
		return quoted('`', false)
	case dialect == DialectSQLite && c == '[':
		if j := strings.IndexByte(s, ']'); j >= 0 {
			return j + 1, "", nil
		}
		return 0, "", &QueryError{Msg: "has an unterminated [name]"}
	case dialect == DialectPostgres && (c == 'e' || c == 'E') && len(s) > 1 && s[1] == '\'':
		n, _, err := quoted('\'', true)
		return n, "", err
	case dialect == DialectPostgres && c == '$':
		// $tag$ … $tag$, or a $1 parameter.
		j := 1
		for j < len(s) && (s[j] == '_' || isAlnum(s[j])) {
			j++
		}
		if j < len(s) && s[j] == '$' && (j == 1 || !isDigit(s[1])) {
			tag := s[:j+1]
			if k := strings.Index(s[j+1:], tag); k >= 0 {
				return j + 1 + k + len(tag), "", nil
			}
			return 0, "", &QueryError{Msg: "has an unterminated $-quoted string"}
		}
		return j, "", nil
	case c == '_' || isAlnum(c) || c >= 0x80:
		j := 1
		for j < len(s) && (s[j] == '_' || s[j] == '$' || isAlnum(s[j]) || s[j] >= 0x80) {
			j++
		}
		if isDigit(c) {
			return j, "", nil
		}
		return j, s[:j], nil
	}
	return 1, "", nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// Rows are the rows of a query run by Query; Close ends the transaction
// too.
type Rows struct {
	*sql.Rows
	tx     *sql.Tx
	conn   *sql.Conn
	cancel context.CancelFunc // ends a SQLite query's time bound
}

// Close closes the rows and rolls the read-only transaction back, or
// hands the connection back.
func (r *Rows) Close() error {
	err := r.Rows.Close()
	if r.tx != nil {
		_ = r.tx.Rollback()
	}
	if r.conn != nil {
		_ = r.conn.Close()
	}
	if r.cancel != nil {
		r.cancel()
	}
	return err
}

// MaxValueBytes bounds what one value of a query's result may make the
// process hold: any string or BLOB a SQLite query makes or reads
// (SQLITE_LIMIT_LENGTH, a billion by default), any row a Postgres server
// sends (pgx reads a row whole). Without it group_concat over a
// recursive CTE took the process to 1.7 GB in 5 s, and repeat() in
// Postgres sends up to a gigabyte.
const MaxValueBytes = 16 << 20

// Query runs a query CheckQuery accepts on db. Postgres runs it in a READ
// ONLY transaction with statement_timeout set to timeout (if > 0); SQLite
// on the read-only connection OpenSQLite makes, its values bounded by
// MaxValueBytes, and interrupted once timeout (if > 0) has passed since
// the query started, its rows read or not.
func Query(ctx context.Context, db *sql.DB, dialect, query string, timeout time.Duration) (*Rows, error) {
	if err := CheckQuery(query, dialect); err != nil {
		return nil, err
	}
	if dialect != DialectPostgres {
		cancel := context.CancelFunc(func() {})
		if timeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, timeout)
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			cancel()
			return nil, err
		}
		if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, MaxValueBytes); err != nil {
			_ = conn.Close()
			cancel()
			return nil, err
		}
		rows, err := conn.QueryContext(ctx, query)
		if err != nil {
			_ = conn.Close()
			cancel()
			return nil, err
		}
		return &Rows{Rows: rows, conn: conn, cancel: cancel}, nil
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", timeout.Milliseconds())); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
	}
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return &Rows{Rows: rows, tx: tx}, nil
}
