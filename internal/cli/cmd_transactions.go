package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/store"
)

// transactionKinds are the values of transactions --kind.
var transactionKinds = []string{string(store.KindCapture), string(store.KindRefund), string(store.KindGiftCardPay),
	string(store.KindGiftCardRemainder), string(store.KindGiftCardRefund), string(store.KindUnknown)}

// statusClasses are the values of --status: what the gateway's status
// code says, and for pushes also what the listener did with them.
var (
	transactionStatuses = []string{"success", "pending", "failed"}
	pushStatuses        = store.PushStatuses
)

// statusClass sorts a status code into success, pending or failed ("" for
// none yet).
func statusClass(code int) string {
	switch {
	case code == 0:
		return ""
	case code == api.StatusSuccess:
		return "success"
	case api.IsPending(code):
		return "pending"
	}
	return "failed"
}

// transactionRowJSON is a transaction in the list: txJSON with the
// reservation it belongs to.
type transactionRowJSON struct {
	txJSON
	Invoice     string `json:"invoice,omitempty"`
	Reservation string `json:"reservation,omitempty"`
	Service     string `json:"service,omitempty"`
}

func transactionsCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "transactions", sio: sio}
	var kind, status, reservation, filter string
	cmd := c.command("transactions", "List the cached transactions (captures, refunds, gift card payments), newest first", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int {
			return runTransactions(ctx, c, kind, status, reservation, filter)
		})
	cmd.Example = "paydesk transactions --kind capture\npaydesk transactions --reservation RESERVATION --json"
	c.lookFlags()
	fs := cmd.Flags()
	fs.StringVar(&kind, "kind", "", "only this kind: "+strings.Join(transactionKinds, ", "))
	fs.StringVar(&status, "status", "", "only this status: "+strings.Join(transactionStatuses, ", "))
	fs.BoolVarP(&c.flags.quiet, "quiet", "q", false, "print only the transaction keys, one a line")
	fs.StringVar(&reservation, "reservation", "", "only the transactions of this reservation (number or key)")
	filterFlag(cmd, &filter)
	_ = cmd.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(transactionKinds, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(transactionStatuses, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runTransactions(ctx context.Context, c *cmdContext, kind, status, reservation, filter string) int {
	if err := checkChoice("--kind", kind, transactionKinds); err != nil {
		return c.usage("%v", err)
	}
	if err := checkChoice("--status", status, transactionStatuses); err != nil {
		return c.usage("%v", err)
	}
	db, code := c.openCache()
	if code >= 0 {
		return code
	}
	if db == nil && reservation != "" {
		return c.fail(fmt.Errorf("reservation %s: %w (the cache %s does not exist yet)", reservation, store.ErrNotFound, c.set.DB))
	}
	if db != nil {
		defer c.closeCache(db)
	}
	where, err := parseFilter(filter, store.TransactionFilter, c.now(db))
	if err != nil {
		return c.usage("%v", err)
	}
	keep := func(t *store.Transaction) bool {
		return (kind == "" || string(t.Kind) == kind) && (status == "" || statusClass(t.Status.Code) == status) &&
			(reservation == "" || store.KeepTransaction(t, &where))
	}
	// The rows are read a page at a time, newest first (a kind in the
	// store), and written as they come, like the reservations.
	each := func(fn func(r transactionRowJSON) error) error {
		if db == nil {
			return nil
		}
		emit := func(t *store.Transaction) error {
			if !keep(t) {
				return nil
			}
			return fn(transactionRowJSON{txJSON: txOut(t), Invoice: clean(t.Invoice), Reservation: t.ReservationNumber,
				Service: clean(t.ServiceCode)})
		}
		if reservation != "" {
			txs, err := db.TransactionsFor(ctx, reservation)
			if err != nil {
				return err
			}
			for _, t := range txs {
				if err := emit(t); err != nil {
					return err
				}
			}
			return nil
		}
		q := store.PageQuery{Sort: store.TxSortCreated, Desc: true, State: store.State(kind), Where: where, Limit: 5000}
		for {
			p, err := db.TransactionPage(ctx, q)
			if err != nil {
				return err
			}
			for _, r := range p.Rows {
				if err := emit(r.Tx); err != nil {
					return err
				}
			}
			if !p.More || len(p.Rows) == 0 {
				return nil
			}
			q.After = p.Rows[len(p.Rows)-1].Pos
		}
	}
	w := bufio.NewWriter(c.sio.Stdout)
	defer w.Flush()
	if c.flags.json {
		if err := writeJSONStream(w, each); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	if c.flags.quiet {
		if err := each(func(t transactionRowJSON) error {
			_, err := fmt.Fprintln(w, t.Key)
			return err
		}); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tKEY\tKIND\tSTATUS\tAMOUNT\tREFUNDABLE\tINVOICE\tRESERVATION")
	n := 0
	err = each(func(t transactionRowJSON) error {
		n++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\n", dash(t.Created), t.Key, t.Kind,
			dash(store.Status{Code: t.Status, SubCode: t.SubCode}.Text()), t.Amount, t.Currency, t.Refundable, dash(t.Invoice), dash(t.Reservation))
		if n%5000 == 0 {
			return tw.Flush() // columns line up within a page, not across a million rows
		}
		return nil
	})
	_ = tw.Flush()
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintln(w, count(n, "transaction", "transactions"))
	return exitOK
}

// dash stands in for an empty column.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
