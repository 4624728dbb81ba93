package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

func (a *app) insertCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "insert PATH LINE TEXT",
		Short: "Insert TEXT after line LINE of a memory file (0 inserts at the top)",
		Args:  args(cobra.ExactArgs(3)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			line, err := strconv.Atoi(argv[1])
			if err != nil {
				return usageError{fmt.Errorf("LINE %q is not a number", argv[1])}
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				res, err := s.Insert(cmd.Context(), memPath(argv[0]), line, argv[2], a.cliWrite("insert"))
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, res.Message)
				return nil
			})
		},
	}
}
