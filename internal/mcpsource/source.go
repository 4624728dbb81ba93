package mcpsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/profiler"
)

// DefaultMaxBytes bounds a tool's result when Source.MaxBytes is zero.
const DefaultMaxBytes = 64 << 20

// Source reads the records one call of an MCP tool returns: its
// structured content if it has any, otherwise its one text content parsed
// as JSON, followed along RecordsPath to an array of objects.
//
// Each Open starts a session (a process for a command server), calls the
// tool once, and ends the session and the process before it returns.
type Source struct {
	// Server is the configured server to call.
	Server Server
	// ServerName is the server's configured name, which errors use to
	// name it; empty is Name.
	ServerName string
	// Name is the records' name, reported by the reader's Info; empty is
	// Tool.
	Name string
	// Tool is the tool to call and Arguments its arguments.
	Tool      string
	Arguments map[string]any
	// RecordsPath is the dot-separated path to the array of records in
	// the result, e.g. "data.items". Empty means the result itself, which
	// must be an array or an object holding exactly one array.
	RecordsPath string
	// Policy is the outbound policy for URL servers; nil is egress.Deny().
	Policy *egress.Policy
	// MaxBytes bounds the result's JSON; zero is DefaultMaxBytes.
	MaxBytes int64
	// Timeout bounds the whole call; zero is Server.Timeout, then
	// DefaultTimeout.
	Timeout time.Duration
}

var _ profiler.Source = Source{}

// call is one Open in progress.
type call struct {
	Source
	name     string // the server, for errors
	timeout  time.Duration
	maxBytes int64
	b        *budget
	proc     *process            // command servers
	wire     *recordingTransport // URL servers
}

// Open implements profiler.Source. Its errors are *Error.
func (s Source) Open(ctx context.Context) (profiler.RecordReader, error) {
	c := &call{Source: s, name: s.ServerName, timeout: s.Timeout, maxBytes: s.MaxBytes}
	if c.name == "" {
		c.name = s.Name
	}
	if c.timeout <= 0 {
		c.timeout = s.Server.Timeout
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	// The wire carries the result twice at most (structured and text
	// content), escaped, plus the handshake.
	c.b = &budget{limit: 2*c.maxBytes + 1<<20}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < c.timeout {
		c.timeout = time.Until(d).Round(time.Millisecond) // for the message
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.run(ctx)
	if err != nil {
		return nil, err
	}
	return c.records(res)
}

// fail is an *Error of this call.
func (c *call) fail(kind error, cause error, hint, format string, args ...any) *Error {
	return &Error{Server: c.name, Tool: c.Tool, Kind: kind, Msg: fmt.Sprintf(format, args...), hint: hint, cause: cause}
}

// secrets are the values errors must not show: the values of the
// variables passed to a command server, a URL server's URL and query.
func (c *call) secrets() []string {
	if c.proc != nil {
		return c.proc.secrets
	}
	if c.wire != nil {
		s := []string{c.Server.URL}
		if u, err := url.Parse(c.Server.URL); err == nil && u.RawQuery != "" {
			s = append(s, u.RawQuery)
		}
		return s
	}
	return nil
}

// run starts the session, calls the tool, and ends the session and the
// process whatever happened.
func (c *call) run(ctx context.Context) (*mcp.CallToolResult, error) {
	if c.Tool == "" {
		return nil, c.fail(ErrToolFailed, nil, "Name the tool to call.", "no tool is named")
	}
	var t mcp.Transport
	switch {
	case len(c.Server.Command) > 0:
		p, err := start(c.Server.Command, c.Server.Env)
		if err != nil {
			return nil, c.fail(ErrUnavailable, nil, "Check the server's command setting.", "%s", startError(c.Server.Command, err))
		}
		defer p.stop()
		c.proc, t = p, p.transport(c.b)
	case c.Server.URL != "":
		policy := c.Policy
		if policy == nil {
			policy = egress.Deny()
		}
		tr, wire, err := c.Server.httpTransport(policy, c.b)
		if err != nil {
			return nil, c.fail(ErrUnavailable, err, "Ask the user to fix the server's configuration.", "%v", err)
		}
		c.wire, t = wire, tr
	default:
		return nil, c.fail(ErrUnavailable, nil, "Configure command or url for the server.", "the server has neither a command nor a URL")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "selmem", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, c.explain(ctx, "starting the session", err)
	}
	defer func() {
		if c.wire != nil && ctx.Err() != nil {
			// The session's DELETE waits for a server that is not
			// answering; the SDK bounds it, and Open need not wait.
			go cs.Close()
			return
		}
		cs.Close()
	}()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Arguments})
	if err != nil {
		return nil, c.explain(ctx, "calling the tool", err)
	}
	return res, nil
}

// codeRejectedByTransport is the JSON-RPC code the SDK gives a request
// its own transport failed to deliver, as opposed to an error response
// from the server.
const codeRejectedByTransport = -32005

// explain turns a session error into an *Error that says what failed
// without repeating anything secret.
func (c *call) explain(ctx context.Context, doing string, err error) *Error {
	if c.b.over.Load() {
		return c.tooLarge()
	}
	if ce := ctx.Err(); ce != nil {
		if errors.Is(ce, context.DeadlineExceeded) {
			return c.fail(ErrTimeout, ce, "Raise the server's timeout, or ask the tool for less data.", "no answer within %s while %s", c.timeout, doing)
		}
		return c.fail(ErrUnavailable, ce, "", "cancelled while %s", doing)
	}
	if c.wire != nil {
		status, werr := c.wire.failure()
		var re *egress.RefusedError
		switch {
		case errors.As(werr, &re):
			return c.fail(ErrUnavailable, re, re.Hint(), "%s", re.Error())
		case werr != nil:
			return c.fail(ErrUnavailable, werr, "Check the server's url and TLS settings, and that the server is up.", "while %s: %s", doing, werr.Error())
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return c.fail(ErrUnavailable, nil, "Check the credential configured for the server and the hosts it is bound to.", "the server answered HTTP %d %s while %s", status, http.StatusText(status), doing)
		case status != 0:
			return c.fail(ErrUnavailable, nil, "Check the server's url.", "the server answered HTTP %d %s while %s", status, http.StatusText(status), doing)
		}
	}
	var re *egress.RefusedError
	if errors.As(err, &re) {
		return c.fail(ErrUnavailable, re, re.Hint(), "%s", re.Error())
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != codeRejectedByTransport {
		return c.fail(ErrToolFailed, nil, "Check the tool's name and arguments against the server's tool list.", "the server refused the call: %s", excerpt(we.Message, 300, c.secrets()))
	}
	if c.proc != nil && c.proc.exitedByItself() {
		return c.fail(ErrExited, nil, "Run the server's command by hand to see what it writes to stderr.", "the server exited (%s) while %s", c.proc.exitStatus(), doing)
	}
	return c.fail(ErrUnavailable, nil, "Check that the server speaks MCP and is up.", "the session failed while %s: %s", doing, excerpt(err.Error(), 300, c.secrets()))
}

func (c *call) tooLarge() *Error {
	return c.fail(ErrTooLarge, nil, "Ask the tool for less data (its arguments), or raise the size limit.", "the result exceeds the size limit of %d bytes", c.maxBytes)
}

// records turns a tool's result into a reader of its records.
func (c *call) records(res *mcp.CallToolResult) (profiler.RecordReader, error) {
	var texts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if res.IsError {
		msg := "(no text)"
		if len(texts) > 0 {
			msg = excerpt(strings.Join(texts, " "), 300, c.secrets())
		}
		return nil, c.fail(ErrToolFailed, nil, "Check the tool's arguments; the message is the tool's own.", "the tool reported an error: %s", msg)
	}
	var raw []byte
	switch {
	case res.StructuredContent != nil:
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, c.fail(ErrNotRecords, nil, "", "the structured content cannot be read as JSON")
		}
		raw = b
	case len(texts) == 1:
		raw = []byte(texts[0])
	case len(texts) == 0:
		return nil, c.fail(ErrNotRecords, nil, "Choose a tool that returns JSON.", "the result has neither structured content nor text")
	default:
		return nil, c.fail(ErrNotRecords, nil, "Choose a tool that returns its records as one JSON text or as structured content.", "the result has %d text blocks and no structured content; one JSON text is needed", len(texts))
	}
	if int64(len(raw)) > c.maxBytes {
		return nil, c.tooLarge()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	err := dec.Decode(&doc)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		return nil, c.fail(ErrNotRecords, nil, "Choose a tool, or arguments, that return JSON records.", "the text content is not JSON (it begins %q)", excerpt(string(raw), 40, c.secrets()))
	}
	items, msg := recordsIn(doc, c.RecordsPath)
	if msg != "" {
		return nil, c.fail(ErrNotRecords, nil, "Set records_path to the array of records in the result.", "%s", msg)
	}
	for i, it := range items {
		if _, ok := it.(map[string]any); !ok {
			return nil, c.fail(ErrNotRecords, nil, "Set records_path to an array of objects, one per record.", "record %d is %s, not an object", i, jsonKind(it))
		}
	}
	name := c.Name
	if name == "" {
		name = c.Tool
	}
	return profiler.NewRecordsReader(name, "mcp-json", items), nil
}

// recordsIn follows path (dot-separated keys) in doc to an array. With no
// path, doc must be an array or an object with exactly one array member.
// It returns a message saying what is wrong instead of the array.
func recordsIn(doc any, path string) ([]any, string) {
	at := "the result"
	if path != "" {
		for _, key := range strings.Split(path, ".") {
			obj, ok := doc.(map[string]any)
			if !ok {
				return nil, fmt.Sprintf("records_path %q: %s is %s, not an object with key %q", path, at, jsonKind(doc), key)
			}
			if doc, ok = obj[key]; !ok {
				return nil, fmt.Sprintf("records_path %q: %s has no key %q (its keys: %s)", path, at, key, strings.Join(slices.Sorted(maps.Keys(obj)), ", "))
			}
			at = fmt.Sprintf("%q", key)
		}
	}
	if arr, ok := doc.([]any); ok {
		return arr, ""
	}
	obj, ok := doc.(map[string]any)
	if !ok || path != "" {
		where := "the result"
		if path != "" {
			where = fmt.Sprintf("records_path %q", path)
		}
		return nil, fmt.Sprintf("%s is %s, not an array of records", where, jsonKind(doc))
	}
	var arrays []string
	for k, v := range obj {
		if _, ok := v.([]any); ok {
			arrays = append(arrays, k)
		}
	}
	if len(arrays) == 1 {
		return obj[arrays[0]].([]any), ""
	}
	slices.Sort(arrays)
	if len(arrays) == 0 {
		return nil, "the result is an object holding no array of records"
	}
	return nil, fmt.Sprintf("the result is an object holding several arrays (%s); set records_path to one", strings.Join(arrays, ", "))
}

// jsonKind names a decoded JSON value's kind with its article.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a value"
}
