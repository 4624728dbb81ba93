package refresh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// Name is the tool name recorded on a refresh's commit.
const Name = "refresh_artifact"

// DefaultMaxSnapshotBytes caps the data of one snapshot by default.
const DefaultMaxSnapshotBytes = 512 << 20

// Options configure a Refresher.
type Options struct {
	// Access is what connectors may read: data roots, the outbound
	// policy with its credentials and connections.
	Access schemas.Access
	// MCP builds the sources of mcp connectors; nil refuses them.
	MCP MCPSources
	// MaxSnapshotBytes caps the data of one refresh (0: the default).
	MaxSnapshotBytes int64
	// MaxViewBytes caps a view's program with its data (0: the default);
	// beyond it the view leaves the data out (see View).
	MaxViewBytes int64
	// ArtifactsURL is where artifacts are served over HTTP, e.g.
	// http://localhost:8080/artifacts/; "" when unknown.
	ArtifactsURL string
	// Author is recorded on the commits ("" the store's default).
	Author string
	// Changed, when set, is called after a refresh committed, with the
	// virtual paths it changed.
	Changed func(paths []string)
	// Recorded, when set, is called with the status of every run once
	// it is recorded, whatever its outcome (e.g. for metrics). A refresh
	// refused before it starts is no run: it is neither recorded nor
	// reported.
	Recorded func(Status)
	// Progress, when set, is told the bytes a refresh has loaded so far
	// and the source's size (0 when unknown), after each batch.
	Progress func(read, total int64)
	// Logger receives runs that failed; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Refresher refreshes artifacts of one memory.
type Refresher struct {
	store *memstore.Store
	snaps *Snapshots
	opts  Options
	log   *slog.Logger
	views viewCache
}

// New returns a Refresher over store, keeping data in snaps.
func New(store *memstore.Store, snaps *Snapshots, opts *Options) *Refresher {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxSnapshotBytes <= 0 {
		o.MaxSnapshotBytes = DefaultMaxSnapshotBytes
	}
	if o.MaxViewBytes <= 0 {
		o.MaxViewBytes = DefaultMaxViewBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Refresher{store: store, snaps: snaps, opts: o, log: log, views: viewCache{max: o.MaxViewBytes}}
}

// OnProgress sets the function told how far loading a refresh's data has
// come (replacing Options.Progress); the command line draws it as a
// progress bar. Call it before the Refresher is used.
func (r *Refresher) OnProgress(fn func(read, total int64)) { r.opts.Progress = fn }

// OnChanged sets the function told, after each refresh that committed,
// which virtual paths changed (replacing Options.Changed). Call it before
// the refresher is used.
func (r *Refresher) OnChanged(fn func(paths []string)) { r.opts.Changed = fn }

// OnRecorded sets Options.Recorded. Call it before the first refresh.
func (r *Refresher) OnRecorded(fn func(Status)) { r.opts.Recorded = fn }

// Snapshots is the refresher's snapshot store.
func (r *Refresher) Snapshots() *Snapshots { return r.snaps }

// Request is one refresh.
type Request struct {
	Workspace string
	Artifact  string
	// Source, when set, names another connector (tools/<Source>.yaml) to
	// load the data through; on success the binding names it from then on.
	Source string
	// Rebind replaces the original column set with the new data's
	// columns instead of checking against it: for an artifact that was
	// regenerated against new columns.
	Rebind bool
	// Trigger says who asked: tool, cli, schedule or watch.
	Trigger string
}

// Timings are the wall times of a refresh's phases, in milliseconds.
type Timings struct {
	Load     float64 `json:"load_ms"`
	Check    float64 `json:"check_ms"`
	Snapshot float64 `json:"snapshot_ms"`
	Profile  float64 `json:"profile_ms"`
	Commit   float64 `json:"commit_ms"`
	Total    float64 `json:"total_ms"`
}

// Result is a refresh that succeeded.
type Result struct {
	Outcome        string   // OutcomeRefreshed or OutcomeUnchanged
	Binding        *Binding // as committed
	Commit         string   // "" when unchanged
	Changed        []string // virtual paths the commit changed
	Rows           int64
	Columns        []Column
	ColumnsAdded   []string // columns beyond the original set
	PreviousSHA256 string
	Timings        Timings
	Warnings       []string // e.g. a bound column with no values this time
	// Lint lists literal copies of the data in the program (file:line:
	// kind: message). The program is linted when it changed since the
	// last refresh; otherwise the last findings are repeated.
	Lint       []string
	programKey string
}

// Break is how new data diverges from an artifact's original columns.
type Break struct {
	Missing []string     `json:"missing"`      // original columns the data lacks
	Changed []TypeChange `json:"type_changes"` // original columns whose type changed incompatibly
	Columns []Column     `json:"new_columns"`  // the new data's columns
}

// TypeChange is an original column whose type no longer fits.
type TypeChange struct {
	Column string `json:"column"`
	Was    string `json:"was"`
	Now    string `json:"now"`
}

// IncompatibleError is a refresh refused because the data no longer fits
// the artifact: nothing was changed, and the artifact must be regenerated.
type IncompatibleError struct {
	Workspace, Artifact string
	Break               Break
	Original            []Column
}

func (e *IncompatibleError) Error() string {
	var parts []string
	if len(e.Break.Missing) > 0 {
		parts = append(parts, "missing columns "+strings.Join(e.Break.Missing, ", "))
	}
	for _, c := range e.Break.Changed {
		parts = append(parts, fmt.Sprintf("%s changed from %s to %s", c.Column, c.Was, c.Now))
	}
	return fmt.Sprintf("Error: the new data no longer fits artifact %s/%s (%s); nothing was changed. "+
		"The artifact must be regenerated against the new columns: use the regenerate_artifact prompt.", e.Workspace, e.Artifact, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, memstore.ErrConflict) hold.
func (e *IncompatibleError) Is(target error) bool { return target == memstore.ErrConflict }

// check compares new columns with the original set.
func check(original, now []Column) (added []string, warnings []string, brk *Break) {
	have := map[string]string{}
	for _, c := range now {
		have[c.Name] = c.Type
	}
	b := Break{Columns: now}
	orig := map[string]bool{}
	for _, c := range original {
		orig[c.Name] = true
		t, ok := have[c.Name]
		switch {
		case !ok:
			b.Missing = append(b.Missing, c.Name)
		case !compatible(c.Type, t):
			b.Changed = append(b.Changed, TypeChange{Column: c.Name, Was: c.Type, Now: t})
		case t == TypeEmpty && c.Type != TypeEmpty:
			warnings = append(warnings, fmt.Sprintf("column %s has no values in this data", c.Name))
		}
	}
	for _, c := range now {
		if !orig[c.Name] {
			added = append(added, c.Name)
		}
	}
	if len(b.Missing) > 0 || len(b.Changed) > 0 {
		return added, warnings, &b
	}
	return added, warnings, nil
}

// ReadBinding reads an artifact's binding at HEAD.
func (r *Refresher) ReadBinding(ctx context.Context, ws, artifact string) (*Binding, error) {
	if err := CheckArtifact(ws, artifact); err != nil {
		return nil, err
	}
	data, _, err := r.store.Read(ctx, BindingPath(ws, artifact))
	if errors.Is(err, memstore.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("artifact %s/%s has no %s.", ws, artifact, BindingName),
			"Create the artifact with `selmem artifact init`, or write "+BindingPath(ws, artifact)+" naming its connector.")
	}
	if err != nil {
		return nil, err
	}
	return ParseBinding(data)
}

// ReadConnector reads a workspace's tool configuration as a connector.
func (r *Refresher) ReadConnector(ctx context.Context, ws, name string) (*Connector, error) {
	if err := checkName("connector", name); err != nil {
		return nil, err
	}
	data, _, err := r.store.Read(ctx, ConnectorPath(ws, name))
	if errors.Is(err, memstore.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("workspace %s has no connector %s (%s).", ws, name, ConnectorPath(ws, name)),
			"Write the tool configuration first: kind file (path), sql (connection, query), rest (url) or mcp (server, tool).")
	}
	if err != nil {
		return nil, err
	}
	return ParseConnector(name, data)
}

// LoadSource loads the data of a connector with the given parameters.
func (r *Refresher) LoadSource(ctx context.Context, ws, connector string, params map[string]string) (*Table, string, error) {
	c, err := r.ReadConnector(ctx, ws, connector)
	if err != nil {
		return nil, "", err
	}
	src, ref, err := c.Source(params, r.opts.Access, r.opts.MCP)
	if err != nil {
		return nil, "", err
	}
	t, err := load(ctx, src, r.opts.MaxSnapshotBytes, r.opts.Progress)
	if err != nil {
		return nil, "", err
	}
	return t, ref, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Refresh loads an artifact's data through its connector and, when it
// fits the artifact's original columns, stores the snapshot, updates the
// source's profile and the binding in one commit. It never calls a model.
// Data that does not fit returns an *IncompatibleError and changes
// nothing. Refreshes of one artifact run one at a time, across processes.
// A refresh refused before it starts (a principal who may not write the
// artifact, an artifact that does not exist) leaves nothing behind, not
// even its status.
func (r *Refresher) Refresh(ctx context.Context, req Request) (res Result, err error) {
	start := time.Now()
	if err := r.admit(ctx, req); err != nil {
		return Result{}, err
	}
	defer func() {
		res.Timings.Total = ms(time.Since(start))
		r.record(req, res, err, time.Since(start))
		if err == nil && res.Commit != "" && r.opts.Changed != nil {
			r.opts.Changed(res.Changed)
		}
	}()
	unlock, err := r.snaps.lockArtifact(ctx, req.Workspace, req.Artifact)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	b, err := r.ReadBinding(ctx, req.Workspace, req.Artifact)
	if err != nil {
		return Result{}, err
	}
	next := *b
	if req.Source != "" {
		next.Connector = req.Source
		if b.Schema == "" {
			next.Schema = b.Connector // the profile keeps its name
		}
	}

	t0 := time.Now()
	t, ref, err := r.LoadSource(ctx, req.Workspace, next.Connector, next.Parameters)
	if err != nil {
		return Result{}, err
	}
	defer t.Release()
	res.Timings.Load = ms(time.Since(t0))

	t0 = time.Now()
	if len(t.Columns) == 0 {
		return Result{}, invalid("the connector returned no columns.", "Check that the source holds a header and rows.")
	}
	if req.Rebind {
		next.Columns = nil
	}
	added, warnings, brk := check(next.Columns, t.Columns)
	res.Timings.Check = ms(time.Since(t0))
	if brk != nil {
		return Result{}, &IncompatibleError{Workspace: req.Workspace, Artifact: req.Artifact, Break: *brk, Original: b.Columns}
	}
	if len(next.Columns) == 0 {
		next.Columns = slices.Clone(t.Columns)
	}
	if err := next.check(); err != nil {
		return Result{}, err // e.g. a view aggregate over a column rebinding dropped
	}

	// The snapshot and the profile are independent: compute them at once.
	t0 = time.Now()
	type snapOut struct {
		sha  string
		size int64
		err  error
		d    time.Duration
	}
	snapc := make(chan snapOut, 1)
	go func() {
		s0 := time.Now()
		data := t.JSON()
		sha, err := r.snaps.Put(data)
		snapc <- snapOut{sha, int64(len(data)), err, time.Since(s0)}
	}()
	lintc := make(chan []string, 1)
	go func() { lintc <- r.lint(ctx, req, t, &res) }()
	tp, perr := profiler.Profile(ctx, replay{t}, &profiler.Options{Name: next.SchemaName(), Secrets: gate.HoldsSecret})
	res.Timings.Profile = ms(time.Since(t0))
	res.Lint = <-lintc
	so := <-snapc
	res.Timings.Snapshot = ms(so.d)
	if so.err != nil {
		return Result{}, so.err
	}
	if perr != nil {
		r.snaps.Discard(ctx, so.sha)
		return Result{}, perr
	}
	// The view's encoding of the new data is work for the processor, as
	// profiling is, while the commit below mostly waits for flushes: it
	// runs beside the commit, and is ready when the refresh returns.
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		if _, held := r.views.size(so.sha); !held {
			r.views.keep(so.sha, so.size, func() *Frame { return FrameOf(t) }, next.View)
		}
	}()
	defer func() { <-kept }() // before t is released
	res.Rows, res.Columns, res.ColumnsAdded, res.Warnings = t.Rows, t.Columns, added, warnings
	if b.Snapshot != nil {
		res.PreviousSHA256 = b.Snapshot.SHA256
	}
	if b.Snapshot != nil && b.Snapshot.SHA256 == so.sha && next.Connector == b.Connector && slices.Equal(next.Columns, b.Columns) {
		// The artifact's readers serve only a snapshot it retains. One
		// bound without being retained (an artifact copied or renamed, a
		// store that lost its records) is retained now that the
		// artifact's own data proved to be it.
		if r.snaps.retained(req.Workspace, req.Artifact, so.sha) != nil {
			if _, err := r.snaps.Retain(context.WithoutCancel(ctx), req.Workspace, req.Artifact, so.sha, ""); err != nil {
				r.snaps.Discard(context.WithoutCancel(ctx), so.sha)
				return Result{}, err
			}
		}
		res.Outcome, res.Binding = OutcomeUnchanged, b
		return res, nil
	}

	t0 = time.Now()
	// The snapshot is recorded as the artifact's newest while the commit
	// is prepared, and before the commit lands: the artifact's readers
	// serve only a snapshot it retains (Snapshots.Bound), so the binding
	// may not name one before. The snapshot bound so far stays retained
	// until the next refresh, and a commit that fails takes the record
	// back and the snapshot with it.
	var bound string
	if b.Snapshot != nil {
		bound = b.Snapshot.SHA256
	}
	type retained struct {
		added bool
		err   error
	}
	retainc := make(chan retained, 1)
	go func() {
		added, err := r.snaps.Retain(context.WithoutCancel(ctx), req.Workspace, req.Artifact, so.sha, bound)
		if errors.Is(err, errVanished) {
			if _, err = r.snaps.Put(t.JSON()); err == nil {
				added, err = r.snaps.Retain(context.WithoutCancel(ctx), req.Workspace, req.Artifact, so.sha, bound)
			}
		}
		retainc <- retained{added, err}
	}()
	next.Snapshot = &SnapshotRef{SHA256: so.sha, Rows: t.Rows, Columns: len(t.Columns), RefreshedAt: r.opts.Now().UTC().Truncate(time.Second), Source: ref}
	plan, files, err := schemas.Plan(ctx, r.store, req.Workspace, next.SchemaName(), tp, ref, 0)
	rt := <-retainc
	undo := func() {
		if rt.added && rt.err == nil {
			r.snaps.Release(context.WithoutCancel(ctx), req.Workspace, req.Artifact, so.sha)
			return
		}
		r.snaps.Discard(context.WithoutCancel(ctx), so.sha)
	}
	if err == nil {
		err = rt.err
	}
	if err != nil {
		undo()
		return Result{}, err
	}
	files[BindingPath(req.Workspace, req.Artifact)] = next.Marshal()
	w := &memstore.WriteOptions{Tool: Name, Source: memstore.SourceTrustedToolResult, Author: r.opts.Author}
	wr, err := r.store.Put(ctx, files, w)
	if err != nil {
		undo()
		return Result{}, err
	}
	res.Timings.Commit = ms(time.Since(t0))
	res.Outcome, res.Binding, res.Commit = OutcomeRefreshed, &next, wr.Commit
	res.Changed = append(slices.Clone(plan.Changed), BindingPath(req.Workspace, req.Artifact))
	slices.Sort(res.Changed)
	return res, nil
}

// admit refuses a refresh that may not start: names that are not valid, a
// principal who may not write the artifact (a viewer among them: a
// refresh loads data through the workspace's connector and writes the
// snapshot store and the workspace), and an artifact without a binding,
// e.g. in a workspace that does not exist. A refused refresh leaves
// nothing behind: no lock, no snapshot, no status, and it is not
// recorded (Options.Recorded is not called).
func (r *Refresher) admit(ctx context.Context, req Request) error {
	if err := CheckArtifact(req.Workspace, req.Artifact); err != nil {
		return err
	}
	if req.Source != "" {
		if err := checkName("source", req.Source); err != nil {
			return err
		}
	}
	if err := r.store.Check(ctx, access.ActWrite, ArtifactDir(req.Workspace, req.Artifact)); err != nil {
		return err
	}
	// The binding is read again under the artifact's lock; a binding
	// that is there but not valid is a run that failed, and recorded.
	if _, err := r.ReadBinding(ctx, req.Workspace, req.Artifact); errors.Is(err, memstore.ErrNotFound) || errors.Is(err, memstore.ErrDenied) {
		return err
	}
	return nil
}

// lint lints the artifact's program against t when the program changed
// since the last run, and repeats the last findings otherwise.
func (r *Refresher) lint(ctx context.Context, req Request, t *Table, res *Result) []string {
	files, key, err := r.Program(ctx, req.Workspace, req.Artifact)
	if err != nil || len(files) == 0 {
		return nil
	}
	res.programKey = key
	if last, ok := r.snaps.LastStatus(req.Workspace, req.Artifact); ok && last.ProgramKey == key {
		return last.Lint
	}
	return Lint(files, t)
}

// record keeps the run's status outside git.
func (r *Refresher) record(req Request, res Result, err error, d time.Duration) {
	if CheckArtifact(req.Workspace, req.Artifact) != nil {
		return
	}
	st := Status{Workspace: req.Workspace, Artifact: req.Artifact, Trigger: req.Trigger, At: r.opts.Now().UTC(), Millis: ms(d),
		Outcome: res.Outcome, Rows: res.Rows, Commit: res.Commit, ProgramKey: res.programKey, Lint: res.Lint}
	var inc *IncompatibleError
	switch {
	case errors.As(err, &inc):
		st.Outcome, st.Break, st.Message = OutcomeIncompatible, &inc.Break, err.Error()
	case err != nil:
		st.Outcome, st.Message = OutcomeFailed, err.Error()
		r.log.Warn("refresh failed", "workspace", req.Workspace, "artifact", req.Artifact, "trigger", req.Trigger, "err", err)
	}
	if err := r.snaps.SaveStatus(st); err != nil {
		r.log.Warn("refresh: saving the run's status failed", "err", err)
	}
	if r.opts.Recorded != nil {
		r.opts.Recorded(st)
	}
}
