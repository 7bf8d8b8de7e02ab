package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"paydesk/internal/query"
	"paydesk/internal/textsafe"
	"paydesk/store"
	"paydesk/ui"
)

// filterHelp is the --filter flag's help: the language of the console's
// "/" (internal/query).
const filterHelp = "only the rows this filter keeps, in the console's / language: words, state:reserved amount:>100 created:<7d customer:… (docs/console.md)"

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

// viewPrefix marks a saved view among the config file's values.
const viewPrefix = "views."

// views are the config file's saved views, by name, each filter checked
// now: a view that cannot show anything is a config error, not an empty
// tab.
func (l layers) views() ([]ui.SavedView, error) {
	var out []ui.SavedView
	for k, v := range l.file {
		name, ok := strings.CutPrefix(k, viewPrefix)
		if !ok {
			continue
		}
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("config file %s: [views]: a view needs a name", l.path)
		}
		if _, err := parseFilter(v, store.ReservationFilter, time.Now()); err != nil {
			return nil, fmt.Errorf("config file %s: [views] %s = %q: %v", l.path, name, v, strings.TrimPrefix(err.Error(), "--filter: "))
		}
		out = append(out, ui.SavedView{Name: textsafe.Clean(name), Filter: v})
	}
	slices.SortFunc(out, func(a, b ui.SavedView) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
