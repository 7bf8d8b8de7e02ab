package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/query"
)

// filterHelp is the --filter flag's help: the language of the console's
// "/" (internal/query).
const filterHelp = `only the rows this filter keeps, as the console's "/" takes it: ` +
	`words, "a phrase", state:reserved amount:>100 amount:50..200 created:<7d created:2026-11-01..2026-11-20 ` +
	`customer:… email:… operator:… service:… (the fields the list has)`

// filterFlag adds --filter to cmd.
func filterFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "filter", "", filterHelp)
}

// parseFilter parses --filter for list l; relative times count from now.
func parseFilter(text string, l query.List, now time.Time) (query.Query, error) {
	w, err := query.Parse(text, now)
	if err == nil {
		err = w.Check(l)
	}
	if err != nil {
		return query.Query{}, fmt.Errorf("--filter: %w", err)
	}
	return w, nil
}
