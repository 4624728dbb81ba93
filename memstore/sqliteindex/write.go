package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
)

// Replace makes chunks the complete set stored for path, in one transaction.
// Every chunk must carry path, distinct Seq values, and an embedding of the
// recorded dimension (none when the dimension is 0).
func (i *Index) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	return i.ReplaceMany(ctx, map[string][]memstore.Chunk{path: chunks})
}

// ReplaceMany is Replace for every path of files, in one transaction, so a
// rebuild commits once per batch of files instead of once per file.
func (i *Index) ReplaceMany(ctx context.Context, files map[string][]memstore.Chunk) error {
	paths := slices.Sorted(maps.Keys(files))
	if len(paths) == 0 {
		return nil
	}
	i.writeMu.Lock()
	defer i.writeMu.Unlock()
	start := time.Now()
	tx, err := i.begin(ctx)
	if err != nil {
		return fmt.Errorf("replace %s: %w", paths[0], err)
	}
	defer tx.Rollback()
	for _, path := range paths {
		for k := range files[path] {
			c := &files[path][k]
			if c.Path != path {
				return fmt.Errorf("replace %s: chunk %d has path %q: %w", path, k, c.Path, memstore.ErrInvalid)
			}
			if len(c.Embedding) != tx.dim {
				return fmt.Errorf("replace %s: chunk %d has a %d-dim embedding, the index records %d (Reset with the embedder's state first): %w",
					path, c.Seq, len(c.Embedding), tx.dim, memstore.ErrInvalid)
			}
		}
	}
	ids := make(map[string][]int64, len(paths))
	rows := 0
	for _, path := range paths {
		if err := deleteWhere(ctx, tx.Tx, "path = ?", path); err != nil {
			return fmt.Errorf("replace %s: %w", path, err)
		}
		if ids[path], err = insertChunks(ctx, tx.Tx, files[path]); err != nil {
			return fmt.Errorf("replace %s: %w", path, err)
		}
		rows += len(files[path])
	}
	err = i.commit(tx, func(vs *vecStore) bool {
		vs.removePaths(paths)
		for _, path := range paths {
			for k := range files[path] {
				vs.add(ids[path][k], &files[path][k])
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("replace %s: %w", paths[0], err)
	}
	i.log.Debug("replaced paths", logKeyPath, paths[0], logKeyFiles, len(paths), logKeyRows, rows, logKeyDuration, time.Since(start))
	return nil
}

// DeletePath removes the chunks of path and of every path below path + "/".
// A trailing "/" on path is ignored.
func (i *Index) DeletePath(ctx context.Context, path string) error {
	path = strings.TrimRight(path, "/")
	dir := path + "/"
	i.writeMu.Lock()
	defer i.writeMu.Unlock()
	tx, err := i.begin(ctx)
	if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	defer tx.Rollback()
	// '0' follows '/' in byte order: [dir, path+"0") is everything below dir.
	if err := deleteWhere(ctx, tx.Tx, "path = ? OR (path >= ? AND path < ?)", path, dir, path+"0"); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	err = i.commit(tx, func(vs *vecStore) bool {
		vs.remove(func(p string) bool { return p == path || strings.HasPrefix(p, dir) })
		return true
	})
	if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	i.log.Debug("deleted path", logKeyPath, path)
	return nil
}

// deleteWhere deletes the chunks matching where from chunks and vectors.
func deleteWhere(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM vectors WHERE id IN (SELECT id FROM chunks WHERE "+where+")", args...); err != nil {
		return fmt.Errorf("delete vectors: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM chunks WHERE "+where, args...); err != nil {
		return fmt.Errorf("delete chunks: %w", err)
	}
	return nil
}

// insertChunks inserts chunks and their vectors and returns their ids.
func insertChunks(ctx context.Context, tx *sql.Tx, chunks []memstore.Chunk) ([]int64, error) {
	if len(chunks) == 0 {
		return nil, nil
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks (path, seq, workspace, scope, type, heading,
		start_line, end_line, context, text, source, confidence, valid_from, invalid_at, expires_at, "commit")
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	vec, err := tx.PrepareContext(ctx, "INSERT INTO vectors (id, embedding) VALUES (?, ?)")
	if err != nil {
		return nil, err
	}
	defer vec.Close()
	var blob []byte
	ids := make([]int64, len(chunks))
	for k := range chunks {
		c := &chunks[k]
		res, err := ins.ExecContext(ctx, c.Path, c.Seq, c.Workspace, c.Scope, c.Type, c.Heading,
			c.StartLine, c.EndLine, c.Context, c.Text, c.Source, c.Confidence,
			nanos(c.ValidFrom), nanos(c.InvalidAt), nanos(c.ExpiresAt), c.Commit)
		if err != nil {
			return nil, fmt.Errorf("insert chunk %d: %w", c.Seq, err)
		}
		if ids[k], err = res.LastInsertId(); err != nil {
			return nil, fmt.Errorf("insert chunk %d: %w", c.Seq, err)
		}
		if len(c.Embedding) > 0 {
			blob = appendVector(blob[:0], c.Embedding)
			if _, err := vec.ExecContext(ctx, ids[k], blob); err != nil {
				return nil, fmt.Errorf("store vector of chunk %d: %w", c.Seq, err)
			}
		}
	}
	return ids, nil
}

// nanos stores t as Unix nanoseconds, NULL when zero.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return unixNanos(t)
}

// unixNanos is t.UnixNano with times beyond the int64 range (before 1678,
// after 2262) clamped to it.
func unixNanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// The range of times nanos stores exactly.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// fromNanos reverses nanos.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// appendVector appends v to b as little-endian float32s.
func appendVector(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}
