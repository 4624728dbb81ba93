package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/resources"
)

// Paths served over HTTP.
const (
	PathMCP    = "/mcp"
	PathHealth = "/healthz"
	// PathArtifacts serves artifacts with their data injected:
	// /artifacts/<workspace>/<artifact>/.
	PathArtifacts = "/artifacts/"
)

// ServeStdio serves srv over stdin and stdout until ctx is cancelled or
// stdin is closed, then answered (drainingReader). Only JSON-RPC goes to
// stdout; errors go to logger.
func ServeStdio(ctx context.Context, srv *mcpserver.MCPServer, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := mcpserver.NewStdioServer(srv)
	s.SetErrorLogger(slog.NewLogLogger(logger.Handler(), slog.LevelError))
	logger.Info("serving MCP", logKeyTransport, TransportStdio)
	pending := newPendingRequests()
	out := &lineWriter{w: stdout, answered: pending.done}
	in := &drainingReader{r: stdin, pending: pending, refuse: out.refuse, timeout: stdioDrainTimeout}
	err := s.Listen(resources.WithNotifier(withGate(ctx, out), out), in, out)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// HTTPOptions are the dependencies of an HTTPServer. A nil *HTTPOptions is
// valid.
type HTTPOptions struct {
	Logger *slog.Logger     // nil discards
	Now    func() time.Time // the clock of session idle times; nil is time.Now
	// Artifacts, when set, serves PathArtifacts (see refresh.Handler).
	// Its requests carry the principal (access.FromContext).
	Artifacts http.Handler
	// LocalUser names the principal of every request when no
	// authentication is configured: the local owner (Config.Author; ""
	// is "selmem").
	LocalUser string
	// Metrics, when set, serves PathMetrics (see Metrics.Handler).
	Metrics http.Handler
	// Health, when set, decides PathHealth's answer: nil is healthy, an
	// error is 503 with the error's text as the reason (see StoreHealth).
	Health func(ctx context.Context) error
}

// HTTPServer serves MCP over streamable HTTP at PathMCP, and PathHealth,
// within the limits of an HTTPConfig: request body size, read and write
// timeouts, browser origins, and the number and idle time of sessions.
// With http.auth every request but PathHealth and /.well-known/* needs a
// bearer token, and its principal reaches every handler through the
// request context; a session serves only the principal that opened it.
// Without it, only loopback addresses are served (unless InsecureNoAuth),
// and every request acts as the local owner.
type HTTPServer struct {
	auth     *authenticator
	ln       net.Listener
	httpSrv  *http.Server
	mcp      *mcpserver.StreamableHTTPServer
	log      *slog.Logger
	cfg      HTTPConfig
	origins  originPolicy
	sessions *sessionTable
	slots    *requestSlots
	relay    *relay
}

// Listen binds cfg.Addr (":0" picks a free port; Addr reports it). It
// refuses an address that is not loopback when no authentication is
// configured, unless cfg.InsecureNoAuth.
func Listen(srv *mcpserver.MCPServer, cfg HTTPConfig, opts *HTTPOptions) (*HTTPServer, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	origins, err := newOriginPolicy(cfg.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	if err := checkListenAddr(cfg); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	// Without http.auth every request is the local owner's: the caps in
	// all are the only ones.
	sessionsEach, requestsEach := cfg.MaxSessionsPerPrincipal, cfg.MaxRequestsPerPrincipal
	if !cfg.Auth.Enabled() {
		sessionsEach, requestsEach = cfg.MaxSessions, cfg.MaxRequests
	}
	h := &HTTPServer{
		auth: newAuthenticator(cfg.Auth, o.LocalUser),
		ln:   ln, log: o.Logger, cfg: cfg, origins: origins,
		sessions: newSessionTable(cfg.MaxSessions, sessionsEach, o.Now),
		slots:    newRequestSlots(cfg.MaxRequests, requestsEach),
		relay:    newRelay(o.Logger),
	}
	mux := http.NewServeMux()
	// No server-wide WriteTimeout: it is one deadline from the start of
	// a request and would end every event stream when it passes.
	// deadlineWriter gives each write its own deadline instead, and
	// serveMCP gives each POST body one to arrive in.
	h.httpSrv = &http.Server{
		Handler:           h.withWriteDeadlines(withLoopbackHost(h.withAuth(mux))),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	h.mcp = mcpserver.NewStreamableHTTPServer(srv,
		mcpserver.WithEndpointPath(PathMCP),
		mcpserver.WithStreamableHTTPServer(h.httpSrv),
		mcpserver.WithStreamableHTTPLogger(o.Logger),
		mcpserver.WithSessionIdManager(h.sessions),
		mcpserver.WithHeartbeatInterval(30*time.Second),
		mcpserver.WithHTTPContextFunc(principalContext),
	)
	h.logAuth()
	mux.HandleFunc(PathMCP, h.serveMCP)
	if o.Artifacts != nil {
		mux.Handle(PathArtifacts, o.Artifacts)
	}
	if o.Metrics != nil {
		mux.Handle(PathMetrics, o.Metrics)
	}
	if cfg.Auth.Enabled() {
		// The bare well-known path, which 401 answers point to, and the
		// one RFC 9728 derives from the resource URL of PathMCP.
		mux.HandleFunc(PathProtectedResource, h.serveResourceMetadata)
		mux.HandleFunc(mcpserver.ProtectedResourceMetadataPath("http://h"+PathMCP), h.serveResourceMetadata)
	}
	mux.HandleFunc(PathHealth, func(w http.ResponseWriter, r *http.Request) {
		serveHealth(w, r, o.Health)
	})
	return h, nil
}

// Addr returns the address the server listens on.
func (h *HTTPServer) Addr() string { return h.ln.Addr().String() }

// Serve serves until ctx is cancelled, then shuts down gracefully: open
// sessions are closed and in-flight requests get the shutdown timeout to
// finish. With a session idle TTL, idle sessions are swept meanwhile.
func (h *HTTPServer) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- h.httpSrv.Serve(h.ln) }()
	h.log.Info("serving MCP", logKeyTransport, TransportHTTP, logKeyAddr, h.Addr())
	h.discoverIssuer(ctx)
	if ttl := h.cfg.SessionIdleTTL; ttl > 0 {
		go h.sweepLoop(ctx, max(ttl/4, time.Second))
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	h.log.Info("shutting down", logKeyTransport, TransportHTTP)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.ShutdownTimeout)
	defer cancel()
	err := h.mcp.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && serr != nil {
		err = errors.Join(err, serr)
	}
	return err
}

// sweepLoop runs SweepIdleSessions every interval until ctx is done.
func (h *HTTPServer) sweepLoop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.SweepIdleSessions()
		}
	}
}

// Sessions reports the number of open sessions.
func (h *HTTPServer) Sessions() int { return h.sessions.len() }

// Requests reports the number of POST requests being handled.
func (h *HTTPServer) Requests() int { return h.slots.len() }

// SweepIdleSessions ends every session that has no open event stream and
// has sent no request for the session idle TTL, as if its client had sent
// DELETE: the MCP server forgets it and its memory is released, and its id
// is answered 404 from then on. It returns the number ended. Serve calls it
// periodically; tests call it directly with an injected clock.
func (h *HTTPServer) SweepIdleSessions() int {
	if h.cfg.SessionIdleTTL <= 0 {
		return 0
	}
	ids := h.sessions.idle(h.cfg.SessionIdleTTL)
	for _, id := range ids {
		// The transport's own DELETE handling is the one public way to
		// drop every piece of its per-session state.
		r, err := http.NewRequest(http.MethodDelete, PathMCP, nil)
		if err != nil {
			continue
		}
		r.Header.Set(mcpserver.HeaderKeySessionID, id)
		h.mcp.ServeHTTP(discardResponse{}, r)
	}
	if len(ids) > 0 {
		h.log.Info("ended idle sessions", logKeyCount, len(ids), logKeyOpen, h.sessions.len())
	}
	return len(ids)
}

// discardResponse is the response writer of an internal request.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (discardResponse) WriteHeader(int)             {}
