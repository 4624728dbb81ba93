package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
)

// Files a stored profile consists of, under workspaces/W/schemas/.
const (
	schemaExt        = ".md"        // the rendered profile with front matter
	joinsExt         = ".joins.csv" // the join sketches Relate reads back
	relationshipsMD  = "relationships.md"
	relationshipsSrc = "relationships"
)

// profileFlags are the options of selmem profile.
type profileFlags struct {
	sql, url, recordsPath string
	headers               []string
	budget                int
	asJSON                bool
	workspace, name       string
	connector             string
}

func (a *app) profileCommand() *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile FILE | --sql DSN QUERY | --url URL",
		Short: "Profile a data source; print the profile or store it as a workspace schema",
		Long: `Profile a data source in one streaming pass: a CSV/TSV, JSON, JSON Lines,
Parquet or Arrow file (optionally gzip-compressed), the rows of a SQL query
(--sql postgres://... or a SQLite file), or the JSON records of a REST
endpoint (--url, with --records-path and --header 'Name: ENV_VAR' whose
value is read from the environment variable).

Without --workspace the markdown profile (or the JSON profile with --json) is
printed. With --workspace W --name N it is written to
/memories/workspaces/W/schemas/N.md, its join sketches to N.joins.csv, and
schemas/relationships.md is recomputed from all profiles of the workspace.`,
		Args: args(func(cmd *cobra.Command, argv []string) error {
			switch {
			case f.sql != "" && f.url != "":
				return errors.New("give one source: FILE, --sql DSN QUERY or --url URL")
			case f.sql != "" && len(argv) != 1:
				return errors.New("--sql DSN needs the QUERY as the only argument")
			case f.url != "" && len(argv) != 0:
				return errors.New("--url URL takes no FILE argument")
			case f.sql == "" && f.url == "" && len(argv) != 1:
				return errors.New("give one source: FILE, --sql DSN QUERY or --url URL")
			case (f.recordsPath != "" || len(f.headers) > 0) && f.url == "":
				return errors.New("--records-path and --header apply to --url only")
			}
			if f.workspace != "" {
				if f.name == "" {
					return errors.New("--workspace needs --name, the schema's name")
				}
				if f.asJSON {
					return errors.New("--json prints the profile instead of storing it; drop --json or --workspace")
				}
				if err := checkElement("--workspace", f.workspace); err != nil {
					return err
				}
				if err := checkElement("--name", f.name); err != nil {
					return err
				}
				if f.name == relationshipsSrc || strings.HasSuffix(f.name, ".joins") {
					return fmt.Errorf("--name %q is reserved; choose another name", f.name)
				}
			}
			if f.budget < 0 {
				return errors.New("--budget must be a number of tokens >= 0")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, argv []string) error {
			src, connector, err := f.source(argv)
			if err != nil {
				return usageError{err}
			}
			if f.connector != "" {
				connector = f.connector
			}
			tp, err := a.runProfile(cmd.Context(), src, f.name)
			if err != nil {
				return err
			}
			if f.workspace == "" {
				if f.asJSON {
					js, err := json.MarshalIndent(tp, "", "  ")
					if err != nil {
						return err
					}
					fmt.Fprintf(a.stdout, "%s\n", js)
					return nil
				}
				fmt.Fprint(a.stdout, tp.Markdown(f.budget))
				return nil
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				return a.storeProfile(cmd.Context(), s, f, tp, connector)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.sql, "sql", "", "profile the rows of QUERY on the database DSN (postgres://... , or a SQLite file)")
	fl.StringVar(&f.url, "url", "", "profile the JSON records of a REST endpoint (GET)")
	fl.StringVar(&f.recordsPath, "records-path", "", "dot-separated path to the records array in the --url response, e.g. data.items")
	fl.StringArrayVar(&f.headers, "header", nil, "request header 'Name: ENV_VAR' for --url; the value is read from ENV_VAR (repeatable)")
	fl.IntVar(&f.budget, "budget", 0, "token budget of the markdown profile (0: 60 + 32 per column, at most 2700)")
	fl.BoolVar(&f.asJSON, "json", false, "print the full profile as JSON instead of markdown")
	fl.StringVar(&f.workspace, "workspace", "", "store the profile in this workspace (with --name)")
	fl.StringVar(&f.name, "name", "", "the schema's name: schemas/NAME.md with --workspace; the profile's title (default: the source's name)")
	fl.StringVar(&f.connector, "connector", "", "connector reference for the front matter, e.g. tools/warehouse.yaml (default: derived from the source, without credentials)")
	return cmd
}

// checkElement refuses a workspace or schema name that is not one plain
// path element (the store's gate checks the rest).
func checkElement(flag, v string) error {
	if v == "." || v == ".." || strings.ContainsAny(v, `/\`) || strings.TrimSpace(v) != v {
		return fmt.Errorf("%s %q must be a single name, without slashes", flag, v)
	}
	return nil
}

// source builds the profiler source and its connector reference: where
// the data came from, never a credential (no user, password or query
// string; for files the base name only).
func (f *profileFlags) source(argv []string) (profiler.Source, string, error) {
	switch {
	case f.sql != "":
		driver, ref := sqlDriver(f.sql)
		return profiler.SQLSource{Driver: driver, DSN: f.sql, Query: argv[0], Name: "query"}, ref, nil
	case f.url != "":
		u, err := url.Parse(f.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "", fmt.Errorf("--url must be an http or https URL")
		}
		headers := map[string]string{}
		for _, h := range f.headers {
			name, env, ok := strings.Cut(h, ":")
			name, env = strings.TrimSpace(name), strings.TrimSpace(env)
			if !ok || name == "" || env == "" || strings.ContainsAny(env, " \t") {
				return nil, "", fmt.Errorf("--header %q: want 'Name: ENV_VAR' (the environment variable that holds the value)", h)
			}
			headers[name] = env
		}
		ref := "rest:" + (&url.URL{Scheme: u.Scheme, Host: u.Hostname(), Path: u.Path}).String()
		if p := u.Port(); p != "" {
			ref = "rest:" + (&url.URL{Scheme: u.Scheme, Host: u.Hostname() + ":" + p, Path: u.Path}).String()
		}
		return profiler.RESTSource{URL: f.url, RecordsPath: f.recordsPath, Headers: headers}, ref, nil
	}
	return profiler.FileSource{Path: argv[0]}, "file:" + filepath.Base(argv[0]), nil
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
	p := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return "sqlite", "sql:sqlite:" + filepath.Base(p)
}

// runProfile profiles src, with a progress bar on stderr when stderr is a
// terminal.
func (a *app) runProfile(ctx context.Context, src profiler.Source, name string) (*profiler.TableProfile, error) {
	opts := &profiler.Options{Name: name}
	var bar *progressbar.ProgressBar
	if f, ok := a.stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		opts.Progress = func(read, total int64) {
			if bar == nil {
				max := total
				if max <= 0 {
					max = -1 // unknown size: a spinner
				}
				bar = progressbar.NewOptions64(max, progressbar.OptionSetWriter(a.stderr),
					progressbar.OptionSetDescription("profiling"), progressbar.OptionShowBytes(true),
					progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())
			}
			_ = bar.Set64(read)
		}
	}
	tp, err := profiler.Profile(ctx, src, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	return tp, err
}

// storeProfile writes schemas/N.md and schemas/N.joins.csv, then
// recomputes schemas/relationships.md.
func (a *app) storeProfile(ctx context.Context, s *openedStore, f profileFlags, tp *profiler.TableProfile, connector string) error {
	w := a.cliWrite("profile")
	// The content is what the profiler measured, not something the user
	// typed: the commit says so, as the front matter does.
	w.Source = memstore.SourceTrustedToolResult
	dir := memstore.Root + "/workspaces/" + f.workspace + "/schemas"
	limit := int(a.cfg.Limits.MaxFileBytes)
	files := []struct{ path, text string }{
		{dir + "/" + f.name + schemaExt, tp.SchemaFile(connector, f.budget)},
		{dir + "/" + f.name + joinsExt, string(tp.JoinSketchesCSV(limit))},
	}
	for _, file := range files {
		msg, err := putFile(ctx, s.Store, file.path, file.text, w)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, msg)
	}
	rels, msg, err := relateWorkspace(ctx, s.Store, dir, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%s (%d relationships)\n", msg, len(rels))
	return nil
}

// relateWorkspace recomputes schemas/relationships.md from the join
// sketches of every schema in dir that still has its markdown file.
func relateWorkspace(ctx context.Context, s *memstore.Store, dir string, w *memstore.WriteOptions) ([]profiler.Relationship, string, error) {
	entries, err := s.List(dir)
	if err != nil {
		return nil, "", err
	}
	has := map[string]bool{}
	for _, e := range entries {
		has[e.Name] = !e.IsDir
	}
	profiles := map[string]*profiler.TableProfile{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name, joinsExt)
		if !ok || e.IsDir || !has[name+schemaExt] {
			continue
		}
		data, _, err := s.Read(e.Path)
		if err != nil {
			return nil, "", err
		}
		tp, err := profiler.ParseJoinSketchesCSV(name, data)
		if err != nil {
			return nil, "", fmt.Errorf("%w; profile %s again to rewrite it", err, name)
		}
		profiles[name] = tp
	}
	rels := profiler.Relate(profiles)
	text := "---\ntype: relationships\nsource: trusted_tool_result\n---\n" + profiler.RenderRelationships(rels)
	msg, err := putFile(ctx, s, path.Join(dir, relationshipsMD), text, w)
	return rels, msg, err
}

// putFile creates the file at p, or replaces its whole content in one
// commit. The store has no overwrite, so the replacement is a str_replace
// of the entire current text, pinned to its blob hash so a concurrent
// change makes it fail instead of being lost. An unchanged file is left
// alone (no empty commit).
func putFile(ctx context.Context, s *memstore.Store, p, text string, w *memstore.WriteOptions) (string, error) {
	cur, sha, err := s.Read(p)
	switch {
	case errors.Is(err, memstore.ErrNotFound):
		res, err := s.Create(ctx, p, text, w)
		return res.Message, err
	case err != nil:
		return "", err
	case string(cur) == text:
		return "Unchanged: " + p, nil
	case len(cur) == 0:
		// str_replace needs a non-empty old text
		if _, err := s.Delete(ctx, p, w); err != nil {
			return "", err
		}
		res, err := s.Create(ctx, p, text, w)
		return res.Message, err
	}
	pinned := *w
	pinned.ExpectedSHA = sha
	if _, err := s.StrReplace(ctx, p, string(cur), text, &pinned); err != nil {
		return "", err
	}
	return "File updated at: " + p, nil
}
