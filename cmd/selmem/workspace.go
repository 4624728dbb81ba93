package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/internal/fsutil"
	"github.com/selmem/selmem/memstore"
)

func (a *app) workspaceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workspace",
		Short: "Publish, load, export and import workspace templates",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{errors.New("name a subcommand: publish, templates, load, export or import")}
		},
	}
	cmd.AddCommand(a.workspacePublishCommand(), a.workspaceTemplatesCommand(), a.workspaceLoadCommand(),
		a.workspaceExportCommand(), a.workspaceImportCommand())
	return cmd
}

func (a *app) workspacePublishCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "publish WORKSPACE VERSION",
		Short: "Tag the workspace's published state as template WORKSPACE@VERSION",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				t, err := s.PublishTemplate(cmd.Context(), argv[0], argv[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Published template %s (commit %s)\n", t.Name(), t.Commit[:12])
				return nil
			})
		},
	}
}

func (a *app) workspaceTemplatesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "templates",
		Short: "List the published templates",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				list, err := s.Templates(cmd.Context())
				if err != nil {
					return err
				}
				for _, t := range list {
					fmt.Fprintf(a.stdout, "%s\t%s\t%s\t%s\n", t.Name(), t.Commit[:12], t.Time.Format("2006-01-02 15:04:05Z"), t.Title)
				}
				return nil
			})
		},
	}
}

func (a *app) workspaceLoadCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "load WORKSPACE@VERSION NEW_WORKSPACE",
		Short: "Create NEW_WORKSPACE from a template, without credential bindings or data",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.LoadTemplate(cmd.Context(), argv[0], argv[1])
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
}

func (a *app) workspaceExportCommand() *cobra.Command {
	var template, out string
	cmd := &cobra.Command{
		Use:   "export WORKSPACE [--template VERSION] [-o FILE]",
		Short: "Write a workspace and its templates as a git bundle another server imports",
		Long: `Write WORKSPACE as a git bundle (v2): its published state as refs/heads/main
and each template as refs/tags/templates/WORKSPACE/VERSION, each a commit
holding only what a template carries (task, output, tools without
credential bindings, schemas, artifacts without data). With --template only
that template is written. The file is checked with git bundle verify.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ws := argv[0]
			if out == "" {
				out = ws + ".bundle"
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				var buf bytes.Buffer
				res, err := s.ExportWorkspace(cmd.Context(), ws, &memstore.ExportOptions{Template: template}, &buf)
				if err != nil {
					return err
				}
				if err := fsutil.WriteAtomic(out, buf.Bytes(), true); err != nil {
					return fmt.Errorf("write %s: %w", out, err)
				}
				fmt.Fprintf(a.stdout, "Wrote %s: %d bytes, %d objects\n%s\n", out, res.Bytes, res.Objects, strings.Join(res.Refs, "\n"))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&template, "template", "", "export only this template version")
	cmd.Flags().StringVarP(&out, "output", "o", "", "bundle file to write (default WORKSPACE.bundle)")
	return cmd
}

func (a *app) workspaceImportCommand() *cobra.Command {
	var as string
	var maxBytes int64
	cmd := &cobra.Command{
		Use:   "import FILE [--as NEW_WORKSPACE]",
		Short: "Create a workspace from a bundle written by selmem workspace export",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			f, err := os.Open(argv[0])
			if err != nil {
				return err
			}
			defer f.Close()
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.ImportBundle(cmd.Context(), f, &memstore.ImportOptions{As: as, Origin: filepath.Base(argv[0]), MaxBytes: maxBytes})
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "name of the new workspace (default the bundle's)")
	cmd.Flags().Int64Var(&maxBytes, "max-bytes", memstore.DefaultMaxBundleBytes, "largest bundle to read")
	return cmd
}
