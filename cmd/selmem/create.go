package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func (a *app) createCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "create PATH [-f FILE|-]",
		Short: "Create a memory file from FILE or standard input (never overwrites)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			var r io.Reader = a.stdin
			if file != "" && file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
			}
			text, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.Create(cmd.Context(), memPath(argv[0]), string(text), a.cliWrite("create"))
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "-", "read the content from FILE (- for standard input)")
	return cmd
}
