package batch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"paydesk/api"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// What a person reads: the pre-flight before anything is sent, the
// outcome after. Text from the manifest and the cache is made safe for a
// terminal (no escape sequences from a WMS export).

func money(t []Total) string {
	if len(t) == 0 {
		return "0.00"
	}
	parts := make([]string, len(t))
	for i, x := range t {
		parts[i] = x.Amount.StringFixed(2) + " " + x.Currency
	}
	return strings.Join(parts, " + ")
}

func linesText(lines []api.CaptureLine) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = fmt.Sprintf("%s=%d", l.ArticleNumber, l.Quantity)
	}
	return strings.Join(parts, " ")
}

// clean makes outside text inert and bounds it: a report line stays short
// whatever a manifest holds.
func clean(s string) string { return textsafe.Bound(textsafe.Clean(s), 300) }

// Verb is what a batch of kind does, in words.
func Verb(kind string) string {
	if kind == store.BatchCancelRest {
		return "cancel the rest of"
	}
	return "capture"
}

// WritePreflight writes the pre-flight for a person: counts, the total, one
// line per reservation with its amount, then every refusal with its line
// and rule.
func WritePreflight(w io.Writer, pf *Preflight) {
	fmt.Fprintf(w, "Pre-flight of %s (sha256 %s): %d rows, checked in %s\n", clean(pf.Source), short(pf.Hash), pf.Rows, pf.Took.Round(1000))
	rows := 0
	for _, it := range pf.Items {
		rows += len(it.Rows)
	}
	fmt.Fprintf(w, "  to %-18s %s, %s, %s\n", Verb(pf.Kind), Count(len(pf.Items), "reservation"), Count(rows, "row"), money(pf.Totals))
	fmt.Fprintf(w, "  %-21s %s, %s (nothing is sent for them)\n", "refused", Count(pf.RefusedReservations, "reservation"), Count(pf.RefusedRows, "row"))
	if pf.Late {
		fmt.Fprintln(w, "  --late: captures past the 14-day shipment window are confirmed")
	}
	if len(pf.Ignored) > 0 {
		fmt.Fprintf(w, "  columns not used: %s\n", clean(strings.Join(pf.Ignored, ", ")))
	}
	if len(pf.Items) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  reservation\tinvoice\trows\tamount\tlines")
		for _, it := range pf.Items {
			lines := linesText(it.Lines)
			if it.Full {
				lines += " (all that remains)"
			}
			if it.PastWindow {
				lines += " (past the 14-day window)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s %s\t%s\n", clean(it.Reservation), clean(it.Invoice), len(it.Rows), it.Amount.StringFixed(2), it.Currency, clean(lines))
		}
		_ = tw.Flush()
	}
	if len(pf.Refused) > 0 {
		fmt.Fprintln(w, "\nRefused:")
		for _, f := range pf.Refused {
			what := clean(f.Ref)
			if f.Article != "" {
				what += " " + clean(f.Article)
			}
			fmt.Fprintf(w, "  line %d  %s  %s: %s\n", f.Line, what, f.Rule, clean(f.Message))
		}
	}
}

// WriteOutcome writes what a run did: counts, amounts, and the items the
// operator has to look at (outcome unknown, failed, refused now).
func WriteOutcome(w io.Writer, o Outcome) {
	b := o.Batch
	fmt.Fprintf(w, "Batch %s (%s %s): %s\n", b.ID, Verb(b.Kind), clean(b.Source), o.CountsText())
	fmt.Fprintf(w, "  %s: %s", map[bool]string{true: "cancelled", false: "captured"}[b.Kind == store.BatchCancelRest], money(o.Settled))
	fmt.Fprintf(w, "; sent now %d, ended in an earlier run %d, in %s\n", o.Sent, o.Earlier, o.Took.Round(1000000))
	if o.Interrupted {
		fmt.Fprintf(w, "  interrupted: run it again, or paydesk batch capture --resume %s, to send the rest\n", b.ID)
	}
	section := func(title string, st store.BatchItemState) {
		var list []store.BatchItem
		for _, it := range o.Items {
			if it.State == st {
				list = append(list, it)
			}
		}
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n", title)
		for _, it := range list {
			fmt.Fprintf(w, "  %s (invoice %s, rows %s) %s %s: %s\n", clean(it.Reservation), clean(it.Invoice), joinInts(it.Rows),
				it.Amount.StringFixed(2), it.Currency, clean(it.Message))
		}
	}
	section("Outcome unknown (never sent again by a batch: check the gateway's back office, then paydesk resolve)", store.ItemOutcomeUnknown)
	section("Failed", store.ItemFailed)
	section("Refused when sending (nothing sent)", store.ItemRefused)
	section("Not sent yet", store.ItemPlanned)
}

// ItemLine is one line per item, for a log or a pipe.
func ItemLine(it store.BatchItem, earlier bool) string {
	st := string(it.State)
	if earlier {
		st += " (earlier run)"
	}
	op := ""
	if it.OpID != 0 {
		op = fmt.Sprintf(" op %d", it.OpID)
	}
	return fmt.Sprintf("%-16s %s %s rows %s %s %s%s %s", st, clean(it.Reservation), clean(it.Invoice), joinInts(it.Rows),
		it.Amount.StringFixed(2), it.Currency, op, clean(it.Message))
}

// JSON forms, a stable interface for a warehouse system.

type jsonItem struct {
	Reservation string            `json:"reservation"`
	Invoice     string            `json:"invoice"`
	Rows        []int             `json:"rows"`
	Lines       []api.CaptureLine `json:"lines"`
	Amount      string            `json:"amount"`
	Currency    string            `json:"currency"`
	Full        bool              `json:"full,omitempty"`
	Note        string            `json:"note,omitempty"`
	State       string            `json:"state,omitempty"`
	OpID        uint64            `json:"opId,omitempty"`
	Key         string            `json:"key,omitempty"`
	Message     string            `json:"message,omitempty"`
}

type jsonTotal struct {
	Currency string `json:"currency"`
	Amount   string `json:"amount"`
}

func jsonTotals(t []Total) []jsonTotal {
	out := make([]jsonTotal, len(t))
	for i, x := range t {
		out[i] = jsonTotal{Currency: x.Currency, Amount: x.Amount.StringFixed(2)}
	}
	return out
}

// PreflightJSON is the pre-flight as JSON.
type PreflightJSON struct {
	Kind                string      `json:"kind"`
	Source              string      `json:"source"`
	SHA256              string      `json:"sha256"`
	Rows                int         `json:"rows"`
	Reservations        int         `json:"reservations"`
	Totals              []jsonTotal `json:"totals"`
	RefusedReservations int         `json:"refusedReservations"`
	RefusedRows         int         `json:"refusedRows"`
	Items               []jsonItem  `json:"items"`
	Refused             []Refusal   `json:"refused"`
	Ignored             []string    `json:"ignoredColumns,omitempty"`
	Millis              float64     `json:"millis"`
}

// JSON returns the pre-flight's JSON form.
func (pf *Preflight) JSON() PreflightJSON {
	out := PreflightJSON{Kind: pf.Kind, Source: pf.Source, SHA256: pf.Hash, Rows: pf.Rows, Reservations: len(pf.Items),
		Totals: jsonTotals(pf.Totals), RefusedReservations: pf.RefusedReservations, RefusedRows: pf.RefusedRows,
		Items: []jsonItem{}, Refused: pf.Refused, Ignored: pf.Ignored, Millis: float64(pf.Took.Microseconds()) / 1000}
	if out.Refused == nil {
		out.Refused = []Refusal{}
	}
	for _, it := range pf.Items {
		out.Items = append(out.Items, jsonItem{Reservation: it.Reservation, Invoice: it.Invoice, Rows: it.Rows, Lines: it.Lines,
			Amount: it.Amount.StringFixed(2), Currency: it.Currency, Full: it.Full, Note: it.Note})
	}
	return out
}

// OutcomeJSON is a run's outcome as JSON.
type OutcomeJSON struct {
	Batch       string         `json:"batch"`
	Kind        string         `json:"kind"`
	Source      string         `json:"source"`
	SHA256      string         `json:"sha256"`
	Counts      map[string]int `json:"counts"`
	Sent        int            `json:"sent"`
	Earlier     int            `json:"earlier"`
	Settled     []jsonTotal    `json:"settled"`
	Interrupted bool           `json:"interrupted,omitempty"`
	Items       []jsonItem     `json:"items"`
	Preflight   *PreflightJSON `json:"preflight,omitempty"`
}

// JSON returns the outcome's JSON form; pf may be nil (a resume).
func (o Outcome) JSON(pf *Preflight) OutcomeJSON {
	out := OutcomeJSON{Batch: o.Batch.ID, Kind: o.Batch.Kind, Source: o.Batch.Source, SHA256: o.Batch.Hash, Counts: map[string]int{},
		Sent: o.Sent, Earlier: o.Earlier, Settled: jsonTotals(o.Settled), Interrupted: o.Interrupted, Items: []jsonItem{}}
	for st, n := range o.Counts {
		out.Counts[string(st)] = n
	}
	for _, it := range o.Items {
		out.Items = append(out.Items, jsonItem{Reservation: it.Reservation, Invoice: it.Invoice, Rows: it.Rows, Lines: it.Lines,
			Amount: it.Amount.StringFixed(2), Currency: it.Currency, Note: it.Note, State: string(it.State), OpID: it.OpID,
			Key: it.Key, Message: it.Message})
	}
	if pf != nil {
		j := pf.JSON()
		out.Preflight = &j
	}
	return out
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Count is "1 reservation", "2 reservations": a count with its noun.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
