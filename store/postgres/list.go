package postgres

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/query"
	"paydesk/store/domain"
)

// SearchText is a search text with its field separators as 0x01 (text
// cannot hold 0x00; a word never holds either).
func SearchText(b []byte) string {
	for i, c := range b {
		if c == 0 {
			b[i] = 1
		}
	}
	return string(b)
}

// LikeEscape escapes LIKE's wildcards in s.
func LikeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// CountTimeout bounds a count: past it the planner's estimate is the
// answer (a common word over a million rows).
const CountTimeout = "2s"

// IsReadOnlyRole: the role may not write (an agent who only looks); the
// list table is filled by the next paydesk that may.
func IsReadOnlyRole(err error) bool {
	var pe interface{ SQLState() string }
	return errors.As(err, &pe) && (pe.SQLState() == "42501" || pe.SQLState() == "25006")
}

// IsTimeout: the statement ran out of its statement_timeout (57014).
func IsTimeout(err error) bool {
	var pe interface{ SQLState() string }
	return errors.As(err, &pe) && pe.SQLState() == "57014"
}

// InboxWaitingSQL reads up to $1 inbox rows not applied yet after id $2,
// oldest first.
const InboxWaitingSQL = `SELECT id, rec FROM paydesk_push_inbox WHERE push_id IS NULL AND id > $2 ORDER BY id LIMIT $1`

// InboxMarkSQL marks inbox rows ($1) applied with their push IDs ($2) and
// results ($3).
const InboxMarkSQL = `UPDATE paydesk_push_inbox AS i SET push_id = u.push_id, result = u.result, rec = NULL
FROM unnest($1::bigint[], $2::bigint[], $3::bytea[]) AS u(id, push_id, result) WHERE i.id = u.id`

// fieldRegexp is a PostgreSQL regular expression that finds value in field
// i of a search text whose separators are 0x01 (SearchText).
func fieldRegexp(i int, value string) string {
	var b strings.Builder
	b.WriteString("^")
	if i > 0 {
		b.WriteString("([^\x01]*\x01){" + strconv.Itoa(i) + "}")
	}
	b.WriteString("[^\x01]*")
	for _, c := range []byte(value) {
		if c < 0x80 && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// SQLCols makes the SQL of Where's conditions for a list table; cols names
// its columns and how amounts and times are kept.
type SQLCols struct {
	Amount, Created string
	// CreatedOrder is the time as the list's indexes hold it (an unknown
	// time coalesced), which a created range is asked of, so that the
	// index's range serves it; the row's time must also be known (Created
	// IS NOT NULL). Empty: Created.
	CreatedOrder string
	// Cents: the amount column is in cents (bigint); Nanos: the time
	// column is Unix nanoseconds, zeroNano for none (the kv lists).
	Cents, Nanos bool
	// State is a state's condition.
	State func(st domain.State, arg func(any) string) string
	// Customer, Email, Service: the search text's fields (-1: none).
	Customer, Email, Service int
}

// Where is the SQL of w's conditions, their arguments added with arg.
func (c *SQLCols) Where(w *query.Query, arg func(any) string) []string {
	var conds []string
	if w.State != "" && c.State != nil {
		conds = append(conds, c.State(domain.WhereState(w.State), arg))
	}
	if a := w.Amount; a != nil {
		val := func(d decimal.Decimal) string {
			if c.Cents {
				return arg(d.Shift(2).String()) + "::numeric"
			}
			return arg(d.String()) + "::numeric"
		}
		if a.HasMin {
			op := " >= "
			if a.MinExcl {
				op = " > "
			}
			conds = append(conds, c.Amount+op+val(a.Min))
		}
		if a.HasMax {
			op := " <= "
			if a.MaxExcl {
				op = " < "
			}
			conds = append(conds, c.Amount+op+val(a.Max))
		}
	}
	if t := w.Created; t != nil {
		at := func(x time.Time) string {
			if c.Nanos {
				return arg(x.UnixNano())
			}
			return arg(x)
		}
		if c.Nanos {
			conds = append(conds, c.Created+" <> "+arg(zeroNano))
		} else {
			conds = append(conds, c.Created+" IS NOT NULL")
		}
		in := c.Created
		if c.CreatedOrder != "" {
			in = c.CreatedOrder
		}
		if !t.From.IsZero() {
			conds = append(conds, in+" >= "+at(t.From))
		}
		if !t.To.IsZero() {
			conds = append(conds, in+" < "+at(t.To))
		}
	}
	for _, f := range []struct {
		i      int
		values []string
	}{{c.Customer, w.Customer}, {c.Email, w.Email}, {c.Service, w.Service}} {
		for _, v := range f.values {
			if f.i >= 0 {
				conds = append(conds, "search ~ "+arg(fieldRegexp(f.i, domain.FoldValue(v))))
			}
		}
	}
	return conds
}
