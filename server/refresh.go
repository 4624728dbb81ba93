package server

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/internal/mcpsource"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/refresh"
	"github.com/selmem/selmem/schemas"
)

// DataDir is the directory, under the home, of the artifacts' data
// snapshots: outside the memory's git repository.
const DataDir = "data"

// NewRefresher returns the refresher of a memory: connectors read within
// the profile settings (data roots, outbound policy, credentials and
// connections), snapshots live under cfg.Home/data.
func NewRefresher(store *memstore.Store, cfg Config, log *slog.Logger) (*refresh.Refresher, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	policy, err := egress.New(cfg.Profile.Egress())
	if err != nil {
		return nil, err
	}
	snaps, err := refresh.OpenSnapshots(filepath.Join(cfg.Home, DataDir), cfg.Refresh.KeepSnapshots)
	if err != nil {
		return nil, err
	}
	mcp := func(c refresh.MCPCall) (profiler.Source, error) {
		srv, ok := cfg.Refresh.MCPServers[c.Server]
		if !ok {
			return nil, &memstore.Error{Kind: memstore.ErrInvalid, Msg: fmt.Sprintf("Error: no MCP server %q is configured.", c.Server),
				Hint: "Name one of refresh.mcp_servers, or ask the user to configure it there."}
		}
		return mcpsource.Source{Server: srv, ServerName: c.Server, Name: c.Tool, Tool: c.Tool, Arguments: c.Arguments,
			RecordsPath: c.RecordsPath, Policy: policy, Timeout: c.Timeout}, nil
	}
	return refresh.New(store, snaps, &refresh.Options{
		Access:           schemas.Access{Roots: cfg.Profile.DataRoots, Policy: policy},
		MCP:              mcp,
		MaxSnapshotBytes: cfg.Refresh.MaxSnapshotBytes,
		MaxViewBytes:     cfg.Refresh.MaxViewBytes,
		ArtifactsURL:     artifactsURL(cfg),
		Author:           cfg.Author,
		Logger:           log,
	}), nil
}

// artifactsURL is where users open artifacts: refresh.artifacts_url, else
// derived from http.addr (cmd corrects it once the listener's port is
// known), else "".
func artifactsURL(cfg Config) string {
	if cfg.Refresh.ArtifactsURL != "" {
		return cfg.Refresh.ArtifactsURL
	}
	return ArtifactsURL(cfg.HTTP.Addr)
}

// ArtifactsURL is where an HTTP server listening on addr serves artifacts,
// a wildcard host read as localhost; "" when addr is not host:port.
func ArtifactsURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + PathArtifacts
}
