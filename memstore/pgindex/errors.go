package pgindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/selmem/selmem/memstore"
)

// ErrUnavailable reports that the database could not be reached or the
// connection was lost. Retrying later may succeed.
var ErrUnavailable = errors.New("index database unavailable")

// Error is a failed index operation. Its message names the operation and
// what went wrong, never the connection string, host or credentials; the
// underlying driver error is kept for errors.Is/As and for logs.
type Error struct {
	Op   string // Replace, Search, ...
	Kind error  // memstore.ErrInvalid, memstore.ErrNotFound, ErrUnavailable, context errors, or nil
	Msg  string // safe description
	Err  error  // driver error
}

func (e *Error) Error() string { return "pgindex: " + e.Op + ": " + e.Msg }

// Unwrap lets errors.Is match both Kind and the driver error.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// translate turns a driver error into an *Error at the package boundary.
// ctx is the operation's context, to tell a deadline from other failures.
func translate(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	e := &Error{Op: op, Err: err}
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		e.Kind, e.Msg = memstore.ErrNotFound, "not found"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		cause := ctx.Err()
		if cause == nil {
			cause = context.DeadlineExceeded
			if errors.Is(err, context.Canceled) {
				cause = context.Canceled
			}
		}
		e.Kind = cause
		if errors.Is(cause, context.DeadlineExceeded) {
			e.Msg = "timed out waiting for the index database"
		} else {
			e.Msg = "canceled"
		}
	case errors.As(err, &pgErr):
		e.Msg = fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
		switch class := pgErr.Code[:min(2, len(pgErr.Code))]; class {
		case "22": // data exception: wrong vector dimension, bad value
			e.Kind = memstore.ErrInvalid
		case "08", "57": // connection exception, operator intervention (shutdown)
			e.Kind = ErrUnavailable
		}
	case errors.As(err, &connErr):
		e.Kind, e.Msg = ErrUnavailable, "cannot connect to the index database"
	case errors.As(err, &netErr), pgconn.SafeToRetry(err), isClosed(err):
		e.Kind, e.Msg = ErrUnavailable, "connection to the index database lost"
	default:
		e.Msg = "database error"
	}
	return e
}

// isClosed reports errors pgx returns for a connection that died under it.
func isClosed(err error) bool {
	var pgconnErr interface{ SafeToRetry() bool }
	return errors.As(err, &pgconnErr) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// invalid returns an *Error of kind memstore.ErrInvalid.
func invalid(op, format string, args ...any) error {
	return &Error{Op: op, Kind: memstore.ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}
