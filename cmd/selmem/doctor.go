package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/pgindex"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// doctorTimeout bounds each network check of selmem doctor.
const doctorTimeout = 10 * time.Second

// finding is one line of selmem doctor: a check, what it found and, for a
// problem, what to do.
type finding struct {
	check  string
	status string // "ok", "warn" or "FAIL"
	detail string
	fix    string
}

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, the repository, the indexes, Postgres and the embedder; say what to fix",
		Long: `Check what selmem depends on and print one line per check, with what to do
for each problem:

  configuration  selmem.yaml, SELMEM_* variables and flags (as selmem config)
  repository     the memory's git repository: HEAD, refs/heads/main, every
                 commit of its history and every object of its tree (fsck)
  index          each index backend (the embedded index, Postgres) mirrors
                 HEAD with the configured embedder
  postgres       with index.backend postgres: reachable, and pgvector's version
  schema         with index.backend postgres: the memory's schema, the other
                 memories sharing the database, tables left in public by
                 versions before per-memory schemas
  embedder       with embedder.kind openai: one small embedding request

doctor only looks: it changes nothing in the memory and does not catch the
indexes up (any other command does). The exit code is 1 when a check failed.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := a.doctor(cmd.Context())
			failed := 0
			for _, f := range fs {
				fmt.Fprintf(a.stdout, "%-5s %-18s %s\n", f.status, f.check, f.detail)
				if f.fix != "" {
					fmt.Fprintf(a.stdout, "%-5s %-18s fix: %s\n", "", "", f.fix)
				}
				if f.status == "FAIL" {
					failed++
				}
			}
			if failed > 0 {
				return exitError{code: exitFailed, err: fmt.Errorf("selmem doctor: %d check(s) failed", failed)}
			}
			fmt.Fprintln(a.stdout, "All checks passed.")
			return nil
		},
	}
}

// doctor runs every check that applies to the configuration.
func (a *app) doctor(ctx context.Context) []finding {
	if a.cfgErr != nil {
		return []finding{{check: "configuration", status: "FAIL", detail: a.cfgErr.Error(),
			fix: "correct the setting named above in selmem.yaml (in SELMEM_HOME) or the SELMEM_* environment; the other checks need a valid configuration"}}
	}
	out := []finding{{check: "configuration", status: "ok", detail: fmt.Sprintf("home %s, index %s, embedder %s", a.cfg.Home, a.cfg.Index.Backend, a.cfg.Embedder.Kind)}}

	repo, err := memstore.CheckRepository(ctx, a.cfg.Home)
	var me *memstore.Error
	switch {
	case errors.As(err, &me):
		return append(out, finding{check: "repository", status: "FAIL", detail: strings.TrimPrefix(me.Msg, "Error: "), fix: me.Hint})
	case err != nil:
		return append(out, finding{check: "repository", status: "FAIL", detail: err.Error()})
	case len(repo.Problems) > 0:
		for _, p := range repo.Problems {
			out = append(out, finding{check: "repository", status: "FAIL", detail: p,
				fix: "copy SELMEM_HOME aside first; then run `git -C " + filepath.Join(a.cfg.Home, "memory") + " fsck` to see the damage, and restore the memory directory from a backup or a clone"})
		}
	default:
		out = append(out, finding{check: "repository", status: "ok",
			detail: fmt.Sprintf("HEAD %s, %d commits and %d objects read", repo.Head[:12], repo.Commits, repo.Objects)})
	}
	switch {
	case len(repo.Unrepaired) > 0:
		out = append(out, finding{check: "repository", status: "FAIL",
			detail: fmt.Sprintf("the working files of %s differ from HEAD: their repair after an interrupted write has not succeeded (a full disk?); reads come from HEAD and writes are refused until it does",
				strings.Join(repo.Unrepaired, ", ")),
			fix: "free space on the disk holding SELMEM_HOME, then run any selmem command (e.g. selmem view /memories)"})
	case repo.Pending:
		out = append(out, finding{check: "repository", status: "warn", detail: "an interrupted write left its journal (.git/selmem-pending)",
			fix: "run any selmem command (e.g. selmem view /memories): opening the memory repairs the working files"})
	}

	emb, _, err := a.embedder()
	if err != nil {
		return append(out, finding{check: "embedder", status: "FAIL", detail: err.Error(), fix: "correct the embedder.* settings"})
	}
	out = append(out, a.checkEmbedder(ctx, emb))
	if repo.Head == "" {
		return out // no HEAD to compare the indexes with
	}
	// The embedded index: the index itself, or Postgres' local fallback.
	out = append(out, a.checkSQLiteIndex(ctx, emb, repo.Head))
	if a.cfg.Index.Backend == "postgres" {
		out = append(out, a.checkPostgres(ctx, emb, repo)...)
	}
	return out
}

// staleFix is what to do about an index that does not mirror HEAD.
const staleFix = "run `selmem reindex` (any selmem command also catches the index up when it opens the memory)"

// indexFindings turns CheckIndex's result into findings.
func indexFindings(check string, h memstore.IndexHealth, err error) []finding {
	if err != nil {
		return []finding{{check: check, status: "FAIL", detail: err.Error(), fix: "run `selmem reindex` to rebuild it from git"}}
	}
	if len(h.Problems) == 0 {
		return []finding{{check: check, status: "ok", detail: fmt.Sprintf("mirrors HEAD %s (%s, dimension %d)", h.State.Commit[:12], h.State.Embedder, h.State.Dim)}}
	}
	var out []finding
	for _, p := range h.Problems {
		out = append(out, finding{check: check, status: "FAIL", detail: p, fix: staleFix})
	}
	return out
}

func (a *app) checkSQLiteIndex(ctx context.Context, emb memstore.Embedder, head string) finding {
	const check = "index (embedded)"
	path := filepath.Join(a.cfg.Home, "index", "index.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return finding{check: check, status: "FAIL", detail: "there is no embedded index at " + path, fix: staleFix}
	}
	h, err := a.inspectSQLiteIndex(ctx, emb, head)
	var oe *openIndexError
	if errors.As(err, &oe) {
		return finding{check: check, status: "FAIL", detail: oe.Err.Error(), fix: "remove " + path + " and run `selmem reindex`: the index is derived from git"}
	}
	return joinFindings(indexFindings(check, h, err))
}

// openIndexError is an index that could not be opened for inspection.
type openIndexError struct{ Err error }

func (e *openIndexError) Error() string { return e.Err.Error() }
func (e *openIndexError) Unwrap() error { return e.Err }

// inspectSQLiteIndex reports what the embedded index mirrors compared with
// head, without changing it.
func (a *app) inspectSQLiteIndex(ctx context.Context, emb memstore.Embedder, head string) (memstore.IndexHealth, error) {
	path := filepath.Join(a.cfg.Home, "index", "index.db")
	// Opened read-only and as is: openSQLiteIndex would replace a corrupt
	// index, and Open upgrades one an older version wrote.
	idx, err := sqliteindex.Inspect(ctx, path)
	if err != nil {
		return memstore.IndexHealth{Behind: -1}, &openIndexError{Err: err}
	}
	defer idx.Close()
	return memstore.CheckIndex(ctx, a.cfg.Home, idx, emb, head)
}

// joinFindings folds several findings of one check into one line.
func joinFindings(fs []finding) finding {
	f := fs[0]
	for _, g := range fs[1:] {
		f.detail += "; " + g.detail
	}
	return f
}

func (a *app) checkPostgres(ctx context.Context, emb memstore.Embedder, repo memstore.RepoHealth) []finding {
	const check = "postgres"
	pool, err := a.openPool(ctx)
	if err != nil {
		return []finding{{check: check, status: "FAIL", detail: err.Error(), fix: "set index.dsn, or index.dsn_env and that variable"}}
	}
	defer pool.Close()
	pctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	info, err := pgindex.Probe(pctx, pool)
	if err != nil {
		return []finding{{check: check, status: "FAIL", detail: "cannot reach Postgres: " + oneLine(err.Error()),
			fix: "start Postgres, or correct index.dsn / the variable index.dsn_env names; meanwhile searches fall back to the embedded index"}}
	}
	if info.Vector == "" {
		fix := "install pgvector for PostgreSQL " + info.Version + " (on Debian/Ubuntu: scripts/install-pgvector.sh, or the postgresql-NN-pgvector package), then CREATE EXTENSION vector"
		if info.Available != "" {
			fix = "run CREATE EXTENSION vector; in this database as a superuser (pgvector " + info.Available + " is available)"
		}
		return []finding{{check: check, status: "FAIL", detail: "PostgreSQL " + info.Version + " is reachable but the pgvector extension is not installed in this database", fix: fix}}
	}
	out := []finding{{check: check, status: "ok", detail: "PostgreSQL " + info.Version + ", pgvector " + info.Vector}}
	rank := memstore.DefaultRanking()
	idx := pgindex.Open(pool, &pgindex.Options{Dim: emb.Dim(), EfSearch: a.cfg.Index.EfSearch,
		BuildMemory: a.cfg.Index.BuildMemory, Schema: a.cfg.Index.Schema, Ranking: &rank})
	defer idx.Close()
	if err := idx.BindMemory(repo.ID); err != nil {
		return append(out, finding{check: "schema (postgres)", status: "FAIL", detail: oneLine(err.Error()),
			fix: "set index.schema to a name of your choice (lower-case letters, digits and _)"})
	}
	out = append(out, checkSchema(pctx, pool, idx, repo.ID)...)
	h, err := memstore.CheckIndex(pctx, a.cfg.Home, idx, emb, repo.Head)
	return append(out, joinFindings(indexFindings("index (postgres)", h, err)))
}

// checkSchema reports the memory's Postgres schema, the other memories
// sharing the database, and tables older versions left in public.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, idx *pgindex.Lazy, id string) []finding {
	const check = "schema (postgres)"
	schema, err := idx.Schema()
	if err != nil {
		return []finding{{check: check, status: "FAIL", detail: oneLine(err.Error()), fix: "set index.schema"}}
	}
	ns, err := pgindex.Inspect(ctx, pool, schema)
	if err != nil {
		return []finding{{check: check, status: "FAIL", detail: "cannot list the database's schemas: " + oneLine(err.Error())}}
	}
	detail := fmt.Sprintf("schema %s for memory %s", schema, id)
	if !ns.Exists {
		detail += " (not created yet: the next selmem command builds the index there)"
	}
	if n := len(ns.Others); n == 1 {
		detail += "; 1 other memory shares the database (" + ns.Others[0] + ")"
	} else if n > 1 {
		detail += fmt.Sprintf("; %d other memories share the database (%s)", n, strings.Join(ns.Others, ", "))
	}
	out := []finding{{check: check, status: "ok", detail: detail}}
	if len(ns.Legacy) > 0 {
		drop := make([]string, len(ns.Legacy))
		for i, t := range ns.Legacy {
			drop[i] = "public." + t
		}
		out = append(out, finding{check: check, status: "warn",
			detail: "tables of an older selmem are left in public (" + strings.Join(ns.Legacy, ", ") + "); this memory no longer uses them",
			fix:    "when no older selmem uses this database any more, drop them: DROP TABLE " + strings.Join(drop, ", ") + " CASCADE;"})
	}
	return out
}

func (a *app) checkEmbedder(ctx context.Context, emb memstore.Embedder) finding {
	const check = "embedder"
	if a.cfg.Embedder.Kind != "openai" {
		return finding{check: check, status: "ok", detail: fmt.Sprintf("%s (built in, offline), dimension %d", emb.ID(), emb.Dim())}
	}
	ectx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	vecs, err := emb.Embed(ectx, []string{"selmem doctor"})
	if err == nil && (len(vecs) != 1 || len(vecs[0]) != emb.Dim()) {
		err = fmt.Errorf("answered with %d vector(s) of %d dimensions; embedder.dim is %d", len(vecs), lenFirst(vecs), emb.Dim())
	}
	if err != nil {
		return finding{check: check, status: "FAIL", detail: oneLine(fmt.Sprintf("%s at %s: %v", a.cfg.Embedder.Model, a.cfg.Embedder.BaseURL, err)),
			fix: "start the embedding server, or correct embedder.base_url, embedder.model, embedder.dim and the API key in the variable embedder.api_key_env names"}
	}
	return finding{check: check, status: "ok", detail: fmt.Sprintf("%s at %s answered, dimension %d", a.cfg.Embedder.Model, a.cfg.Embedder.BaseURL, emb.Dim())}
}

func lenFirst(v [][]float32) int {
	if len(v) == 0 {
		return 0
	}
	return len(v[0])
}

// oneLine folds a multi-line error (pgx lists every address it tried) into
// one line of the report.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}
