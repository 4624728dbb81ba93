package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) deleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete PATH",
		Short: "Delete a memory file or directory (history keeps it; revert restores it)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.Delete(cmd.Context(), memPath(argv[0]), a.cliWrite("delete"))
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
}
