package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"paydesk/store"
)

// reservationStates are the values of reservations --state.
var reservationStates = []string{string(store.StateReserved), string(store.StatePartlyCaptured), string(store.StateCaptured),
	string(store.StateCancelled), string(store.StateClosed), string(store.StateDeclined), string(store.StateAwaitingCustomer)}

func reservationsCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "reservations", sio: sio}
	var state, filter string
	cmd := c.command("reservations", "List the cached reservations, newest first", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runReservations(ctx, c, state, filter) })
	cmd.Flags().BoolVarP(&c.flags.quiet, "quiet", "q", false, "print only the reservation numbers (keys of those without one), one a line")
	cmd.Example = "paydesk reservations --state reserved\npaydesk reservations --filter 'amount:>100 created:<7d mueller'\npaydesk reservations --json"
	c.lookFlags()
	filterFlag(cmd, &filter)
	cmd.Flags().StringVar(&state, "state", "", "only this state: "+strings.Join(reservationStates, ", "))
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(reservationStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runReservations(ctx context.Context, c *cmdContext, state, filter string) int {
	sio := c.sio
	if err := checkChoice("--state", state, reservationStates); err != nil {
		return c.usage("%v", err)
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db != nil {
		defer c.closeCache(db)
	}
	now := c.now(db)
	where, err := parseFilter(filter, store.ReservationFilter, now)
	if err != nil {
		return c.usage("%v", err)
	}
	// The rows are read a page at a time, newest first, and written as they
	// come: a cache of a million reservations is never held whole.
	each := func(fn func(r reservationJSON) error) error {
		if db == nil {
			return nil
		}
		q := store.PageQuery{Sort: store.SortCreated, Desc: true, State: store.State(state), Where: where, Limit: 5000}
		for {
			p, err := db.ReservationPage(ctx, q)
			if err != nil {
				return err
			}
			for _, pr := range p.Rows {
				s := pr.Summary
				if err := fn(reservationJSON{ReservationNumber: s.ReservationNumber, Key: s.Key, Invoice: clean(s.Invoice), State: string(s.State), LinesKnown: !s.LinesUnknown,
					Amount: money(s.Amount), Captured: money(s.Captured), Remaining: money(s.Remaining), Currency: s.Currency,
					Customer: clean(s.Customer), Country: s.Country, Created: timeText(s.Created), DaysLeft: s.DaysLeft(now),
					OutcomeUnknown: s.OutcomeUnknown, IsTest: s.IsTest}); err != nil {
					return err
				}
			}
			if !p.More || len(p.Rows) == 0 {
				return nil
			}
			q.After = p.Rows[len(p.Rows)-1].Pos
		}
	}
	w := bufio.NewWriter(sio.Stdout)
	defer w.Flush()
	if c.flags.json {
		if err := writeJSONStream(w, each); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	if c.flags.quiet {
		if err := each(func(r reservationJSON) error {
			_, err := fmt.Fprintln(w, cmp.Or(r.ReservationNumber, r.Key))
			return err
		}); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	// The columns line up within each block of rows the writer holds (a
	// page), not across a million rows held at once.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESERVATION\tINVOICE\tSTATE\tAMOUNT\tCAPTURED\tREMAINING\tDAYS\tCUSTOMER")
	n := 0
	err = each(func(r reservationJSON) error {
		n++
		st := r.State
		if r.OutcomeUnknown {
			st += " (OUTCOME UNKNOWN)"
		}
		// A declined or unfinished reservation has no number yet (its
		// key is a transaction key, not a reservation); the shipment
		// window only counts while something can still be captured.
		num := r.ReservationNumber
		if num == "" {
			num = "-"
		}
		days := "-"
		if r.State == string(store.StateReserved) || r.State == string(store.StatePartlyCaptured) {
			days = fmt.Sprint(r.DaysLeft)
		}
		// Nothing remains to capture on a reservation that never was one.
		remaining := r.Remaining
		if r.State == string(store.StateDeclined) || r.State == string(store.StateAwaitingCustomer) {
			remaining = "-"
		}
		amount := r.Amount
		if !r.LinesKnown {
			// Only its Reserve push was seen: what it reserved is unknown.
			amount, remaining = "?", unknownUnlessDone(remaining, r.State)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%s\t%s\t%s\t%s\n", num, r.Invoice, st, amount, r.Currency, r.Captured, remaining, days, r.Customer)
		if n%5000 == 0 {
			return tw.Flush()
		}
		return nil
	})
	_ = tw.Flush()
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintln(w, count(n, "reservation", "reservations"))
	return exitOK
}

// count is "1 reservation", "2 reservations", "0 reservations".
func count(n int, one, many string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// checkChoice refuses a filter value that is not one of valid ("" is no
// filter), naming the valid ones.
func checkChoice(flag, v string, valid []string) error {
	if v == "" {
		return nil
	}
	for _, ok := range valid {
		if v == ok {
			return nil
		}
	}
	return fmt.Errorf("%s %q: not one of %s", flag, v, strings.Join(valid, ", "))
}

func showCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "show", sio: sio}
	cmd := c.command("show RESERVATION", "Show a reservation: lines, ledger, transactions", cobra.ExactArgs(1), runShow)
	c.lookFlags()
	return cmd
}

func runShow(ctx context.Context, c *cmdContext) int {
	sio := c.sio
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db == nil {
		return c.fail(fmt.Errorf("reservation %s: %w (the cache %s does not exist yet)", c.args[0], store.ErrNotFound, c.set.DB))
	}
	defer c.closeCache(db)
	r, err := db.Reservation(ctx, c.args[0])
	if err != nil {
		return c.fail(err)
	}
	txs, err := db.TransactionsFor(ctx, r.Key)
	if err != nil {
		return c.fail(err)
	}
	out := reservationOut(r, txs, c.now(db))
	// Orders the intake refused (409) because this invoice was known with
	// other lines: both are kept for an operator to compare.
	// ("" would ask for every invoice's.)
	if r.Invoice != "" {
		conflicts, err := db.OrderConflicts(ctx, r.Invoice)
		if err != nil {
			return c.fail(err)
		}
		for _, o := range conflicts {
			out.OrderConflicts = append(out.OrderConflicts, conflictOut(o))
		}
	}
	if c.flags.json {
		_ = writeJSON(sio.Stdout, out)
		return exitOK
	}
	w := sio.Stdout
	state := store.State(out.State).Words()
	if out.ReservationNumber != "" {
		fmt.Fprintf(w, "Reservation %s · invoice %s · %s\n", out.ReservationNumber, out.Invoice, state)
	} else {
		fmt.Fprintf(w, "Reservation request %s (no reservation number) · invoice %s · %s\n", out.Key, out.Invoice, state)
	}
	if out.OutcomeUnknown {
		fmt.Fprintln(w, "  ! an operation on it has an UNKNOWN OUTCOME (see paydesk audit; resolve with paydesk resolve)")
	}
	var window string
	switch store.State(out.State) {
	case store.StateReserved, store.StatePartlyCaptured:
		window = windowText(out.DaysLeft)
	case store.StateDeclined, store.StateAwaitingCustomer:
		window = "not reserved: no shipment window"
	default:
		window = "nothing left to ship"
	}
	fmt.Fprintf(w, "%s · created %s · %s\n", customerText(out), out.Created, window)
	if !out.LinesKnown {
		fmt.Fprintf(w, "Amount unknown · captured %s %s\n", out.Captured, out.Currency)
		fmt.Fprintln(w, "Its order never reached paydesk: the shop posts its Reserve envelope to the listener's …/orders, or run paydesk import FILE;")
		fmt.Fprintln(w, "meanwhile it can be cancelled, or captured in full by amount: paydesk capture "+cmp.Or(out.ReservationNumber, out.Key)+" --amount AMOUNT")
	} else {
		fmt.Fprintf(w, "Amount %s %s · captured %s · remaining %s", out.Amount, out.Currency, out.Captured, out.Remaining)
		if out.Refunded != "" {
			fmt.Fprintf(w, " · refunded %s", out.Refunded)
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ARTICLE\tTITLE\tPRICE\tRESERVED\tCAPTURED\tCANCELLED\tREMAINING")
		for _, l := range out.Lines {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\n", l.ArticleNumber, l.Title, l.Price, l.Reserved, l.Captured, l.Cancelled, l.Remaining)
		}
		_ = tw.Flush()
	}
	for _, o := range out.OrderConflicts {
		fmt.Fprintf(w, "! Another order for this invoice was refused (409): %s at %s; its lines: %s · total %s\n", o.Source, o.Received, o.Lines, o.Amount)
	}
	if len(out.Transactions) > 0 {
		fmt.Fprintln(w, "Transactions:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range out.Transactions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\trefundable %s", t.Key, t.Kind, store.Status{Code: t.Status, SubCode: t.SubCode}.Text(), t.Amount, t.InvoiceNumber, t.Refundable)
			for _, p := range t.Parcels {
				fmt.Fprintf(tw, " · %s", store.Parcel{ID: p.Parcel, Tracking: p.Tracking})
			}
			fmt.Fprintln(tw)
		}
		_ = tw.Flush()
	}
	return exitOK
}

// windowText says where a reservation stands in its shipment window.
func windowText(daysLeft int) string {
	switch {
	case daysLeft < 0:
		return "shipment window passed " + count(-daysLeft, "day", "days") + " ago"
	case daysLeft == 0:
		return "last day of the shipment window"
	}
	return count(daysLeft, "day", "days") + " left in the shipment window"
}

// customerText names the customer; a reservation seen only in its Reserve
// push has none until its order arrives.
func customerText(out reservationJSON) string {
	switch {
	case out.Customer == "" && !out.LinesKnown:
		return "Customer unknown: its order is not in paydesk (see below)"
	case out.Customer == "":
		return "Customer unknown"
	case out.Country == "":
		return "Customer " + out.Customer
	}
	return "Customer " + out.Customer + " (" + out.Country + ")"
}

// unknownUnlessDone is "?" for what remains of a reservation whose lines
// are not known while something can still be captured.
func unknownUnlessDone(remaining, state string) string {
	if state == string(store.StateReserved) || state == string(store.StatePartlyCaptured) {
		return "?"
	}
	return remaining
}

// writeJSONStream writes the items each gives as a JSON array, item by
// item, laid out as writeJSON would: a list of a million rows is never
// held whole.
func writeJSONStream[T any](w *bufio.Writer, each func(fn func(T) error) error) error {
	n := 0
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	err := each(func(r T) error {
		buf.Reset()
		if err := enc.Encode(r); err != nil {
			return err
		}
		sep := ",\n  "
		if n == 0 {
			sep = "[\n  "
		}
		n++
		_, _ = w.WriteString(sep)
		_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		_, _ = w.WriteString("[]\n")
	} else {
		_, _ = w.WriteString("\n]\n")
	}
	return nil
}
