package postgres

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The queued writes of the push inbox's applier (prefetch.go) are a push's
// row in the push log and the transaction it creates, two statements a
// push. On the server each statement costs its bind, its executor's start
// and its round through the plan cache besides its rows; the applier's
// queue holds a batch's pushes, so flush sends each run of them as one
// INSERT of many rows a table, and a batch's push rows, when there are
// copyMin or more, by COPY ahead of them: the rows, their order within a
// table and the transaction's outcome are the same, at one statement a
// table. The queue holds no write that reads or changes the push log
// (pushCopy counts on it): its statements are the rows of the push log
// and the transactions, the inbox's marks and the counters.

// queuedWrite is a statement waiting in Tx.queue.
type queuedWrite struct {
	what string
	sql  string
	args []any
}

// multiRow is a single-row INSERT that flush may send as one of many rows:
// head is the statement up to VALUES, tail what follows the row (an ON
// CONFLICT clause), cols the parameters of a row.
type multiRow struct {
	head, tail string
	cols       int
}

// multiRows are the statements flush joins, by their single-row text.
var multiRows = map[string]multiRow{
	pgPushInsert: {head: `INSERT INTO paydesk_pushes (` + pgPushCols + `, push) VALUES `, cols: strings.Count(pgPushCols, ",") + 2},
	pgTxUpsert: {head: `INSERT INTO paydesk_transactions (` + pgTxCols + `) VALUES `,
		tail: ` ON CONFLICT (key) DO UPDATE SET ` + upsertSet(strings.TrimPrefix(pgTxCols, "key, ")), cols: strings.Count(pgTxCols, ",") + 1},
}

// maxRows bounds the rows of one joined statement. Joined statements have
// a row count that is a power of two up to it, so a connection prepares at
// most a few texts of each (pgx caches the statements it prepared by text).
const maxRows = 64

// The push rows of a batch go by COPY when there are copyMin or more.
// A push row is the largest a push writes (its body twice, as bytes and
// as jsonb, and its header: 1.7 KB); sent as INSERT parameters, pgx
// builds each statement's parameters in a buffer it starts again at 256
// bytes and the whole round trip in one it starts again at 1 KB, so a row's
// bytes are copied and allocated several times over, and the server plans a
// VALUES list of 1,664 parameters. COPY writes the rows once into 64 KB
// chunks and the server reads them as rows: BenchmarkInboxDrain, in
// docs/store.md. Its own round trip is why a few rows still go as INSERT.
const copyMin = 16

// pushCopyCols are the columns of pgPushInsert, in its order.
var pushCopyCols = columns(pgPushCols + ", push")

// pushCopy is the push rows of q that go by COPY, and q without them; no
// rows when there are fewer than copyMin, or when another write of q names
// the push log. The rows keep their order; no other write reads the push
// log, so they may go before the rest.
func pushCopy(q []queuedWrite) (rows [][]any, what string, rest []queuedWrite) {
	var pushes []queuedWrite
	for _, w := range q {
		switch {
		case w.sql == pgPushInsert:
			pushes = append(pushes, w)
		case strings.Contains(w.sql, "paydesk_pushes"):
			return nil, "", q // another write of the push log: the rows keep their place
		}
	}
	if len(pushes) < copyMin {
		return nil, "", q
	}
	rows = make([][]any, len(pushes))
	for i, w := range pushes {
		rows[i] = w.args
	}
	for _, w := range q {
		if w.sql != pgPushInsert {
			rest = append(rest, w)
		}
	}
	return rows, names(pushes), rest
}

// copyPushes writes rows into the push log by COPY.
func (t *Tx) copyPushes(rows [][]any, what string) error {
	_, err := t.tx.CopyFrom(t.ctx, pgx.Identifier{"paydesk_pushes"}, pushCopyCols, pgx.CopyFromRows(rows))
	if err != nil {
		return t.fail(fmt.Errorf("%s: %w", what, withDetail(err)))
	}
	return nil
}

// coalesce turns the queue into the statements flush sends. A run of
// joinable writes with no other write between them goes out as one
// statement a table, the tables in the order they first come in the run;
// any other write keeps its place and ends the run. The rows a run puts
// in a table keep their order, and within a run no two rows of a table
// have the same key (the prefetch queues a transaction only under a key
// with no row, once), so the joined upsert changes each row once.
func coalesce(q []queuedWrite) []queuedWrite {
	var out []queuedWrite
	for i := 0; i < len(q); {
		if _, ok := multiRows[q[i].sql]; !ok {
			out = append(out, q[i])
			i++
			continue
		}
		j := i
		for j < len(q) {
			if _, ok := multiRows[q[j].sql]; !ok {
				break
			}
			j++
		}
		var order []string
		rows := map[string][]queuedWrite{}
		for _, w := range q[i:j] {
			if _, seen := rows[w.sql]; !seen {
				order = append(order, w.sql)
			}
			rows[w.sql] = append(rows[w.sql], w)
		}
		for _, sql := range order {
			out = appendJoined(out, multiRows[sql], rows[sql])
		}
		i = j
	}
	return out
}

// appendJoined appends ws as statements of at most maxRows rows, each a
// power of two, the largest first.
func appendJoined(out []queuedWrite, m multiRow, ws []queuedWrite) []queuedWrite {
	for len(ws) > 0 {
		n := maxRows
		for n > len(ws) {
			n /= 2
		}
		if n == 1 {
			out = append(out, ws[0])
			ws = ws[1:]
			continue
		}
		out = append(out, joined(m, ws[:n]))
		ws = ws[n:]
	}
	return out
}

// joined is the statement writing the rows of ws, which share m.
func joined(m multiRow, ws []queuedWrite) queuedWrite {
	var b strings.Builder
	args := make([]any, 0, len(ws)*m.cols)
	b.WriteString(m.head)
	p := 1
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range m.cols {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(p))
			p++
		}
		b.WriteByte(')')
		args = append(args, w.args...)
	}
	b.WriteString(m.tail)
	return queuedWrite{what: names(ws), sql: b.String(), args: args}
}

// names names the writes ws in an error: the first three and how many
// more.
func names(ws []queuedWrite) string {
	var whats []string
	for _, w := range ws[:min(3, len(ws))] {
		whats = append(whats, w.what)
	}
	what := strings.Join(whats, ", ")
	if len(ws) > 3 {
		what += " and " + strconv.Itoa(len(ws)-3) + " more"
	}
	return what
}

// withDetail adds the server's detail to its error: for a statement of
// many rows it names the row that failed ("Key (key)=(…) already exists").
func withDetail(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Detail != "" {
		return detailError{err: err, detail: pe.Detail}
	}
	return err
}

type detailError struct {
	err    error
	detail string
}

func (e detailError) Error() string { return e.err.Error() + ": " + e.detail }
func (e detailError) Unwrap() error { return e.err }
