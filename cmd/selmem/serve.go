package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/refresh"
	"github.com/selmem/selmem/server"
)

func (a *app) serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the memory over MCP: stdio (default) or streamable HTTP (--http ADDR)",
		Long: `Serve the memory to MCP clients.

By default selmem speaks MCP over stdin and stdout, for hosts that start it
as a subprocess (claude mcp add selmem -- selmem serve). With --http ADDR
(or http.addr, env SELMEM_HTTP_ADDR) it serves streamable HTTP at /mcp and a
health check at /healthz, within the limits of the http.* settings (see
selmem config): request bodies over http.max_body_bytes get 413, browser
pages from origins outside http.allowed_origins get 403, requests beyond
http.max_requests in flight get 503, and at most http.max_sessions sessions
are open, idle ones ending after http.session_idle_ttl. With http.auth, one
principal has at most http.max_requests_per_principal requests in flight and
http.max_sessions_per_principal sessions open. Logs go to stderr or log.file, never stdout.

Over HTTP every request but /healthz and /.well-known/* needs a bearer
token when http.auth is configured: a static token (selmem token create) or
an OIDC access token from http.auth.oidc.issuer. Without http.auth only a
loopback address (127.0.0.1, ::1, localhost) is served, and every request
acts as the local owner; --insecure-no-auth serves another address anyway,
with a warning at every start.
SIGINT or SIGTERM shuts down gracefully; every acknowledged write is already
committed. Unless GOGC or GOMEMLIMIT is set, the Go collector runs at GOGC
400 with a soft memory limit of 1 GiB.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context())
		},
	}
	cmd.Flags().String("http", "", "serve streamable HTTP on ADDR (e.g. 127.0.0.1:8080) instead of stdio (env SELMEM_HTTP_ADDR)")
	cmd.Flags().Bool("insecure-no-auth", false, "serve a non-loopback address without authentication: anyone who reaches it owns the memory (env SELMEM_HTTP_INSECURE_NO_AUTH)")
	return cmd
}

func (a *app) serve(ctx context.Context) error {
	tuneGC()
	log, logCloser, err := a.logger()
	if err != nil {
		return err
	}
	defer logCloser.Close()
	transport := server.TransportStdio
	if a.cfg.HTTP.Addr != "" {
		transport = server.TransportHTTP
	}
	var metrics *server.Metrics
	if transport == server.TransportHTTP && a.cfg.HTTP.Metrics {
		metrics = server.NewMetrics()
		a.observer = metrics
	}
	s, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	metrics.WatchStore(s.Store)
	rf, err := server.NewRefresher(s.Store, a.cfg, log)
	if err != nil {
		s.Close(ctx)
		return err
	}
	sched := refresh.NewScheduler(rf, nil)
	bg, stopBackground := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// The secret rules and the token encoder are built on first use, which
	// the session's first write and first profile would wait for (a few
	// hundred milliseconds): build them while the server starts.
	wg.Go(func() {
		if err := gate.Warm(); err != nil {
			log.Error("build the secret rules", "err", err)
		}
		if _, err := profiler.NewCounter(); err != nil {
			log.Error("load the token encoder", "err", err)
		}
	})
	var external chan []string
	if a.cfg.Remote.URL != "" {
		// Commits other replicas push reach this one's subscribers.
		external = make(chan []string, 16)
		wg.Go(func() {
			defer close(external)
			_ = s.Follow(bg, func(paths []string) {
				select {
				case external <- paths:
				case <-bg.Done():
				}
			})
		})
	}
	srv := server.NewMCPServer(s.Store, a.cfg, &server.Options{
		Version: versionString(), Transport: transport, Logger: log,
		Refresher: rf, NextRun: sched.NextRun, Metrics: metrics,
		ExternalChanges: external,
	})
	if a.cfg.Refresh.Schedule {
		wg.Go(func() { sched.Run(bg) })
	}
	if a.cfg.Refresh.Watch {
		w := refresh.NewWatcher(rf, &refresh.WatcherOptions{Debounce: a.cfg.Refresh.WatchDebounce})
		wg.Go(func() {
			if err := w.Run(bg); err != nil {
				log.Warn("watching data files for refreshes is off", "err", err)
			}
		})
	}
	if transport == server.TransportStdio {
		err = server.ServeStdio(ctx, srv, a.stdin, a.stdout, log)
	} else {
		var h *server.HTTPServer
		h, err = server.Listen(srv, a.cfg.HTTP, &server.HTTPOptions{Logger: log, Artifacts: rf.Handler(server.PathArtifacts), LocalUser: a.cfg.Author, Metrics: metrics.Handler(),
			Health: server.StoreHealth(s.Store, a.cfg.Health.MaxLag, nil)})
		if err == nil {
			if a.cfg.Refresh.ArtifactsURL == "" {
				rf.SetArtifactsURL(server.ArtifactsURL(h.Addr()))
			}
			err = h.Serve(ctx)
		}
	}
	stopBackground()
	wg.Wait()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.HTTP.ShutdownTimeout)
	defer cancel()
	if cerr := s.Close(cctx); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

func (a *app) healthcheckCommand() *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the HTTP server answers on /healthz (for container health checks)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				u, err := healthURL(a.cfg.HTTP.Addr)
				if err != nil {
					return usageError{err}
				}
				url = u
			}
			client := &http.Client{Timeout: timeout}
			resp, err := client.Get(url)
			if err != nil {
				return fmt.Errorf("unhealthy: %w", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("unhealthy: %s answered %s", url, resp.Status)
			}
			fmt.Fprintln(a.stdout, "ok")
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "health URL (default: /healthz on http.addr, env SELMEM_HTTP_ADDR)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "request timeout")
	return cmd
}

// healthURL is the /healthz URL of a server listening on addr, reached over
// loopback when addr binds every interface.
func healthURL(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("no URL: pass --url or set http.addr (SELMEM_HTTP_ADDR)")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("http.addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + server.PathHealth, nil
}
