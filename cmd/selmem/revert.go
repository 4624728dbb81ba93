package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) revertCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "revert PATH COMMIT",
		Short: "Restore a memory file or directory to its content as of COMMIT, as a new commit",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.Revert(cmd.Context(), memPath(argv[0]), argv[1], a.cliWrite("revert"))
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
}
