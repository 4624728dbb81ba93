package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/refresh"
	"github.com/selmem/selmem/refresh/scaffold"
	"github.com/selmem/selmem/server"
)

func (a *app) artifactCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "artifact",
		Short: "Create and check artifacts: dashboards that read their data only through the injection point",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{errors.New("name a subcommand: init or lint")}
		},
	}
	cmd.AddCommand(a.artifactInitCommand(), a.artifactLintCommand())
	return cmd
}

func (a *app) artifactInitCommand() *cobra.Command {
	var source, title, schedule string
	cmd := &cobra.Command{
		Use:   "init WORKSPACE NAME --source CONNECTOR",
		Short: "Scaffold a dashboard bound to a connector's data, and refresh it once",
		Long: `Write a small dashboard (index.html, app.js, style.css: row count, the
total of a measure, a bar chart by category and an insight sentence, all
computed in the browser from the injected data) under
/memories/workspaces/WORKSPACE/artifacts/NAME/, its binding.yaml naming the
connector tools/CONNECTOR.yaml, and the data-injection contract in the
workspace's output.md when it is not there yet; then refresh it once. The
dashboard is served by selmem serve --http at /artifacts/WORKSPACE/NAME/.`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ws, name := argv[0], argv[1]
			if source == "" {
				return usageError{errors.New("--source names the connector (tools/NAME.yaml) the dashboard reads")}
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				rf, err := server.NewRefresher(s.Store, a.cfg, nil)
				if err != nil {
					return err
				}
				if err := refresh.CheckArtifact(ws, name); err != nil {
					return err
				}
				if _, err := s.List(cmd.Context(), refresh.ArtifactDir(ws, name)); err == nil {
					return &memstore.Error{Kind: memstore.ErrExists, Msg: fmt.Sprintf("Error: artifact %s/%s already exists.", ws, name),
						Hint: "Choose another name, or delete it first with selmem delete " + refresh.ArtifactDir(ws, name) + "."}
				}
				t, _, err := rf.LoadSource(cmd.Context(), ws, source, nil)
				if err != nil {
					return err
				}
				cols := t.Columns
				t.Release()
				if title == "" {
					title = name
				}
				files, err := scaffold.Dashboard(title, cols)
				if err != nil {
					return err
				}
				b := &refresh.Binding{Connector: source, Schedule: schedule}
				put := map[string]string{refresh.BindingPath(ws, name): b.Marshal()}
				for f, text := range files {
					put[refresh.ArtifactDir(ws, name)+"/"+f] = text
				}
				outPath := memstore.Root + "/workspaces/" + ws + "/output.md"
				out, _, err := s.Read(cmd.Context(), outPath)
				if errors.Is(err, memstore.ErrNotFound) {
					out = []byte("---\ntype: output\nsource: user_confirmed\n---\n# Output constraints\n")
				} else if err != nil {
					return err
				}
				if !strings.Contains(strings.ReplaceAll(strings.ToLower(string(out)), "-", " "), "data injection contract") {
					put[outPath] = strings.TrimRight(string(out), "\n") + "\n\n" + scaffold.OutputContract()
				}
				if _, err := s.Put(cmd.Context(), put, a.cliWrite("artifact init")); err != nil {
					return err
				}
				res, err := rf.Refresh(cmd.Context(), refresh.Request{Workspace: ws, Artifact: name, Trigger: "cli"})
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "created %s/ bound to tools/%s.yaml: %d rows, %d columns.\nServe it with selmem serve --http ADDR and open /artifacts/%s/%s/.\n",
					refresh.ArtifactDir(ws, name), source, res.Rows, len(res.Columns), ws, name)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "the connector, tools/CONNECTOR.yaml of the workspace (required)")
	cmd.Flags().StringVar(&title, "title", "", "the dashboard's title (default: its name)")
	cmd.Flags().StringVar(&schedule, "schedule", "", "a cron schedule on which selmem serve refreshes it, e.g. \"0 6 * * 1\"")
	return cmd
}

func (a *app) artifactLintCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lint WORKSPACE NAME",
		Short: "Find values of an artifact's current data copied into its program (exit 1 when there are any)",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ws, name := argv[0], argv[1]
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				rf, err := server.NewRefresher(s.Store, a.cfg, nil)
				if err != nil {
					return err
				}
				b, err := rf.ReadBinding(cmd.Context(), ws, name)
				if err != nil {
					return err
				}
				if b.Snapshot == nil {
					return &memstore.Error{Kind: memstore.ErrNotFound, Msg: fmt.Sprintf("Error: artifact %s/%s has no data yet.", ws, name), Hint: "Run selmem refresh " + ws + " " + name + " first."}
				}
				files, _, err := rf.Program(cmd.Context(), ws, name)
				if err != nil {
					return err
				}
				findings, err := rf.LintBound(ws, name, files, b.Snapshot.SHA256)
				if err != nil {
					return err
				}
				for _, f := range findings {
					fmt.Fprintln(a.stdout, f)
				}
				if len(findings) > 0 {
					return exitError{code: exitFailed, err: fmt.Errorf("%d values of the data are copied into the program; compute them from the injected data", len(findings))}
				}
				fmt.Fprintln(a.stdout, "no values of the data are copied into the program")
				return nil
			})
		},
	}
}
