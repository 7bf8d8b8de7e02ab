package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"paydesk/store"
)

// dbCmd groups the commands for a team's database: migrate its schema,
// copy a one-person cache into it.
func dbCmd(sio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "The store: check or compact a cache file, migrate a team's database, copy a cache file into it",
		Long: `'paydesk db check' checks a cache file page by page and lists what is damaged; 'paydesk db compact'
writes it again on full pages.
A team shares one PostgreSQL database (--db postgres://…) instead of a cache file per person.
paydesk migrates the schema when it opens the database; a role that may not change the schema opens it
only once an owner has run 'paydesk db migrate'. 'paydesk db copy' moves a one-person cache file in.`,
	}
	cmd.AddCommand(dbMigrateCmd(sio), dbCopyCmd(sio), dbCheckCmd(sio), dbCompactCmd(sio))
	return cmd
}

func dbMigrateCmd(sio IO) *cobra.Command {
	var relational bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the database's schema up to this paydesk (as a role that may change it)",
		Long: `Bring the database's schema up to this paydesk and convert the records of a database an older paydesk
wrote (layout 7) into the typed relations people can query (paydesk_reservations, paydesk_lines,
paydesk_transactions, paydesk_pushes, paydesk_audit, …). The conversion is resumable: run it again to
finish one that was cut short. Close the older paydesks first: one still running on the old tables
would write where nothing reads.`,
		Example: "paydesk db migrate --db postgres://paydesk_owner@db.example.com/paydesk",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := loadLayers(cmd.Flags(), getenvOf(sio))
			if err != nil {
				fmt.Fprintf(sio.Stderr, "paydesk db migrate: %v\n", err)
				return exit(exitUsage)
			}
			dsn := l.value("db")
			if !store.IsPostgresURL(dsn) {
				fmt.Fprintln(sio.Stderr, "paydesk db migrate: --db must be a postgres:// URL (a cache file migrates itself when opened)")
				return exit(exitUsage)
			}
			db, err := store.Open(dsn, store.Options{})
			if err != nil {
				fmt.Fprintf(sio.Stderr, "paydesk db migrate: %v\n", err)
				return exit(exitFailed)
			}
			defer db.Close()
			fmt.Fprintf(sio.Stdout, "%s: the records are typed relations (paydesk_reservations, paydesk_lines, paydesk_transactions, paydesk_pushes, paydesk_audit, …) (docs/team.md)\n",
				store.RedactURL(dsn))
			if m := db.Migrated(); len(m) > 0 {
				fmt.Fprintf(sio.Stdout, "%s: applied %d schema migrations (%s); the schema is now current (store layout %d)\n",
					store.RedactURL(dsn), len(m), strings.Join(m, ", "), store.SchemaVersion)
			} else {
				fmt.Fprintf(sio.Stdout, "%s: schema is current, nothing to do (store layout %d)\n", store.RedactURL(dsn), store.SchemaVersion)
			}
			return nil
		},
	}
	addFlags(cmd.Flags(), "db")
	// --relational chose the native engine while it was opt-in; scripts
	// that still pass it keep working, told it is the default now.
	cmd.Flags().BoolVar(&relational, "relational", false, "")
	_ = cmd.Flags().MarkDeprecated("relational", "the records are always converted into typed relations now")
	return cmd
}

func dbCopyCmd(sio IO) *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "copy --from FILE --to postgres://…",
		Short: "Copy a cache file into a team's database (idempotent: run it again to finish an interrupted copy)",
		Long: `Copy every record of a one-person cache file (reservations, transactions, pushes, the journal, the
audit log, orders, batches) into a PostgreSQL database. The same keys get the same values, so running
it again is harmless and finishes a copy that was cut short. Close the console that holds the file first.`,
		Example: "paydesk db copy --from ~/.local/share/paydesk/paydesk.db --to postgres://paydesk_owner@db.example.com/paydesk",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if store.IsPostgresURL(from) || !store.IsPostgresURL(to) {
				fmt.Fprintln(sio.Stderr, "paydesk db copy: --from is a cache file, --to a postgres:// URL")
				return exit(exitUsage)
			}
			src, err := store.Open(from, store.Options{LockTimeout: 500 * time.Millisecond})
			if err != nil {
				fmt.Fprintf(sio.Stderr, "paydesk db copy: %v\n", err)
				return exit(exitFailed)
			}
			defer src.Close()
			start := time.Now()
			total := 0
			err = src.CopyInto(cmd.Context(), to, func(bucket string, n int) {
				total += n
				if n > 0 {
					fmt.Fprintf(sio.Stdout, "  %-16s %d\n", bucket, n)
				}
			})
			if err != nil {
				fmt.Fprintf(sio.Stderr, "paydesk db copy: %v (run it again to finish)\n", err)
				return exit(exitFailed)
			}
			fmt.Fprintf(sio.Stdout, "copied %d records from %s to %s in %s\n", total, from, store.RedactURL(to), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the cache file to copy")
	cmd.Flags().StringVar(&to, "to", "", "the team's database, postgres://…")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// dbCheckCmd checks a cache file without opening it for writing: what
// Open checks after a close that was not clean, on demand.
func dbCheckCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "db check", sio: sio}
	cmd := c.command("check", "Check a cache file page by page: exit 1 and list the damage when it is damaged", cobra.NoArgs,
		func(_ context.Context, c *cmdContext) int { return runDBCheck(c) })
	cmd.Long = `Check a cache file page by page without writing to it: its meta pages against its size, every page
reachable from its root and its freelist, then bbolt's own check (key order, pages neither used nor
free). A damaged file is listed and the command exits 1. paydesk runs the same check when it opens a
cache whose last close was not clean (and every cache up to 64 MiB).`
	cmd.Example = "paydesk db check\npaydesk db check --db ./shop.db"
	addFlags(cmd.Flags(), "db")
	return cmd
}

func runDBCheck(c *cmdContext) int {
	set, err := c.settings()
	if err != nil {
		c.fail(err)
		return exitUsage
	}
	if store.IsPostgresURL(set.DB) {
		return c.usage("--db is a PostgreSQL database, which checks its own pages (its amcheck extension); give a cache file")
	}
	problems, err := store.CheckFile(set.DB, 500*time.Millisecond)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			err = fmt.Errorf("%w\n%s", err, lockedHint)
		}
		return c.fail(err)
	}
	out := c.sio.Stdout
	if len(problems) == 0 {
		fmt.Fprintf(out, "cache %s: no damage found\n", clean(set.DB))
		return exitOK
	}
	fmt.Fprintf(out, "cache %s is damaged:\n", clean(set.DB))
	for _, p := range problems {
		fmt.Fprintln(out, "  ! "+clean(p))
	}
	fmt.Fprintf(out, "To recover: move it aside (mv %[1]s %[1]s.damaged) and put your last good copy (a backup) in its place;\n"+
		"or let paydesk start a new cache, which holds what the gateway sends from then on, not what the damaged one held.\n", clean(set.DB))
	return exitFailed
}

func dbCompactCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "db compact", sio: sio}
	cmd := c.command("compact", "Write a cache file again on full pages, without the pages it freed: it takes less disk", cobra.NoArgs,
		func(ctx context.Context, c *cmdContext) int { return runDBCompact(ctx, c) })
	// It replaces the file: never inside the console or serve that owns
	// it, which would hold the file it replaces.
	delete(cmd.Annotations, ownerRuns)
	cmd.Long = `Write a cache file again with every key in order on full pages and without the free pages its
commits left, then put the copy in its place. A cache grows with keys that land all over its trees
(transaction keys, reservation numbers), whose pages are split half full: a year of a shop's orders
and pushes takes about two thirds more than its compacted copy. The cache is opened and checked as
paydesk opens it and held throughout: close the console, serve or listen that has it first. The copy
needs as much free disk beside the cache as the compacted file takes.`
	cmd.Example = "paydesk db compact\npaydesk db compact --db ./shop.db"
	addFlags(cmd.Flags(), "db")
	return cmd
}

func runDBCompact(ctx context.Context, c *cmdContext) int {
	set, err := c.settings()
	if err != nil {
		c.fail(err)
		return exitUsage
	}
	if store.IsPostgresURL(set.DB) {
		return c.usage("--db is a PostgreSQL database, which compacts itself (autovacuum, VACUUM FULL); give a cache file")
	}
	before, after, err := store.CompactFile(set.DB, 500*time.Millisecond, upgradeNotice(c.sio.Stderr, "paydesk db compact", set.DB))
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			if owned := ownedError(ctx, err, set, getenvOf(c.sio), "db compact"); owned != err {
				err = owned
			} else {
				err = fmt.Errorf("%w\n%s", err, lockedHint)
			}
		}
		return c.fail(err)
	}
	fmt.Fprintf(c.sio.Stdout, "cache %s compacted: %s → %s (%.0f %%)\n", clean(set.DB), megabytes(before), megabytes(after), 100*float64(after)/float64(max(before, 1)))
	return exitOK
}

// megabytes says a file's size in MB (10⁶ bytes), one decimal.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
