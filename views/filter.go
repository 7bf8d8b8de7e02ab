package views

import "paydesk/internal/query"

// ParseFilter parses a filter typed into a list's "/" in the language of
// the command line's --filter (internal/query), checked against what list
// l takes. Relative times ("created:<7d") count from the console's clock,
// dates are days where it shows times. A refused filter's error reads as
// FilterErrorText words it.
func (c *Context) ParseFilter(text string, l query.List) (query.Query, error) {
	w, err := query.Parse(text, c.Now().In(c.loc()))
	if err == nil {
		err = w.Check(l)
	}
	if err != nil {
		return query.Query{}, filterError{err}
	}
	return w, nil
}

// FilterErrorText words a filter the language refused ("Filter: …"), as
// every list shows it.
func FilterErrorText(err error) string { return loadErrorText(err) }
