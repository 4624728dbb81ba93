package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/selmem/selmem/memstore"
)

// healthTimeout bounds the checks behind one /healthz answer.
const healthTimeout = 5 * time.Second

// serveHealth answers PathHealth: 200 {"status":"ok"}, or 503
// {"status":"unhealthy","reason":...} when check fails.
func serveHealth(w http.ResponseWriter, r *http.Request, check func(context.Context) error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	body := map[string]string{"status": "ok"}
	if check != nil {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		if err := check(ctx); err != nil {
			body = map[string]string{"status": "unhealthy", "reason": err.Error()}
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// StoreHealth returns a health check of store: unhealthy when the shared
// remote has not been reached for longer than maxLag, or an index lacks a
// commit older than maxLag. now is the clock (nil is time.Now).
func StoreHealth(store *memstore.Store, maxLag time.Duration, now func() time.Time) func(context.Context) error {
	if now == nil {
		now = time.Now
	}
	return func(ctx context.Context) error {
		var errs []error
		rs, err := store.RemoteStatus(ctx)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("remote: %w", err))
		case rs.URL != "":
			if age := now().Sub(rs.LastContact); rs.LastContact.IsZero() || age > maxLag {
				why := "never reached"
				if !rs.LastContact.IsZero() {
					why = "not reached for " + age.Round(time.Second).String()
				}
				if rs.LastError != "" {
					why += ": " + rs.LastError
				}
				errs = append(errs, fmt.Errorf("remote %s %s", RedactURL(rs.URL), why))
			}
		}
		lags, _ := store.IndexLags(ctx)
		for _, l := range lags {
			name := indexName(l.Index)
			// An unreadable index is not a reason to restart the server
			// (searches fall back to the embedded index); selmem_index_up
			// reports it.
			if l.Err == nil && l.Commits > 0 && now().Sub(l.Since) > maxLag {
				errs = append(errs, fmt.Errorf("%s index %d commit(s) behind for %s", name, l.Commits, now().Sub(l.Since).Round(time.Second)))
			}
		}
		return errors.Join(errs...)
	}
}

// indexName names an index of memstore.IndexLag in metrics and health.
func indexName(i int) string {
	if i > 0 {
		return indexFallback
	}
	return indexPrimary
}
