package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) renameCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rename OLD NEW",
		Short: "Rename a memory file or directory (never overwrites)",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.Rename(cmd.Context(), memPath(argv[0]), memPath(argv[1]), a.cliWrite("rename"))
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
}
