package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) viewCommand() *cobra.Command {
	var rng string
	cmd := &cobra.Command{
		Use:   "view PATH",
		Short: "Show a memory file with line numbers, or list a directory",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			var viewRange []int
			if rng != "" {
				r, err := parseRange(rng)
				if err != nil {
					return usageError{err}
				}
				viewRange = r
			}
			return a.withStore(cmd.Context(), func(s *openedStore) error {
				out, err := s.View(cmd.Context(), memPath(argv[0]), viewRange)
				if err != nil {
					return err
				}
				fmt.Fprint(a.stdout, out)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&rng, "range", "", "line range START:END (END -1 or empty for the end of the file)")
	return cmd
}

// parseRange parses "a:b", "a:" and "a:-1".
func parseRange(s string) ([]int, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("--range %q: want START:END", s)
	}
	start, err := strconv.Atoi(a)
	if err != nil {
		return nil, fmt.Errorf("--range %q: START is not a number", s)
	}
	end := -1
	if b != "" {
		if end, err = strconv.Atoi(b); err != nil {
			return nil, fmt.Errorf("--range %q: END is not a number", s)
		}
	}
	return []int{start, end}, nil
}
