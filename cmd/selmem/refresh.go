package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/refresh"
	"github.com/selmem/selmem/server"
)

func (a *app) refreshCommand() *cobra.Command {
	var source string
	var rebind, status, asJSON bool
	cmd := &cobra.Command{
		Use:   "refresh WORKSPACE ARTIFACT | refresh --status",
		Short: "Reload an artifact's data through its connector, without a model; --status lists the last runs",
		Long: `Reload an artifact's data through the connector its binding.yaml names.

When the new data still has every column the artifact was generated against
with a compatible type, the snapshot (stored under $SELMEM_HOME/data, outside
git), the source's profile and binding.yaml are committed once. When it does
not fit, nothing changes, the missing columns and type changes are printed,
and the exit code is 3: the artifact must be regenerated (then refresh with
--rebind). Connectors read only what the profile settings allow
(profile.data_roots, allowed_hosts, credentials, connections), as over MCP.

--status lists every artifact with its last run, outcome and next scheduled
run.`,
		Args: args(func(cmd *cobra.Command, argv []string) error {
			if status {
				return cobra.NoArgs(cmd, argv)
			}
			return cobra.ExactArgs(2)(cmd, argv)
		}),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				rf, err := server.NewRefresher(s.Store, a.cfg, nil)
				if err != nil {
					return err
				}
				if status {
					return a.printStatus(cmd.Context(), rf, asJSON)
				}
				b := a.newBar("loading "+argv[0]+"/"+argv[1], true)
				if b != nil {
					rf.OnProgress(b.set)
				}
				res, err := rf.Refresh(cmd.Context(), refresh.Request{Workspace: argv[0], Artifact: argv[1], Source: source, Rebind: rebind, Trigger: "cli"})
				b.finish()
				var inc *refresh.IncompatibleError
				if errors.As(err, &inc) {
					if asJSON {
						a.printJSON(map[string]any{"outcome": refresh.OutcomeIncompatible, "break": inc.Break})
					}
					return exitError{code: exitIncompatible, err: err}
				}
				if err != nil {
					return err
				}
				if asJSON {
					return a.printJSON(map[string]any{"outcome": res.Outcome, "commit": res.Commit, "rows": res.Rows, "columns": res.Columns,
						"columns_added": res.ColumnsAdded, "snapshot": res.Binding.Snapshot.SHA256, "timings": res.Timings, "warnings": res.Warnings})
				}
				if res.Outcome == refresh.OutcomeUnchanged {
					fmt.Fprintf(a.stdout, "%s/%s already shows this data (%d rows); nothing written.\n", argv[0], argv[1], res.Rows)
				} else {
					fmt.Fprintf(a.stdout, "refreshed %s/%s: %d rows, %d columns, commit %s\n", argv[0], argv[1], res.Rows, len(res.Columns), res.Commit[:12])
				}
				t := res.Timings
				fmt.Fprintf(a.stdout, "load %.1f ms, check %.1f ms, snapshot %.1f ms, profile %.1f ms, commit %.1f ms; total %.1f ms. No model was called.\n",
					t.Load, t.Check, t.Snapshot, t.Profile, t.Commit, t.Total)
				for _, w := range res.Warnings {
					fmt.Fprintf(a.stderr, "warning: %s\n", w)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "load from this connector (tools/NAME.yaml) instead of the binding's, and bind it")
	cmd.Flags().BoolVar(&rebind, "rebind", false, "after regenerating the artifact: take the new data's columns as its column set")
	cmd.Flags().BoolVar(&status, "status", false, "list every artifact's last refresh, outcome and next scheduled run")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// artifactStatus is one line of refresh --status.
type artifactStatus struct {
	Workspace string     `json:"workspace"`
	Artifact  string     `json:"artifact"`
	Connector string     `json:"connector"`
	Rows      int64      `json:"rows"`
	LastRun   *time.Time `json:"last_run,omitempty"`
	Trigger   string     `json:"trigger,omitempty"`
	Outcome   string     `json:"outcome,omitempty"`
	Message   string     `json:"message,omitempty"`
	Schedule  string     `json:"schedule,omitempty"`
	NextRun   *time.Time `json:"next_run,omitempty"`
}

func (a *app) printStatus(ctx context.Context, rf *refresh.Refresher, asJSON bool) error {
	bounds, err := rf.Bindings(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	var rows []artifactStatus
	for _, b := range bounds {
		st := artifactStatus{Workspace: b.Workspace, Artifact: b.Artifact, Connector: b.Binding.Connector, Schedule: b.Binding.Schedule}
		if b.Binding.Snapshot != nil {
			st.Rows = b.Binding.Snapshot.Rows
		}
		if last, ok := rf.Snapshots().LastStatus(b.Workspace, b.Artifact); ok {
			st.LastRun, st.Trigger, st.Outcome, st.Message = &last.At, last.Trigger, last.Outcome, last.Message
		}
		if next, ok := b.Binding.NextRun(now); ok {
			st.NextRun = &next
		}
		rows = append(rows, st)
	}
	if asJSON {
		if rows == nil {
			rows = []artifactStatus{}
		}
		return a.printJSON(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, "No artifact is bound to data.")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tARTIFACT\tCONNECTOR\tROWS\tLAST RUN\tOUTCOME\tNEXT RUN")
	for _, r := range rows {
		last, next := "-", "-"
		if r.LastRun != nil {
			last = r.LastRun.UTC().Format("2006-01-02 15:04:05") + " (" + r.Trigger + ")"
		}
		if r.NextRun != nil {
			next = r.NextRun.UTC().Format("2006-01-02 15:04")
		}
		outcome := r.Outcome
		if outcome == "" {
			outcome = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Workspace, r.Artifact, r.Connector, r.Rows, last, outcome, next)
	}
	return tw.Flush()
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
