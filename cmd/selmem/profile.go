package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// profileFlags are the options of selmem profile.
type profileFlags struct {
	sql, url, recordsPath string
	connection            string
	credential            string
	headers               []string
	budget                int
	asJSON                bool
	workspace, name       string
	connector             string
}

func (a *app) profileCommand() *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile FILE | --sql DSN QUERY | --connection NAME QUERY | --url URL",
		Short: "Profile a data source; print the profile or store it as a workspace schema",
		Long: `Profile a data source in one streaming pass: a CSV/TSV, JSON, JSON Lines,
Parquet or Arrow file (optionally gzip-compressed), the rows of a SQL query
(--sql postgres://... or a SQLite file, or --connection NAME, a connection
configured under profile.connections), or the JSON records of a REST
endpoint (--url, with --records-path, --credential NAME configured under
profile.credentials, or --header 'Name: ENV_VAR' whose value is read from
the environment variable and sent to the URL's host only). Queries are
read-only: one SELECT, WITH … SELECT or VALUES.

Without --workspace the markdown profile (or the JSON profile with --json) is
printed. With --workspace W --name N it is written to
/memories/workspaces/W/schemas/N.md, its join sketches to N.joins.csv, and
schemas/relationships.md is recomputed from all profiles of the workspace,
all in one commit; unchanged files are not rewritten.

selmem profile runs as you: it reads any file you name and reaches the host
of the URL you give even when it is private (a redirect elsewhere still
obeys profile.allowed_hosts). (The MCP tool profile_source reads files only
under profile.data_roots, and names connections and credentials only.)`,
		Args: args(func(cmd *cobra.Command, argv []string) error {
			const one = "give one source: FILE, --sql DSN QUERY, --connection NAME QUERY or --url URL"
			sources := 0
			for _, v := range []string{f.sql, f.connection, f.url} {
				if v != "" {
					sources++
				}
			}
			switch {
			case sources > 1:
				return errors.New(one)
			case (f.sql != "" || f.connection != "") && len(argv) != 1:
				return errors.New("--sql DSN and --connection NAME need the QUERY as the only argument")
			case f.url != "" && len(argv) != 0:
				return errors.New("--url URL takes no FILE argument")
			case sources == 0 && len(argv) != 1:
				return errors.New(one)
			case (f.recordsPath != "" || len(f.headers) > 0 || f.credential != "") && f.url == "":
				return errors.New("--records-path, --credential and --header apply to --url only")
			}
			for _, h := range f.headers {
				name, env, ok := strings.Cut(h, ":")
				name, env = strings.TrimSpace(name), strings.TrimSpace(env)
				if !ok || name == "" || env == "" || strings.ContainsAny(env, " \t") {
					return fmt.Errorf("--header %q: want 'Name: ENV_VAR' (the environment variable that holds the value)", h)
				}
			}
			if f.workspace != "" {
				if f.name == "" {
					return errors.New("--workspace needs --name, the schema's name")
				}
				if f.asJSON {
					return errors.New("--json prints the profile instead of storing it; drop --json or --workspace")
				}
				if err := schemas.CheckWorkspace(f.workspace); err != nil {
					return flagError("--workspace", err)
				}
				if err := schemas.CheckName(f.name); err != nil {
					return flagError("--name", err)
				}
			}
			if f.budget < 0 {
				return errors.New("--budget must be a number of tokens >= 0")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, argv []string) error {
			policy, err := egress.New(a.cfg.Profile.Egress())
			if err != nil {
				return err
			}
			src, connector, err := f.spec(argv).Source(schemas.Access{Local: true, Policy: policy})
			if errors.Is(err, memstore.ErrNotFound) {
				return err
			}
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
	fl.StringVar(&f.connection, "connection", "", "profile the rows of QUERY on the connection NAME configured under profile.connections")
	fl.StringVar(&f.url, "url", "", "profile the JSON records of a REST endpoint (GET)")
	fl.StringVar(&f.credential, "credential", "", "send the credential NAME configured under profile.credentials with --url (to its bound hosts only)")
	fl.StringVar(&f.recordsPath, "records-path", "", "dot-separated path to the records array in the --url response, e.g. data.items")
	fl.StringArrayVar(&f.headers, "header", nil, "request header 'Name: ENV_VAR' for --url; the value is read from ENV_VAR and sent to the URL's host only (repeatable)")
	fl.IntVar(&f.budget, "budget", 0, "token budget of the markdown profile (0: 60 + 32 per column, at most 2700)")
	fl.BoolVar(&f.asJSON, "json", false, "print the full profile as JSON instead of markdown")
	fl.StringVar(&f.workspace, "workspace", "", "store the profile in this workspace (with --name)")
	fl.StringVar(&f.name, "name", "", "the schema's name: schemas/NAME.md with --workspace; the profile's title (default: the source's name)")
	fl.StringVar(&f.connector, "connector", "", "connector reference for the front matter, e.g. tools/warehouse.yaml (default: derived from the source, without credentials)")
	return cmd
}

// flagError names the flag an argument error of package schemas is about.
func flagError(flag string, err error) error {
	return fmt.Errorf("%s: %s", flag, strings.TrimPrefix(err.Error(), "Error: "))
}

// spec describes the source the flags and arguments name. The command line
// runs as the local user, so a file source may be any file they can read
// and a DSN may be given literally (schemas.Access.Local).
func (f *profileFlags) spec(argv []string) schemas.SourceSpec {
	switch {
	case f.sql != "":
		return schemas.SourceSpec{Kind: schemas.KindSQL, DSN: f.sql, Query: argv[0]}
	case f.connection != "":
		return schemas.SourceSpec{Kind: schemas.KindSQL, Connection: f.connection, Query: argv[0]}
	case f.url != "":
		var headers map[string]string
		for _, h := range f.headers {
			name, env, _ := strings.Cut(h, ":")
			if headers == nil {
				headers = map[string]string{}
			}
			headers[strings.TrimSpace(name)] = strings.TrimSpace(env)
		}
		return schemas.SourceSpec{Kind: schemas.KindREST, URL: f.url, RecordsPath: f.recordsPath, Headers: headers, Credential: f.credential}
	}
	return schemas.SourceSpec{Kind: schemas.KindFile, Path: argv[0]}
}

// runProfile profiles src, with a progress bar on stderr when stderr is a
// terminal.
func (a *app) runProfile(ctx context.Context, src profiler.Source, name string) (*profiler.TableProfile, error) {
	opts := &profiler.Options{Name: name, Secrets: gate.HoldsSecret}
	b := a.newBar("profiling", true)
	if b != nil {
		opts.Progress = b.set
	}
	tp, err := profiler.Profile(ctx, src, opts)
	b.finish()
	return tp, err
}

// storeProfile writes the profile as schema f.name of f.workspace, with
// its join sketches and the recomputed relationships, in one commit.
func (a *app) storeProfile(ctx context.Context, s *openedStore, f profileFlags, tp *profiler.TableProfile, connector string) error {
	w := a.cliWrite("profile")
	// The content is what the profiler measured, not something the user
	// typed: the commit says so, as the front matter does.
	w.Source = memstore.SourceTrustedToolResult
	res, err := schemas.Save(ctx, s.Store, f.workspace, f.name, tp, connector, f.budget, w)
	if err != nil {
		return err
	}
	for _, p := range []string{res.Schema, res.Joins, res.Relationships} {
		if slices.Contains(res.Changed, p) {
			fmt.Fprintln(a.stdout, "Wrote: "+p)
		} else {
			fmt.Fprintln(a.stdout, "Unchanged: "+p)
		}
	}
	if res.Commit != "" {
		fmt.Fprintf(a.stdout, "Commit %s (%d relationships)\n", res.Commit[:12], len(res.Related))
	} else {
		fmt.Fprintf(a.stdout, "No change (%d relationships)\n", len(res.Related))
	}
	return nil
}
