package forms

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"paydesk/api"
	"paydesk/store"
)

func asValidation(err error) (*api.ValidationError, bool) {
	var ve *api.ValidationError
	if errors.As(err, &ve) {
		return ve, true
	}
	return nil, false
}

// units lists "n × ARTICLE Title" for each line with a positive count,
// the plain words of a confirmation.
func units(lines []store.Line, n func(i int) int) string {
	var p []string
	for i, l := range lines {
		if q := n(i); q > 0 {
			p = append(p, fmt.Sprintf("%d × %s %s", q, Clean(l.ArticleNumber), trunc(Clean(l.Title), 32)))
		}
	}
	return strings.Join(p, ", ")
}

// who names the customer of a reservation for a confirmation.
func who(name string) string {
	if name = strings.TrimSpace(Clean(name)); name != "" {
		return name
	}
	return "the customer"
}

// wrapWords wraps text at spaces only, so an identifier (an invoice
// number, a reservation number) is never split at its hyphens; a word
// longer than the width gets a line of its own.
func wrapWords(s string, width int) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, w := "", 0
		for _, word := range strings.Fields(para) {
			ww := ansi.StringWidth(word)
			switch {
			case w == 0:
				line, w = word, ww
			case w+1+ww <= width:
				line, w = line+" "+word, w+1+ww
			default:
				out = append(out, line)
				line, w = word, ww
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
