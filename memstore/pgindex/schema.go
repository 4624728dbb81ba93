package pgindex

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/memstore"
)

// Every memory's tables, indexes, migration records and index state live
// in a Postgres schema of their own, so that memories sharing one database
// never read, write or rebuild each other's rows. pgindex reaches it
// through a pool of its own derived from the caller's, whose connections
// start with search_path set to the memory's schema and then the schema of
// the vector extension (shared by every memory): every statement, including
// those of migrations added later, names its tables unqualified and finds
// the memory's. A search_path given at connection start holds for the whole
// session, across transactions and pool reuse; SET LOCAL in every
// transaction would need every statement to run in one, and qualifying
// every table in every SQL text would be easy to miss in the next one.

// publicSchema is where indexes made before per-memory schemas keep their
// tables, and where pgindex creates the vector extension when it is missing.
const publicSchema = "public"

// schemaRE is what CheckSchema accepts: a lower-case unquoted Postgres
// identifier of at most 63 bytes.
var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CheckSchema returns an error unless name can name a memory's schema: a
// letter or underscore, then letters, digits and underscores, lower case,
// at most 63 characters, and not starting with pg_ (reserved by Postgres).
func CheckSchema(name string) error {
	if !schemaRE.MatchString(name) {
		return fmt.Errorf("%q is not a schema name: use a lower-case letter or _ followed by at most 62 lower-case letters, digits or _", name)
	}
	if strings.HasPrefix(name, "pg_") {
		return fmt.Errorf("%q is not a schema name: names starting with pg_ are reserved by Postgres", name)
	}
	return nil
}

// SchemaFor returns the schema of the memory whose identity
// (memstore.Store.ID) is id: selmem_ and the first 16 hexadecimal digits of
// the id without its dashes, lower-cased.
func SchemaFor(id string) (string, error) {
	hex := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(hex) < 16 || strings.Trim(hex[:16], "0123456789abcdef") != "" {
		return "", fmt.Errorf("memory id %q does not start with 16 hexadecimal digits; set Options.Schema (index.schema)", id)
	}
	return "selmem_" + hex[:16], nil
}

// quoteIdent quotes name as an SQL identifier.
func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// schemaPool prepares schema in the database of base (creating it, and the
// vector extension in public, when missing) and returns a pool with base's
// settings whose connections use schema and then the extension's schema.
func schemaPool(ctx context.Context, base *pgxpool.Pool, schema, memory string) (*pgxpool.Pool, error) {
	ext, err := prepareSchema(ctx, base, schema, memory)
	if err != nil {
		return nil, err
	}
	cfg := base.Config()
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	path := quoteIdent(schema)
	if ext != schema {
		path += ", " + quoteIdent(ext)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = path
	return pgxpool.NewWithConfig(ctx, cfg)
}

// prepareSchema creates the vector extension (in public) and schema when
// they do not exist, under the database's extensionLockKey, claims the
// schema for memory (when not "") and returns the extension's schema. It
// creates only what is missing, so a role without the CREATE privilege can
// use a schema and an extension a DBA made.
func prepareSchema(ctx context.Context, base *pgxpool.Pool, schema, memory string) (string, error) {
	var ext string
	err := pgx.BeginFunc(ctx, base, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, extensionLockKey); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			WHERE e.extname = 'vector'`).Scan(&ext)
		if errors.Is(err, pgx.ErrNoRows) {
			ext = publicSchema
			_, err = tx.Exec(ctx, `CREATE EXTENSION vector SCHEMA `+publicSchema)
		}
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+quoteIdent(schema)); err != nil {
				return err
			}
		}
		return claimSchema(ctx, tx, schema, memory)
	})
	return ext, err
}

// claimPrefix starts the comment of a schema holding a memory's index.
const claimPrefix = "selmem memory "

// claimSchema records in schema's comment that it holds memory's index,
// and refuses a schema that holds another memory's (two memories given
// the same index.schema would rebuild each other's index on every
// command). Replicas of one memory share its id, hence its schema. A
// schema whose comment the role may not set (a DBA owns it) is used
// unclaimed.
func claimSchema(ctx context.Context, tx pgx.Tx, schema, memory string) error {
	if memory == "" {
		return nil
	}
	var comment string
	if err := tx.QueryRow(ctx, `SELECT coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1`,
		schema).Scan(&comment); err != nil {
		return err
	}
	if owner, ok := strings.CutPrefix(comment, claimPrefix); ok {
		if owner == memory {
			return nil
		}
		return &Error{Op: "New", Kind: memstore.ErrConflict,
			Msg: fmt.Sprintf("schema %s holds the index of memory %s, not of this memory (%s); give each memory its own index.schema", schema, owner, memory)}
	}
	if comment != "" {
		return nil // a comment of the DBA's: leave it
	}
	// The statement is composed by the server, which quotes both values.
	var stmt string
	if err := tx.QueryRow(ctx, `SELECT format('COMMENT ON SCHEMA %I IS %L', $1::text, $2::text)`, schema, claimPrefix+memory).Scan(&stmt); err != nil {
		return err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := sp.Exec(ctx, stmt); err != nil {
		return sp.Rollback(ctx)
	}
	return sp.Commit(ctx)
}

// lockKey is the advisory lock of purpose on the memory in schema:
// "exclusive" (Exclusive), "schema" (migrations, the embedding column,
// search index builds) or "stats" (every write, see lexical.go). Advisory
// locks span the database, so each memory sharing one has keys of its own
// and one memory's bulk load or index build holds up no other.
func lockKey(purpose, schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("selmem " + purpose + " " + schema))
	return int64(h.Sum64())
}

// lock takes, for the rest of tx, the advisory lock of purpose on the
// index's memory (lockKey).
func (ix *Index) lock(ctx context.Context, tx pgx.Tx, purpose string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(purpose, ix.schema))
	return err
}
