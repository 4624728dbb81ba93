package resources

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/mcpapps"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// hookSubscriptions records resources/subscribe and resources/unsubscribe
// per session through srv's hooks (installing a Hooks value when srv has
// none), and forgets a session's subscriptions when it ends.
func (r *Registry) hookSubscriptions() {
	hooks := r.srv.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(r.srv)
	}
	// A subscription to a resource the principal may not read is refused
	// before mcp-go accepts it; the principal is kept with each
	// subscription, and each update goes only to those who may read it.
	hooks.AddOnRequestInitialization(r.refuseUnreadable)
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		if res != nil {
			res.Resources = slices.DeleteFunc(res.Resources, func(x mcp.Resource) bool { return r.mayRead(ctx, x.URI) != nil })
		}
	})
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil && strings.HasPrefix(req.Params.URI, WorkspacesURI) && r.mayRead(ctx, req.Params.URI) == nil {
			r.subscribe(s.SessionID(), req.Params.URI, notifierFrom(ctx), r.subscriberOf(ctx, []string{req.Params.URI}))
		}
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			r.unsubscribe(s.SessionID(), req.Params.URI)
		}
	})
	// What a session is told follows the principal of its latest request,
	// whose token may carry other groups than an earlier one's, or no
	// longer make it an org admin. A session of a transport that delivers
	// notifications itself is told of the changes to its resources/list
	// from its first request on (see Broadcaster).
	hooks.AddBeforeAny(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any) {
		s := server.ClientSessionFromContext(ctx)
		if s == nil {
			return
		}
		who := principalOf(ctx)
		r.actAs(s.SessionID(), who)
		if b, ok := notifierFrom(ctx).(Broadcaster); ok {
			r.watchList(s.SessionID(), who, b)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		r.dropSession(s.SessionID())
	})
	// Protocol 2026-07-28 replaces resources/subscribe with a long-lived
	// subscriptions/listen request; its stream's session is not registered
	// with the server, so updates go straight to its notification channel.
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		s := server.ClientSessionFromContext(ctx)
		if s == nil || id == nil {
			return
		}
		uris := slices.DeleteFunc(slices.Clone(req.Params.Notifications.ResourceSubscriptions), func(uri string) bool {
			return !strings.HasPrefix(uri, WorkspacesURI) || r.mayRead(ctx, uri) != nil
		})
		who := r.subscriberOf(ctx, uris)
		r.subsMu.Lock()
		defer r.subsMu.Unlock()
		for _, uri := range uris {
			r.listens = append(r.listens, listen{session: s, id: id, uri: uri, who: who})
		}
	})
	hooks.AddAfterSubscriptionsListen(func(ctx context.Context, id any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		r.endListen(server.ClientSessionFromContext(ctx), id)
	})
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			r.endListen(server.ClientSessionFromContext(ctx), id)
		}
	})
}

// listen is a resource subscription of an open subscriptions/listen stream.
type listen struct {
	session server.ClientSession
	id      any // the request's JSON-RPC ID, which tags its notifications
	uri     string
	who     subscriber
}

// subscriber is who made a subscription: the principal of its request, if
// it carried one (none is the local owner). For a subscription to
// memory://workspaces it also holds the digest of the list as the
// subscriber last read it (see listReaders).
type subscriber struct {
	p    access.Principal
	ok   bool
	list listDigest
}

// listDigest is the SHA-256 of memory://workspaces as one principal reads
// it; the zero value is "not read".
type listDigest [sha256.Size]byte

func principalOf(ctx context.Context) subscriber {
	p, ok := access.FromContext(ctx)
	return subscriber{p: p, ok: ok}
}

// byPrincipal returns read, computed once per principal: the subscribers
// of one principal read alike.
func byPrincipal(read func(subscriber) listDigest) func(subscriber) listDigest {
	done := map[string]listDigest{}
	return func(who subscriber) listDigest {
		key := fmt.Sprint(who.ok, who.p)
		d, ok := done[key]
		if !ok {
			d = read(who)
			done[key] = d
		}
		return d
	}
}

// subscriberOf returns who subscribes to uris in ctx; when uris include
// memory://workspaces, with the list as they read it now.
func (r *Registry) subscriberOf(ctx context.Context, uris []string) subscriber {
	who := principalOf(ctx)
	if slices.Contains(uris, WorkspacesURI) {
		who.list = r.readList(who)
	}
	return who
}

// readList returns the digest of memory://workspaces as who reads it, or
// the zero digest when it cannot be read.
func (r *Registry) readList(who subscriber) listDigest {
	text, err := r.workspacesText(who.context())
	if err != nil {
		r.log.Warn("read the workspace list for a subscriber", logKeyErr, err)
		return listDigest{}
	}
	return sha256.Sum256([]byte(text))
}

// context returns a context acting for the subscriber.
func (s subscriber) context() context.Context {
	if !s.ok {
		return context.Background()
	}
	return access.WithPrincipal(context.Background(), s.p)
}

// pathOf returns the memory path whose readability decides access to a
// resource URI: the workspace's directory for a per-workspace resource or
// an artifact view, the workspaces directory for the list; ok is false for
// a URI that is neither.
func pathOf(uri string) (string, bool) {
	if uri == WorkspacesURI {
		return workspacesDir, true
	}
	if t, ok := parseURI(uri); ok {
		return workspacesDir + "/" + t.workspace, true
	}
	if ws, _, ok := mcpapps.ParseViewURI(uri); ok {
		return workspacesDir + "/" + ws, true
	}
	return "", false
}

// mayRead reports whether the principal in ctx may read the resource uri:
// nil, or the store's refusal, which names the role needed. URIs that are
// not selmem's are left to their handlers.
func (r *Registry) mayRead(ctx context.Context, uri string) error {
	p, ok := pathOf(uri)
	if !ok {
		return nil
	}
	return r.store.Check(ctx, access.ActRead, p)
}

// refuseUnreadable refuses resources/subscribe and subscriptions/listen
// for a resource the principal may not read, with the refusal's text.
func (r *Registry) refuseUnreadable(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI           string `json:"uri"`
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil // mcp-go answers malformed requests itself
	}
	var uris []string
	switch mcp.MCPMethod(m.Method) {
	case mcp.MethodResourcesSubscribe:
		uris = []string{m.Params.URI}
	case mcp.MethodSubscriptionsListen:
		uris = m.Params.Notifications.ResourceSubscriptions
	}
	for _, uri := range uris {
		if err := r.mayRead(ctx, uri); err != nil {
			return err
		}
	}
	return nil
}

// endListen forgets the subscriptions of a closed subscriptions/listen stream.
func (r *Registry) endListen(s server.ClientSession, id any) {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	r.listens = slices.DeleteFunc(r.listens, func(l listen) bool {
		return l.session == s && fmt.Sprint(l.id) == fmt.Sprint(id)
	})
}

// listeners returns the open listen streams subscribed to uri.
func (r *Registry) listeners(uri string) []listen {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	var out []listen
	for _, l := range r.listens {
		if l.uri == uri {
			out = append(out, l)
		}
	}
	return out
}

// Notifier delivers a notification to one session. A transport on which
// MCPServer.SendNotificationToSpecificClient is not reliable puts one in
// the context of each request it serves (WithNotifier); the updates of the
// subscriptions made in such a request are sent through it. Changed calls
// Notify for every subscriber in turn, under the registry's lock, so a
// Notifier must not wait long for a client that stops reading.
type Notifier interface {
	Notify(sessionID string, n mcp.JSONRPCNotification) error
}

// A Broadcaster is a Notifier that also delivers resources/list_changed,
// which mcp-go's own delivery loses on its transport and would send to
// every session. The registry sends it to the sessions whose listing
// changed; the transport must not deliver mcp-go's copies.
type Broadcaster interface {
	Notifier
	// NotifyEach sends n to each of sessions, returning once it is
	// written to all of them or after the transport's wait.
	NotifyEach(sessions []string, n mcp.JSONRPCNotification)
}

type notifierKey struct{}

// WithNotifier returns ctx carrying n, for the transport of a request.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

// notifierFrom returns the Notifier ctx carries, or nil.
func notifierFrom(ctx context.Context) Notifier {
	n, _ := ctx.Value(notifierKey{}).(Notifier)
	return n
}

func (r *Registry) subscribe(session, uri string, n Notifier, who subscriber) {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	if n != nil {
		r.notifiers[session] = n
	}
	if r.subs[uri] == nil {
		r.subs[uri] = map[string]subscriber{}
	}
	r.subs[uri][session] = who
}

func (r *Registry) unsubscribe(session, uri string) {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	delete(r.subs[uri], session)
	if len(r.subs[uri]) == 0 {
		delete(r.subs, uri)
	}
}

// actAs makes who the principal of session's subscriptions and tracked
// listing, keeping what they were last told.
func (r *Registry) actAs(session string, who subscriber) {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	for _, ss := range r.subs {
		if old, ok := ss[session]; ok {
			now := who
			now.list = old.list
			ss[session] = now
		}
	}
	if v, ok := r.views[session]; ok {
		v.who = who
		r.views[session] = v
	}
}

func (r *Registry) dropSession(session string) {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	delete(r.notifiers, session)
	delete(r.views, session)
	for uri, ss := range r.subs {
		delete(ss, session)
		if len(ss) == 0 {
			delete(r.subs, uri)
		}
	}
}

// subscribers returns the sessions subscribed to uri whose principal may
// read it now, sorted.
func (r *Registry) subscribers(uri string) []string {
	r.subsMu.Lock()
	subs := maps.Clone(r.subs[uri])
	r.subsMu.Unlock()
	var out []string
	for _, s := range slices.Sorted(maps.Keys(subs)) {
		if r.mayRead(subs[s].context(), uri) == nil {
			out = append(out, s)
		}
	}
	return out
}

// send sends one notification to session, through the Notifier of its
// transport when it has one.
func (r *Registry) send(session string, method string, params map[string]any) error {
	r.subsMu.Lock()
	n := r.notifiers[session]
	r.subsMu.Unlock()
	if n == nil {
		return r.srv.SendNotificationToSpecificClient(session, method, params)
	}
	return n.Notify(session, mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	})
}

// change is what one written path affects.
type change struct {
	all       bool     // every workspace: rescan all, everything updated
	workspace string   // the workspace to rescan; "" when none
	whole     bool     // the workspace directory itself: all its resources updated
	uris      []string // resources updated
}

// classify maps a written virtual path to the resources it affects. Paths
// outside the workspaces' resource files (notes, org, users) affect
// nothing.
func classify(p string) change {
	p = path.Clean("/" + strings.TrimPrefix(p, "/"))
	if p == memstore.Root || p == workspacesDir {
		return change{all: true}
	}
	rest, ok := strings.CutPrefix(p, workspacesDir+"/")
	if !ok {
		return change{}
	}
	parts := strings.Split(rest, "/")
	ws := parts[0]
	ctxURI := ResourceURI(ws, KindContext)
	if len(parts) == 1 {
		return change{workspace: ws, whole: true, uris: []string{WorkspacesURI}}
	}
	switch parts[1] {
	case fileWorkspace, "workspace.yml":
		return change{workspace: ws, uris: []string{WorkspacesURI, ctxURI}}
	case fileTask:
		return change{workspace: ws, uris: []string{ResourceURI(ws, KindTask), ctxURI}}
	case fileOutput:
		return change{workspace: ws, uris: []string{ResourceURI(ws, KindOutput), ctxURI}}
	case dirTools:
		return change{workspace: ws, uris: []string{ResourceURI(ws, KindTools), ctxURI}}
	case dirArtifacts:
		c := change{workspace: ws, uris: []string{ResourceURI(ws, KindArtifacts)}}
		if len(parts) >= 3 {
			c.uris = append(c.uris, mcpapps.ViewURI(ws, parts[2])) // the artifact's MCP Apps view
		}
		return c
	case dirSchemas:
		c := change{workspace: ws, uris: []string{ResourceURI(ws, KindSchemas), ctxURI}}
		if len(parts) == 2 {
			c.whole = true // the schemas directory: every profile (approximated by the whole workspace)
		} else if len(parts) == 3 && path.Ext(parts[2]) == ".md" {
			c.uris = append(c.uris, SchemaURI(ws, strings.TrimSuffix(parts[2], ".md")))
		}
		return c
	}
	return change{}
}

// Changed tells clients that the memory paths (virtual /memories/... paths)
// were written. It sends notifications/resources/updated to the sessions
// subscribed to an affected resource URI, and keeps resources/list in step
// with the store: when a listed resource appears, disappears or changes its
// description (a workspace created or deleted, a schema profile or tool
// added), mcp-go sends notifications/resources/list_changed. Paths outside
// the workspaces' resource files (notes, artifacts, org, users) change
// nothing. Changed reads the store; call it after the write returned.
func (r *Registry) Changed(paths []string) {
	// Notifications are computed by the server itself, for every subscriber.
	ctx := context.Background()
	r.mu.Lock()
	defer r.mu.Unlock()

	updated := map[string]bool{}
	rescan := map[string]bool{} // workspace -> every resource of it updated
	all := false
	for _, p := range paths {
		c := classify(p)
		all = all || c.all
		if c.workspace != "" {
			rescan[c.workspace] = rescan[c.workspace] || c.whole
		}
		for _, u := range c.uris {
			updated[u] = true
		}
	}
	if all {
		names, err := listWorkspaces(ctx, r.store)
		if err != nil {
			r.log.Error("list workspaces", logKeyErr, err)
		}
		for _, n := range names {
			rescan[n] = true
		}
		for n := range r.listed {
			rescan[n] = true
		}
		updated[WorkspacesURI] = true
	}

	var removed []string
	var added []server.ServerResource
	for _, ws := range slices.Sorted(maps.Keys(rescan)) {
		old := r.listed[ws]
		var now map[string]mcp.Resource
		files, err := scanWorkspace(ctx, r.store, ws)
		switch {
		case err == nil:
			ws, lerr := loadFiles(ctx, r.store, files, r.now())
			if lerr != nil {
				r.log.Error("load workspace", logKeyWorkspace, files.name, logKeyErr, lerr)
				continue
			}
			now = r.listing(ws)
		case errors.Is(err, memstore.ErrNotFound), errors.Is(err, memstore.ErrRejected):
			// gone, or never a workspace
		default:
			r.log.Error("scan workspace", logKeyWorkspace, ws, logKeyErr, err)
			continue
		}
		if (old == nil) != (now == nil) {
			updated[WorkspacesURI] = true
		}
		for uri := range old {
			if _, ok := now[uri]; !ok {
				removed = append(removed, uri)
			}
			if rescan[ws] {
				updated[uri] = true
			}
		}
		for uri, res := range now {
			if prev, ok := old[uri]; !ok || !reflect.DeepEqual(prev, res) {
				added = append(added, server.ServerResource{Resource: res, Handler: r.handleRead})
			}
			if rescan[ws] {
				updated[uri] = true
			}
		}
		if now == nil {
			delete(r.listed, ws)
		} else {
			r.listed[ws] = now
		}
	}
	// mcp-go sends resources/list_changed for each call that changes the
	// list; the Broadcasters send one, to the sessions whose listing
	// changed.
	if len(removed) > 0 {
		r.srv.DeleteResources(removed...)
	}
	if len(added) > 0 {
		r.srv.AddResources(added...)
	}
	if len(rescan) > 0 {
		r.tellListChanged()
	}
	r.notify(slices.Sorted(maps.Keys(updated)))
}

// A view is what resources/list shows one session of a Broadcaster's
// transport, as a digest, and where to tell it that it changed.
type view struct {
	who subscriber
	b   Broadcaster
	d   listDigest
}

// watchList starts tracking the listing of a session of b, as who reads it
// now, unless it is tracked already.
func (r *Registry) watchList(session string, who subscriber, b Broadcaster) {
	r.subsMu.Lock()
	_, known := r.views[session]
	r.subsMu.Unlock()
	if known {
		return
	}
	r.mu.Lock()
	d := r.viewDigest(who)
	r.mu.Unlock()
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	if _, known := r.views[session]; !known {
		r.views[session] = view{who: who, b: b, d: d}
	}
}

// viewDigest returns the digest of the resources r.listed holds that who
// may read, or the zero digest when the ACLs cannot be read. Call it with
// r.mu held.
func (r *Registry) viewDigest(who subscriber) listDigest {
	f, err := r.store.ReadableFilter(who.context())
	if err != nil {
		r.log.Warn("read the ACLs for a session's resource list", logKeyErr, err)
		return listDigest{}
	}
	h := sha256.New()
	for _, ws := range slices.Sorted(maps.Keys(r.listed)) {
		if _, ok := slices.BinarySearch(f.Workspaces, ws); !f.All && !ok {
			continue
		}
		for _, uri := range slices.Sorted(maps.Keys(r.listed[ws])) {
			b, _ := json.Marshal(r.listed[ws][uri])
			h.Write(append(b, '\n'))
		}
	}
	var d listDigest
	h.Sum(d[:0])
	return d
}

// tellListChanged sends notifications/resources/list_changed to the
// tracked sessions whose listing differs from the one they were last told
// of, and records the new listings. A workspace created or deleted out of
// a session's sight tells it nothing; a role granted or taken away tells
// it, though no resource was added or removed. Call it with r.mu held.
func (r *Registry) tellListChanged() {
	r.subsMu.Lock()
	views := maps.Clone(r.views)
	r.subsMu.Unlock()
	digest := byPrincipal(r.viewDigest)
	tell := map[Broadcaster][]string{}
	for _, s := range slices.Sorted(maps.Keys(views)) {
		v := views[s]
		d := digest(v.who)
		if d == (listDigest{}) || d == v.d {
			delete(views, s)
			continue
		}
		v.d = d
		views[s] = v
		tell[v.b] = append(tell[v.b], s)
	}
	r.subsMu.Lock()
	for s, v := range views {
		if _, ok := r.views[s]; ok {
			r.views[s] = v
		}
	}
	r.subsMu.Unlock()
	n := mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: mcp.MethodNotificationResourcesListChanged},
	}
	for b, sessions := range tell {
		b.NotifyEach(sessions, n)
	}
}

// listReaders returns the sessions and listen streams subscribed to
// memory://workspaces whose reading of it differs from the one they were
// last told of (or subscribed with), and records their new readings. Each
// reader sees only the workspaces it has a role in, so a workspace created,
// deleted or retitled out of its sight tells it nothing.
func (r *Registry) listReaders() (sessions []string, listens []listen) {
	r.subsMu.Lock()
	subs := maps.Clone(r.subs[WorkspacesURI])
	ls := slices.DeleteFunc(slices.Clone(r.listens), func(l listen) bool { return l.uri != WorkspacesURI })
	r.subsMu.Unlock()

	read := byPrincipal(r.readList)
	changed := func(who *subscriber) bool {
		d := read(*who)
		if d == (listDigest{}) || d == who.list {
			return false
		}
		who.list = d
		return true
	}
	for _, s := range slices.Sorted(maps.Keys(subs)) {
		if who := subs[s]; changed(&who) {
			subs[s] = who
			sessions = append(sessions, s)
		}
	}
	for i := range ls {
		if changed(&ls[i].who) {
			listens = append(listens, ls[i])
		}
	}

	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	for _, s := range sessions {
		if _, ok := r.subs[WorkspacesURI][s]; ok {
			r.subs[WorkspacesURI][s] = subs[s]
		}
	}
	for i, l := range r.listens {
		for _, n := range listens {
			if l.uri == WorkspacesURI && l.session == n.session && fmt.Sprint(l.id) == fmt.Sprint(n.id) {
				r.listens[i].who = n.who
			}
		}
	}
	return sessions, listens
}

// notify sends notifications/resources/updated for each URI to the sessions
// subscribed to it, forgetting sessions that are gone.
func (r *Registry) notify(uris []string) {
	for _, uri := range uris {
		var sessions []string
		var listens []listen
		if uri == WorkspacesURI {
			sessions, listens = r.listReaders()
		} else {
			sessions, listens = r.subscribers(uri), r.listeners(uri)
		}
		for _, s := range sessions {
			err := r.send(s, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
			switch {
			case errors.Is(err, server.ErrSessionNotFound):
				r.dropSession(s)
			case err != nil:
				r.log.Warn("send resources/updated", logKeyURI, uri, logKeySession, s, logKeyErr, err)
			}
		}
		for _, l := range listens {
			if r.mayRead(l.who.context(), uri) != nil {
				continue
			}
			n := mcp.JSONRPCNotification{
				JSONRPC: mcp.JSONRPC_VERSION,
				Notification: mcp.Notification{
					Method: mcp.MethodNotificationResourceUpdated,
					Params: mcp.NotificationParams{
						Meta:             map[string]any{mcp.MetaKeySubscriptionID: l.id},
						AdditionalFields: map[string]any{"uri": uri},
					},
				},
			}
			select {
			case l.session.NotificationChannel() <- n:
			default:
				r.log.Warn("send resources/updated: notification queue full", logKeyURI, uri, logKeySession, l.session.SessionID())
			}
		}
	}
}

// listing returns the resources a workspace lists, by URI: its context, and
// the task, output, tools, schemas and each schema that are in force (as of
// the last Changed: an item that expires later stays listed and reads as not
// found).
func (r *Registry) listing(w Workspace) map[string]mcp.Resource {
	ws := w.Name
	title := w.Title
	if title == "" {
		title = ws
	}
	out := map[string]mcp.Resource{}
	add := func(uri, name, title, desc, mime string) {
		out[uri] = mcp.NewResource(uri, name, mcp.WithResourceTitle(title),
			mcp.WithResourceDescription(desc), mcp.WithMIMEType(mime))
	}
	ctxDesc := fmt.Sprintf("Session context of workspace %s: task specifications, output constraints, tool configurations and data schemas in one prompt of at most %d tokens.", ws, r.budget)
	if s := summary(workspaceMeta{w.Title, w.Description}); s != "" {
		ctxDesc = s + ". " + ctxDesc
	}
	add(ResourceURI(ws, KindContext), ws+"/context", title+": session context", ctxDesc, mimeMarkdown)
	if w.Task != nil {
		add(ResourceURI(ws, KindTask), ws+"/task", title+": task specifications",
			"Task specifications of workspace "+ws+": domain rules, format preferences, quality rules.", mimeMarkdown)
	}
	if w.Output != nil {
		add(ResourceURI(ws, KindOutput), ws+"/output", title+": output constraints",
			"Output constraints of workspace "+ws+": contracts between artifact and runtime.", mimeMarkdown)
	}
	if len(w.Tools) > 0 {
		add(ResourceURI(ws, KindTools), ws+"/tools", title+": tool configurations",
			fmt.Sprintf("Tool configurations of workspace %s: %s.", ws, strings.Join(names(w.Tools), ", ")), mimeYAML)
	}
	if len(w.Schemas) > 0 {
		add(ResourceURI(ws, KindSchemas), ws+"/schemas", title+": data schemas",
			fmt.Sprintf("Data schema profiles of workspace %s: %s.", ws, strings.Join(names(w.Schemas), ", ")), mimeMarkdown)
	}
	for _, s := range w.Schemas {
		desc := fmt.Sprintf("Statistical profile of data source %s in workspace %s.", s.Name, ws)
		if s.Name == RelationshipsSource {
			desc = fmt.Sprintf("Relationships (join keys) between the data sources of workspace %s.", ws)
		}
		add(s.URI, ws+"/schemas/"+s.Name, title+": schema "+s.Name, desc, mimeMarkdown)
	}
	return out
}

// names returns the names of items.
func names(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Name
	}
	return out
}
