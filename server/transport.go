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
)

// Paths served over HTTP.
const (
	PathMCP    = "/mcp"
	PathHealth = "/healthz"
)

// ServeStdio serves srv over stdin and stdout until ctx is cancelled or
// stdin is closed. Only JSON-RPC goes to stdout; errors go to logger.
func ServeStdio(ctx context.Context, srv *mcpserver.MCPServer, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := mcpserver.NewStdioServer(srv)
	s.SetErrorLogger(slog.NewLogLogger(logger.Handler(), slog.LevelError))
	logger.Info("serving MCP", logKeyTransport, TransportStdio)
	err := s.Listen(ctx, stdin, stdout)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// HTTPServer serves MCP over streamable HTTP at PathMCP, and PathHealth.
type HTTPServer struct {
	ln      net.Listener
	httpSrv *http.Server
	mcp     *mcpserver.StreamableHTTPServer
	log     *slog.Logger
	timeout time.Duration
}

// Listen binds addr (":0" picks a free port; Addr reports it).
func Listen(srv *mcpserver.MCPServer, addr string, shutdownTimeout time.Duration, logger *slog.Logger) (*HTTPServer, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	h := &HTTPServer{ln: ln, log: logger, timeout: shutdownTimeout}
	h.httpSrv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	h.mcp = mcpserver.NewStreamableHTTPServer(srv,
		mcpserver.WithEndpointPath(PathMCP),
		mcpserver.WithStreamableHTTPServer(h.httpSrv),
		mcpserver.WithStreamableHTTPLogger(logger),
		mcpserver.WithStateful(true),
		mcpserver.WithHeartbeatInterval(30*time.Second),
		mcpserver.WithSessionIdleTTL(time.Hour),
	)
	mux.Handle(PathMCP, h.mcp)
	mux.HandleFunc(PathHealth, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return h, nil
}

// Addr returns the address the server listens on.
func (h *HTTPServer) Addr() string { return h.ln.Addr().String() }

// Serve serves until ctx is cancelled, then shuts down gracefully: open
// sessions are closed and in-flight requests get the shutdown timeout to
// finish.
func (h *HTTPServer) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- h.httpSrv.Serve(h.ln) }()
	h.log.Info("serving MCP", logKeyTransport, TransportHTTP, logKeyAddr, h.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	h.log.Info("shutting down", logKeyTransport, TransportHTTP)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeout)
	defer cancel()
	err := h.mcp.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && serr != nil {
		err = errors.Join(err, serr)
	}
	return err
}
