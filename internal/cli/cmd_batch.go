package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"
	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"paydesk/internal/access"
	"paydesk/internal/batch"
	"paydesk/internal/ops"
	"paydesk/store"
)

// batchFlags are the flags of batch capture and batch cancel-rest.
type batchFlags struct {
	dryRun      bool
	resume      string
	concurrency int
	late        bool
}

func batchCmd(sio IO) *cobra.Command {
	cmd := &cobra.Command{Use: "batch", Short: "Work from a shipment manifest: many captures, or the cancels of what was not shipped, in one safe run"}
	cmd.AddCommand(batchRunCmd(sio, store.BatchCapture), batchRunCmd(sio, store.BatchCancelRest))
	return cmd
}

func batchRunCmd(sio IO, kind string) *cobra.Command {
	c := &cmdContext{name: "batch " + kind, sio: sio}
	var f batchFlags
	use, short := "capture [MANIFEST]", "Capture what a shipment manifest says left the building: one capture per reservation"
	if kind == store.BatchCancelRest {
		use, short = "cancel-rest [FILE]", "Cancel what was not shipped of invoices whose shipping is finished"
	}
	cmd := c.command(use, short, cobra.MaximumNArgs(1), func(ctx context.Context, c *cmdContext) int { return runBatch(ctx, c, kind, f) })
	if kind == store.BatchCapture {
		cmd.Long = `Capture what a shipment manifest says left the building.

The manifest is a CSV (',' or ';') whose header names the columns: invoice (or
reservation), article, quantity, and optionally amount (price × quantity, checked),
parcel and tracking (kept on the capture and in the audit log). '-' reads it from
stdin. The rows of one reservation become one capture. Everything is checked
before anything is sent (the pre-flight); refused reservations are listed with
their line and rule and left out. The run is journaled as one batch: running the
same manifest again, or --resume BATCH, skips what is settled and never sends a
reservation twice; an outcome-unknown capture is listed for the operator.`
		cmd.Example = "paydesk batch capture shipments.csv --dry-run\npaydesk batch capture shipments.csv\nwms-export | paydesk batch capture - --yes --json\npaydesk batch capture --resume B3"
		cmd.Flags().BoolVar(&f.late, "late", false, "confirm captures past the 14-day shipment window")
	} else {
		cmd.Long = `Cancel what was not shipped of the invoices in FILE (one invoice or reservation
number per line, or a CSV with an invoice column: a manifest will do). An invoice
of which nothing was captured is refused: cancelling its rest would release the
whole reservation (use paydesk cancel for that).`
		cmd.Example = "paydesk batch cancel-rest finished.txt --dry-run\npaydesk batch cancel-rest finished.txt --yes"
	}
	c.moneyFlags()
	fs := cmd.Flags()
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the pre-flight only; nothing is sent or journaled")
	fs.StringVar(&f.resume, "resume", "", "resume batch BATCH (its id, as the report printed it)")
	fs.IntVar(&f.concurrency, "concurrency", batch.DefaultConcurrency, "requests in flight toward the gateway at most (1–32)")
	return cmd
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

func runBatch(ctx context.Context, c *cmdContext, kind string, f batchFlags) int {
	sio := c.sio
	if f.concurrency < 1 || f.concurrency > 32 {
		return c.usage("--concurrency %d: give 1 to 32", f.concurrency)
	}
	if f.resume == "" && len(c.args) == 0 {
		return c.usage("give the manifest file ('-' for stdin), or --resume BATCH")
	}
	var m *batch.Manifest
	source := ""
	if len(c.args) == 1 {
		source = c.args[0]
		var data io.Reader
		if source == "-" {
			if sio.Stdin == nil {
				return c.usage("no stdin to read the manifest from")
			}
			data = sio.Stdin
			c.stdinRead = true
			// The manifest took stdin: no one can answer a question there.
			sio.Interactive = false
			c.sio = sio
		} else {
			// Read as a stream: the manifest is never held whole.
			path, err := c.inputFile(ctx, "", source)
			if err != nil {
				return c.usage("%v", err)
			}
			f, err := openImportFile(path)
			if err != nil {
				return c.fail(fmt.Errorf("read manifest: %w", err))
			}
			defer f.Close()
			data = f
		}
		var err error
		if kind == store.BatchCancelRest {
			m, err = batch.ReadRefs(data)
		} else {
			m, err = batch.ReadManifest(data)
		}
		if err != nil {
			return c.fail(err)
		}
	}
	if f.dryRun && f.resume == "" {
		return dryRunBatch(ctx, c, kind, m, source, f)
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	// Refused whole before the pre-flight: a batch item by item would
	// only say the same for every reservation.
	if err := env.svc.Check(ctx, access.Batch); err != nil {
		return c.fail(err)
	}
	rn := &batch.Runner{Svc: env.svc, Store: env.db, Concurrency: f.concurrency}

	// A manifest already run, or --resume: that batch, never a second one.
	var existing *store.Batch
	var items []store.BatchItem
	var err error
	switch {
	case f.resume != "":
		existing, items, err = env.db.Batch(ctx, f.resume)
		if err == nil && existing.Kind != kind {
			err = fmt.Errorf("batch %s is a %s batch, not %s", existing.ID, existing.Kind, kind)
		}
		if err == nil && m != nil && m.Hash != existing.Hash {
			err = fmt.Errorf("batch %s was run from another manifest (sha256 %s…); give no file to resume it", existing.ID, existing.Hash[:12])
		}
	case m != nil:
		existing, err = env.db.BatchByHash(ctx, kind, m.Hash)
		if err == nil && existing != nil {
			existing, items, err = env.db.Batch(ctx, existing.ID)
		}
	}
	if err != nil {
		return c.fail(err)
	}
	if existing != nil {
		return resumeBatch(ctx, c, env, rn, *existing, items, f)
	}

	lookup := func(ref string) (*store.Reservation, error) { return env.db.Reservation(ctx, ref) }
	var pf *batch.Preflight
	if kind == store.BatchCancelRest {
		pf = batch.PlanCancelRest(m, lookup)
	} else {
		pf = batch.PlanCapture(m, batch.Ledgers(env.db), env.svc.Now(), f.late)
	}
	pf.Source = source
	if !c.flags.json {
		batch.WritePreflight(sio.Stdout, pf)
	}
	if f.dryRun || len(pf.Items) == 0 {
		if c.flags.json {
			_ = writeJSON(sio.Stdout, pf.JSON())
		} else if len(pf.Items) == 0 {
			fmt.Fprintln(sio.Stdout, "\nNothing to send.")
		}
		if len(pf.Refused) > 0 {
			return exitFailed
		}
		return exitOK
	}
	s := batchSummary(env.svc.Mode(), kind, batch.Count(len(pf.Items), "reservation")+" of "+source, pf.Totals, pf.Hash)
	if pf.RefusedReservations > 0 {
		s.Notes = append(s.Notes, batch.Count(pf.RefusedReservations, "reservation")+" refused by the pre-flight left out (see above)")
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	b, items, err := rn.Start(ctx, pf, source)
	if err != nil {
		return c.fail(err)
	}
	if !c.flags.json {
		fmt.Fprintf(sio.Stdout, "\nBatch %s: %s %s, %d at a time\n", b.ID, batch.Verb(kind), batch.Count(len(items), "reservation"), f.concurrency)
	}
	return runAndReport(ctx, c, rn, b, items, pf)
}

// dryRunBatch prints the pre-flight from the cache alone: no gateway, no
// listener, nothing written. A manifest already run shows its batch.
func dryRunBatch(ctx context.Context, c *cmdContext, kind string, m *batch.Manifest, source string, f batchFlags) int {
	sio := c.sio
	db, code := c.openCache()
	if db == nil && code != -1 {
		return code
	}
	find := func([]string) (map[string]*store.Reservation, error) { return nil, nil } // no cache yet: nothing is known
	lookup := func(ref string) (*store.Reservation, error) {
		return nil, fmt.Errorf("reservation %s: %w", ref, store.ErrNotFound)
	}
	now := c.now(db)
	if db != nil {
		defer c.closeCache(db)
		if b, err := db.BatchByHash(ctx, kind, m.Hash); err != nil {
			return c.fail(err)
		} else if b != nil {
			b, items, err := db.Batch(ctx, b.ID)
			if err != nil {
				return c.fail(err)
			}
			return resumeBatch(ctx, c, nil, nil, *b, items, f)
		}
		find = batch.Ledgers(db)
		lookup = func(ref string) (*store.Reservation, error) { return db.Reservation(ctx, ref) }
	}
	var pf *batch.Preflight
	if kind == store.BatchCancelRest {
		pf = batch.PlanCancelRest(m, lookup)
	} else {
		pf = batch.PlanCapture(m, find, now, f.late)
	}
	pf.Source = source
	if c.flags.json {
		_ = writeJSON(sio.Stdout, pf.JSON())
	} else {
		batch.WritePreflight(sio.Stdout, pf)
		fmt.Fprintln(sio.Stdout, "\nDry run: nothing sent, nothing journaled.")
	}
	if len(pf.Refused) > 0 {
		return exitFailed
	}
	return exitOK
}

// batchSummary is the confirmation of a batch: once, with the total.
// Against a live gateway the operator types the start of the manifest's
// hash (a batch has no one invoice number).
func batchSummary(mode ops.Mode, kind, target string, totals []batch.Total, hash string) summary {
	s := summary{Action: "Capture", Target: target}
	if mode.IsLive() {
		s.Invoice = "sha256:" + hash[:8]
	}
	if kind == store.BatchCancelRest {
		s.Action = "Cancel the rest of"
	}
	if len(totals) == 1 {
		s.Amount, s.Currency = totals[0].Amount, totals[0].Currency
	} else {
		for _, t := range totals {
			s.Notes = append(s.Notes, fmt.Sprintf("total %s %s", money(t.Amount), t.Currency))
		}
	}
	s.Notes = append(s.Notes, "batch confirmation: one question for all of them; each is journaled and sent once")
	return s
}

func resumeBatch(ctx context.Context, c *cmdContext, env *runtime, rn *batch.Runner, b store.Batch, items []store.BatchItem, f batchFlags) int {
	sio := c.sio
	left := decimal.Zero
	n := 0
	for _, it := range items {
		if it.State == store.ItemPlanned {
			n++
			left = left.Add(it.Amount)
		}
	}
	if !c.flags.json {
		what := "resuming. Settled reservations are skipped; none is sent twice."
		if f.dryRun {
			what = "its state (dry run: nothing sent)."
		}
		fmt.Fprintf(sio.Stdout, "This manifest is batch %s (started %s by %s): %s\n",
			b.ID, b.Created.Local().Format("2006-01-02 15:04"), clean(b.Operator), what)
	}
	if f.dryRun {
		out := batch.State(b, items)
		if c.flags.json {
			_ = writeJSON(sio.Stdout, out.JSON(nil))
		} else {
			batch.WriteOutcome(sio.Stdout, out)
		}
		return exitOK
	}
	if n > 0 {
		s := batchSummary(env.svc.Mode(), b.Kind, fmt.Sprintf("the %d reservations of batch %s not sent yet", n, b.ID),
			[]batch.Total{{Currency: b.Currency, Amount: left}}, b.Hash)
		if !c.confirm(env.svc.Mode(), s) {
			return exitFailed
		}
	}
	return runAndReport(ctx, c, rn, b, items, nil)
}

func runAndReport(ctx context.Context, c *cmdContext, rn *batch.Runner, b store.Batch, items []store.BatchItem, pf *batch.Preflight) int {
	sio := c.sio
	// Ctrl-C stops handing out reservations; those in flight finish and
	// are recorded, so the batch resumes cleanly.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var prog *batch.Progress
	switch {
	case isTerminal(sio.Stderr) || sio.stderrTerminal:
		prog = batch.NewProgress(sio.Stderr, true)
	case !c.flags.json:
		prog = batch.NewProgress(sio.Stdout, false)
	}
	if prog != nil {
		rn.Progress = prog.Event
	}
	// The captures themselves are not cancelled by Ctrl-C: a request cut
	// off on its way is an unknown outcome.
	out, err := rn.Run(ctx, b, items)
	if prog != nil {
		prog.Finish()
	}
	if c.flags.json {
		_ = writeJSON(sio.Stdout, out.JSON(pf))
	} else {
		fmt.Fprintln(sio.Stdout)
		batch.WriteOutcome(sio.Stdout, out)
	}
	if err != nil {
		fmt.Fprintf(sio.Stderr, "paydesk %s: %s\n", c.name, clean(err.Error()))
		return exitFailed
	}
	switch {
	case out.Counts[store.ItemOutcomeUnknown] > 0:
		return exitOutcomeUnknown
	case out.Counts[store.ItemFailed] > 0 || out.Counts[store.ItemRefused] > 0 || out.Interrupted ||
		(pf != nil && len(pf.Refused) > 0) || errors.Is(ctx.Err(), context.Canceled):
		return exitFailed
	}
	return exitOK
}
