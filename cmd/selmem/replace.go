package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) replaceCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "replace PATH OLD NEW",
		Short: "Replace the only occurrence of OLD with NEW in a memory file",
		Args:  args(cobra.ExactArgs(3)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.StrReplace(cmd.Context(), memPath(argv[0]), argv[1], argv[2], a.cliWrite("replace"))
				if err != nil {
					return err
				}
				fmt.Fprint(a.stdout, res.Message)
				return nil
			})
		},
	}
}
