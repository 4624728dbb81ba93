package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"
)

// demoFiles is the demo workspace that `selmem init --demo` writes.
//
//go:embed demo
var demoFiles embed.FS

func (a *app) initCommand() *cobra.Command {
	var demo bool
	cmd := &cobra.Command{
		Use:   "init [--demo]",
		Short: "Create the memory repository (and, with --demo, a demo workspace); refuses an existing one",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := filepath.Join(a.cfg.Home, "memory")
			if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return fmt.Errorf("%s already holds a memory; init changed nothing. Start it with selmem serve, or point SELMEM_HOME at an empty directory for a new one", dir)
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				fmt.Fprintf(a.stdout, "Memory repository at %s\n", s.Dir())
				if !demo {
					return nil
				}
				return fs.WalkDir(demoFiles, "demo", func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					text, err := demoFiles.ReadFile(p)
					if err != nil {
						return err
					}
					target := "/memories/workspaces/" + path.Clean(p)
					if _, _, err := s.Read(cmd.Context(), target); err == nil {
						fmt.Fprintf(a.stdout, "%s exists, kept\n", target)
						return nil
					}
					res, err := s.Create(cmd.Context(), target, string(text), a.cliWrite("init"))
					if err != nil {
						return err
					}
					fmt.Fprintln(a.stdout, res.Message)
					return nil
				})
			})
		},
	}
	cmd.Flags().BoolVar(&demo, "demo", false, "also create the demo workspace /memories/workspaces/demo")
	return cmd
}
