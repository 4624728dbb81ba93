package pgindex

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Replicas of one memory share its schema. They serialise their updates of
// the index with Exclusive and tell each other of new commits with Publish
// and Subscribe (LISTEN/NOTIFY on a channel named after the schema).

// Backoff between attempts to listen again after a lost connection.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// Exclusive implements memstore.SharedIndex: it runs fn while holding the
// memory's advisory lock (keyed by the schema) on a connection pinned for
// the call, so no other Exclusive on the same memory, in any process, runs
// at the same time. fn's own queries use other connections. The lock is
// released when fn returns or panics; when ctx ends while waiting, the
// wait is abandoned and ctx's error returned.
func (ix *Index) Exclusive(ctx context.Context, fn func(ctx context.Context) error) error {
	return exclusive(ctx, ix.base, ix.schema, ix.opts.QueryTimeout, fn)
}

// Publish implements memstore.ChangeFeed: it notifies the memory's
// subscribers, in every process, of commit.
func (ix *Index) Publish(ctx context.Context, commit string) error {
	return publish(ctx, ix.base, ix.schema, ix.opts.QueryTimeout, commit)
}

// Subscribe implements memstore.ChangeFeed: it listens on a connection of
// its own and calls fn with the commit of every notification Publish sends
// for the memory. After losing the connection it connects again, with
// backoff, and then calls fn("") once: notifications may have been missed
// meanwhile. It returns ctx's error when ctx is done, and only then.
func (ix *Index) Subscribe(ctx context.Context, fn func(commit string)) error {
	return subscribe(ctx, ix.base, ix.schema, ix.log, fn)
}

func exclusive(ctx context.Context, pool *pgxpool.Pool, schema string, timeout time.Duration, fn func(ctx context.Context) error) error {
	const op = "Exclusive"
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return translate(ctx, op, err)
	}
	key := lockKey("exclusive", schema)
	// A wait cut short by ctx closes the connection, which drops the
	// request; Release then discards the connection.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Release()
		return translate(ctx, op, err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var released bool
		if err := conn.QueryRow(uctx, `SELECT pg_advisory_unlock($1)`, key).Scan(&released); err != nil || !released {
			// Ending the session releases every lock it holds.
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
	}()
	return fn(ctx)
}

func publish(ctx context.Context, pool *pgxpool.Pool, schema string, timeout time.Duration, commit string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := pool.Exec(ctx, `SELECT pg_notify($1, $2)`, schema, commit)
	return translate(ctx, "Publish", err)
}

func subscribe(ctx context.Context, pool *pgxpool.Pool, schema string, log *slog.Logger, fn func(commit string)) error {
	cfg := pool.Config().ConnConfig
	wait, missed := listenRetryMin, false
	for {
		listening, err := listen(ctx, cfg, schema, missed, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listening {
			wait = listenRetryMin
		}
		missed = true
		log.Warn("pgindex: listening for changes failed; retrying", logKeySchema, schema,
			logKeyErr, translate(ctx, "Subscribe", err).Error(), "retry_in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait): // collected once fired or unreferenced (Go >= 1.23)
		}
		wait = min(2*wait, listenRetryMax)
	}
}

// listen connects, listens on schema's channel and calls fn for every
// notification until the connection fails or ctx ends; first fn("") when
// missed. It reports whether it got as far as listening.
func listen(ctx context.Context, cfg *pgx.ConnConfig, schema string, missed bool, fn func(string)) (bool, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+quoteIdent(schema)); err != nil {
		return false, err
	}
	if missed {
		fn("")
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		fn(n.Payload)
	}
}
