package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/selmem/selmem/memstore"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// PageSize is the number of items on one page of tools/list, prompts/list,
// resources/list and resources/templates/list.
const PageSize = 50

// maxCursors bounds the list cursors remembered as issued.
const maxCursors = 4096

// logger is the logger name of the log messages sent to clients.
const logger = Name

// Log keys of the protocol hooks and the relay.
const (
	logKeyMethod  = "method"
	logKeySession = "session"
)

// cursorMessage is the error message of a list cursor this server did not
// issue (or no longer remembers).
const cursorMessage = "the cursor is not one this server issued, or it has expired: list again without a cursor"

// listMethods are the methods that take a cursor.
var listMethods = map[mcp.MCPMethod]bool{
	mcp.MethodToolsList:              true,
	mcp.MethodPromptsList:            true,
	mcp.MethodResourcesList:          true,
	mcp.MethodResourcesTemplatesList: true,
}

// cursors remembers the list cursors this server issued, so that a cursor it
// did not issue is refused with a plain message before mcp-go decodes it.
// mcp-go's cursors name the last item of a page, so there are about as many
// as there are pages; the oldest are forgotten beyond maxCursors, and a
// client holding one lists again from the start.
type cursors struct {
	mu     sync.Mutex
	issued map[mcp.Cursor]struct{}
	order  []mcp.Cursor
}

func (c *cursors) add(cur mcp.Cursor) {
	if cur == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.issued[cur]; ok {
		return
	}
	if c.issued == nil {
		c.issued = map[mcp.Cursor]struct{}{}
	}
	if len(c.order) >= maxCursors {
		delete(c.issued, c.order[0])
		c.order = c.order[1:]
	}
	c.issued[cur] = struct{}{}
	c.order = append(c.order, cur)
}

func (c *cursors) known(cur mcp.Cursor) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.issued[cur]
	return ok
}

// protocol installs the hooks that make srv answer as the specification
// says where mcp-go v1.2.1 does not: cancelled requests get no response,
// errors carry the right code and a plain message, list cursors are checked,
// and clients that asked for log messages (logging/setLevel) get them.
type protocol struct {
	srv     *mcpserver.MCPServer
	log     *slog.Logger
	cursors cursors
}

func installProtocol(srv *mcpserver.MCPServer, log *slog.Logger) {
	p := &protocol{srv: srv, log: log}
	hooks := srv.GetHooks()
	if hooks == nil {
		hooks = &mcpserver.Hooks{}
		mcpserver.WithHooks(hooks)(srv)
	}
	hooks.AddOnRequestInitialization(p.checkCursor)
	hooks.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, r *mcp.ListToolsResult) {
		p.cursors.add(r.NextCursor)
	})
	hooks.AddAfterListPrompts(func(_ context.Context, _ any, _ *mcp.ListPromptsRequest, r *mcp.ListPromptsResult) {
		p.cursors.add(r.NextCursor)
	})
	hooks.AddAfterListResources(func(_ context.Context, _ any, _ *mcp.ListResourcesRequest, r *mcp.ListResourcesResult) {
		p.cursors.add(r.NextCursor)
	})
	hooks.AddAfterListResourceTemplates(func(_ context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, r *mcp.ListResourceTemplatesResult) {
		p.cursors.add(r.NextCursor)
	})
	hooks.AddOnSuccess(p.succeeded)
	hooks.AddOnError(p.failed)
}

// checkCursor refuses a list request whose cursor this server did not issue.
// (mcp-go v1.2.1 decodes any base64 text as the name to start after, and
// answers other text with encoding/base64's error.)
func (p *protocol) checkCursor(ctx context.Context, id any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method mcp.MCPMethod `json:"method"`
		Params struct {
			Cursor mcp.Cursor `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || !listMethods[m.Method] || m.Params.Cursor == "" || p.cursors.known(m.Params.Cursor) {
		return nil
	}
	if g := gateFrom(ctx); g != nil {
		g.replaceError(id, mcp.INVALID_PARAMS, cursorMessage)
	}
	return errors.New(cursorMessage)
}

// succeeded withholds the response to a cancelled request and logs tool
// calls to the client.
func (p *protocol) succeeded(ctx context.Context, id any, method mcp.MCPMethod, message any, result any) {
	if p.cancelled(ctx, id) {
		return
	}
	req, ok := message.(*mcp.CallToolRequest)
	if !ok {
		p.clientLog(ctx, mcp.LoggingLevelDebug, fmt.Sprintf("%s answered", method))
		return
	}
	res, _ := result.(*mcp.CallToolResult)
	if res == nil || !res.IsError {
		p.clientLog(ctx, mcp.LoggingLevelInfo, fmt.Sprintf("tool %s succeeded", req.Params.Name))
		return
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text = tc.Text
			break
		}
	}
	p.clientLog(ctx, mcp.LoggingLevelWarning, fmt.Sprintf("tool %s refused the call: %s", req.Params.Name, text))
}

// failed withholds the response to a cancelled request, or gives the error
// its code and a plain message.
func (p *protocol) failed(ctx context.Context, id any, method mcp.MCPMethod, _ any, err error) {
	if id == nil || p.cancelled(ctx, id) {
		return
	}
	code, msg := p.rpcError(ctx, method, err)
	if g := gateFrom(ctx); g != nil {
		g.replaceError(id, code, msg)
	}
	p.clientLog(ctx, mcp.LoggingLevelError, fmt.Sprintf("%s failed: %s", method, msg))
}

// cancelled reports whether the request ctx belongs to was cancelled (by
// notifications/cancelled, or because its client went away), and if so
// withholds its response. mcp-go v1.2.1 (server.handleNotification) only
// cancels the handler's context; HandleMessage still returns the handler's
// result and both transports write it.
func (p *protocol) cancelled(ctx context.Context, id any) bool {
	if ctx.Err() == nil || id == nil {
		return false
	}
	if g := gateFrom(ctx); g != nil {
		g.cancel(id)
	}
	return true
}

// codeDenied is the JSON-RPC error of a request the principal's role does
// not allow, from the range JSON-RPC leaves to servers.
const codeDenied = -32003

// rpcError is the JSON-RPC error for err, a failure of method: the code the
// negotiated protocol revision prescribes and a message free of Go
// internals. mcp-go v1.2.1 answers -32603 for every error a handler returns
// (server/handler_errors.go, handlerError), -32600 with the text of
// encoding/json's error for params it cannot decode, and -32602 with the
// text of encoding/base64's error for a bad list cursor; a
// handler says what went wrong by wrapping server.ErrResourceNotFound
// (resource not found: -32002, or -32602 from 2026-07-28 on) or
// mcp.ErrInvalidParams (-32602). An internal error is logged and reported
// without its details.
func (p *protocol) rpcError(ctx context.Context, method mcp.MCPMethod, err error) (int, string) {
	code, msg := mcp.INTERNAL_ERROR, ""
	var je interface{ ToJSONRPCError() mcp.JSONRPCError }
	if errors.As(err, &je) {
		d := je.ToJSONRPCError().Error
		code, msg = d.Code, d.Message
	}
	var unparsable *mcpserver.UnparsableMessageError
	switch {
	case errors.Is(err, mcpserver.ErrResourceNotFound):
		if mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx)) {
			return mcp.INVALID_PARAMS, msg
		}
		return mcp.RESOURCE_NOT_FOUND, msg
	case errors.Is(err, mcp.ErrInvalidParams), errors.Is(err, mcpserver.ErrPromptNotFound), errors.Is(err, mcpserver.ErrToolNotFound):
		return mcp.INVALID_PARAMS, msg
	case errors.Is(err, memstore.ErrDenied):
		// The refusal says which role is needed and nothing of the content.
		return codeDenied, err.Error()
	case errors.As(err, &unparsable):
		return mcp.INVALID_PARAMS, fmt.Sprintf("the params of %s do not have the shape the method takes", method)
	case code == mcp.INVALID_PARAMS && listMethods[method]:
		return code, cursorMessage
	case code == mcp.INTERNAL_ERROR:
		p.log.Error("request failed", logKeyMethod, method, logKeyErr, err)
		return code, fmt.Sprintf("%s failed inside the memory server; the details are in the server's log. Retry once, and report it if it fails again.", method)
	}
	return code, msg
}

// clientLog sends a log message to the client of the request ctx belongs
// to, if it asked for messages of this level (logging/setLevel; by default
// only errors). Messages say what the client was already told — a method,
// a tool name, the text of a result or error — so they carry no secret.
func (p *protocol) clientLog(ctx context.Context, level mcp.LoggingLevel, text string) {
	s := mcpserver.ClientSessionFromContext(ctx)
	sl, ok := s.(mcpserver.SessionWithLogging)
	if !ok || !level.ShouldSendTo(sl.GetLogLevel()) {
		return
	}
	params := map[string]any{"level": level, "logger": logger, "data": text}
	if w, ok := gateFrom(ctx).(*streamWriter); ok {
		// Over HTTP, on the request's own stream; never through mcp-go's
		// notification queue (see relay).
		data, err := json.Marshal(mcp.JSONRPCNotification{
			JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationMessage),
				Params: mcp.NotificationParams{AdditionalFields: params},
			},
		})
		if err == nil {
			w.notify(data)
		}
		return
	}
	_ = p.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationMessage), params)
}
