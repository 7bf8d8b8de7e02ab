package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"paydesk/internal/fold"
	"paydesk/store/domain"
)

// The ledger on the native PostgreSQL engine: reservations, their lines,
// transactions, the owners of gateway keys and orphan data requests, one
// typed row each (migrations/0009). A record is written whole — its row
// and, for a reservation, its lines — and read back as the same domain
// value the bucket engine's JSON and binary records give, with two
// differences a database's types make: times have microseconds (the
// sub-microsecond digits of a clock are dropped) and come back in the
// local zone; and a text holding a NUL byte, which PostgreSQL's text and
// jsonb cannot store, is refused with an error that names the field.

// pgMoneyMax bounds what numeric(14,2) holds.
var pgMoneyMax = decimal.New(1, 12)

// pgMoney is an amount for a numeric(14,2) column: an amount with more than
// two decimals or twelve digits before the point would be rounded or
// refused by the database, so it is refused here, naming the field.
func pgMoney(field string, d decimal.Decimal) (pgtype.Numeric, error) {
	if !d.Equal(d.Round(2)) {
		return pgtype.Numeric{}, fmt.Errorf("%s %s: the database keeps amounts to the cent (two decimals)", field, d.String())
	}
	if d.Abs().GreaterThanOrEqual(pgMoneyMax) {
		return pgtype.Numeric{}, fmt.Errorf("%s %s: the database keeps amounts below 1,000,000,000,000", field, d.String())
	}
	return pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}, nil
}

// pgVat is a VAT percentage for numeric(5,2).
func pgVat(field string, d decimal.Decimal) (pgtype.Numeric, error) {
	if !d.Equal(d.Round(2)) || d.Abs().GreaterThanOrEqual(decimal.New(1, 3)) {
		return pgtype.Numeric{}, fmt.Errorf("%s %s: the database keeps VAT as a percentage below 1000 with two decimals", field, d.String())
	}
	return pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}, nil
}

// decOf is a numeric column's value as a decimal (zero for NULL).
func decOf(n pgtype.Numeric) decimal.Decimal {
	if !n.Valid || n.Int == nil {
		return decimal.Zero
	}
	return decimal.NewFromBigInt(new(big.Int).Set(n.Int), n.Exp)
}

// pgTextErr checks the texts of a record for what PostgreSQL's text cannot
// hold (a NUL byte), naming the first field that has one. Invalid UTF-8 is
// stored with U+FFFD in its place, as the JSON records of the bucket
// engine keep it (see pgText).
func pgTextErr(what string, fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if strings.IndexByte(fields[i+1], 0) >= 0 {
			return fmt.Errorf("%s: %s holds a NUL byte, which the database's text cannot store", what, fields[i])
		}
	}
	return nil
}

// pgText is s as the database's text keeps it: valid UTF-8.
func pgText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// pgTime is a time for a timestamptz column; the zero time is NULL.
func pgTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// timeOf is a timestamptz column's value; NULL is the zero time.
func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// pgJSON is v as a jsonb value; nil and empty-nil values are NULL. A NUL
// in a string is refused (jsonb cannot hold \u0000).
func pgJSON(what string, v any, null bool) ([]byte, error) {
	if null {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if strings.Contains(string(b), `\u0000`) {
		return nil, fmt.Errorf("%s holds a NUL byte, which the database's jsonb cannot store", what)
	}
	return b, nil
}

// pgStrings is a text[] value: nil stays NULL, an empty list '{}'.
func pgStrings(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = pgText(s)
	}
	return out
}

// ---- reservations ----

// pgResSelect are the columns a reservation is read from, in scanRes's
// order.
const pgResSelect = `key, reservation_number, invoice, currency, is_test, customer, email, country,
	billing, shipping, reserve, lines_known, order_source, unsplit_captured, invoice_numbers, captured_in_full,
	status, sub_code, status_time, created, redirect_url, requests, transaction_keys, cancelled,
	captured, refunded, outcome_unknown, unknown_ops, updated`

// scanRes reads a reservation row (pgResSelect) without its lines.
func scanRes(row pgx.Row) (*domain.Reservation, error) {
	var r domain.Reservation
	var billing, shipping, reserve, requests []byte
	var unsplit, captured, refunded pgtype.Numeric
	var statusTime, created, updated *time.Time
	var unknown []int64
	err := row.Scan(&r.Key, &r.ReservationNumber, &r.Invoice, &r.Currency, &r.IsTest, &r.CustomerName, &r.CustomerEmail, &r.Country,
		&billing, &shipping, &reserve, &r.LinesKnown, &r.OrderSource, &unsplit, &r.InvoiceNumbers, &r.CapturedInFull,
		&r.Status.Code, &r.Status.SubCode, &statusTime, &created, &r.RedirectURL, &requests, &r.Transactions, &r.Cancelled,
		&captured, &refunded, &r.OutcomeUnknown, &unknown, &updated)
	if err != nil {
		return nil, err
	}
	r.UnsplitCaptured, r.CapturedAmount, r.RefundedAmount = decOf(unsplit), decOf(captured), decOf(refunded)
	r.Status.Time, r.Created, r.Updated = timeOf(statusTime), timeOf(created), timeOf(updated)
	if unknown != nil {
		r.UnknownOps = make([]uint64, len(unknown))
		for i, id := range unknown {
			r.UnknownOps[i] = uint64(id)
		}
	}
	for _, j := range []struct {
		name string
		b    []byte
		v    any
	}{{"billing", billing, &r.Billing}, {"shipping", shipping, &r.Shipping}, {"reserve", reserve, &r.Original}, {"requests", requests, &r.Requests}} {
		if j.b == nil {
			continue
		}
		if err := json.Unmarshal(j.b, j.v); err != nil {
			return nil, fmt.Errorf("reservation %s: %s: %w", r.Key, j.name, err)
		}
	}
	// A request's status time is kept in the requests' JSON with the
	// offset it came with; the columns' times read back in UTC. The rules
	// copy a status from one to the other, so a record would read
	// otherwise by the order its pushes came in: every time reads in UTC.
	for i := range r.Requests {
		r.Requests[i].Status.Time = r.Requests[i].Status.Time.UTC()
	}
	if r.LinesKnown {
		r.Lines = []domain.Line{}
	}
	return &r, nil
}

// reservationsWhere reads the reservations a condition selects, in the
// given order, with their lines.
func (t *Tx) reservationsWhere(cond, order string, args ...any) ([]*domain.Reservation, error) {
	rows, err := t.query(`SELECT `+pgResSelect+` FROM paydesk_reservations WHERE `+cond+` ORDER BY `+order, args...)
	if err != nil {
		return nil, err
	}
	var out []*domain.Reservation
	byKey := map[string]*domain.Reservation{}
	var keys []string
	for rows.Next() {
		r, err := scanRes(rows)
		if err != nil {
			rows.Close()
			return nil, t.fail(err)
		}
		out = append(out, r)
		// Lines are read whether or not they are known: a record written
		// before LinesKnown existed has lines without it, and reads so.
		byKey[r.Key] = r
		keys = append(keys, r.Key)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	if len(keys) == 0 {
		return out, nil
	}
	lrows, err := t.query(`SELECT reservation_key, article_number, title, type, price, vat, reserved, captured, cancelled, refunded
		FROM paydesk_lines WHERE reservation_key = ANY($1) ORDER BY reservation_key, position`, keys)
	if err != nil {
		return nil, err
	}
	defer lrows.Close()
	for lrows.Next() {
		var key string
		var l domain.Line
		var price, vat pgtype.Numeric
		if err := lrows.Scan(&key, &l.ArticleNumber, &l.Title, &l.Type, &price, &vat, &l.Reserved, &l.Captured, &l.Cancelled, &l.Refunded); err != nil {
			return nil, t.fail(err)
		}
		l.Price, l.Vat = decOf(price), decOf(vat)
		r := byKey[key]
		r.Lines = append(r.Lines, l)
	}
	if err := lrows.Err(); err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

// Reservation is RepoTx.Reservation: the row and its lines.
func (t *Tx) Reservation(key string) (*domain.Reservation, error) {
	rs, err := t.reservationsWhere(`key = $1`, `key`, key)
	if err != nil {
		return nil, fmt.Errorf("reservation %s: %w", key, err)
	}
	if len(rs) == 0 {
		return nil, nil
	}
	return rs[0], nil
}

// ReservationLedger is RepoTx.ReservationLedger: the whole reservation
// (a row and its lines are one read either way).
func (t *Tx) ReservationLedger(key string) (*domain.Reservation, error) { return t.Reservation(key) }

// ReservationKeyByNumber is RepoTx.ReservationKeyByNumber.
func (t *Tx) ReservationKeyByNumber(number string) (string, error) {
	if number == "" {
		return "", nil
	}
	var key string
	if _, err := t.scanRow(`SELECT reservation_key FROM paydesk_reservation_numbers WHERE reservation_number = $1`, []any{number}, &key); err != nil {
		return "", fmt.Errorf("reservation number %s: %w", number, err)
	}
	return key, nil
}

// ReservationKeysByInvoice is RepoTx.ReservationKeysByInvoice.
func (t *Tx) ReservationKeysByInvoice(invoice string) ([]string, error) {
	if invoice == "" {
		return nil, nil
	}
	keys, err := t.strings(`SELECT key FROM paydesk_reservations WHERE invoice = $1 ORDER BY key`, invoice)
	if err != nil {
		return nil, fmt.Errorf("reservations of invoice %s: %w", invoice, err)
	}
	return keys, nil
}

// OwnerOf is RepoTx.OwnerOf.
func (t *Tx) OwnerOf(key string) (string, error) {
	var owner string
	if _, err := t.scanRow(`SELECT reservation_key FROM paydesk_key_owners WHERE key = $1`, []any{key}, &owner); err != nil {
		return "", fmt.Errorf("owner of %s: %w", key, err)
	}
	return owner, nil
}

// strings reads a one-column query of text.
func (t *Tx) strings(sql string, args ...any) ([]string, error) {
	return rowsOf(t, pgx.RowTo[string], sql, args...)
}

// resArgs are a reservation's row values, in pgResInsert's column order.
func resArgs(r *domain.Reservation, f *fold.Folder) ([]any, error) {
	what := "reservation " + r.Key
	if err := pgTextErr(what, "key", r.Key, "reservation number", r.ReservationNumber, "invoice", r.Invoice,
		"currency", r.Currency, "customer", r.CustomerName, "e-mail", r.CustomerEmail, "country", r.Country,
		"order source", r.OrderSource, "redirect URL", r.RedirectURL, "status subcode", r.Status.SubCode); err != nil {
		return nil, err
	}
	s := r.Summary()
	var amount, remaining pgtype.Numeric
	var err error
	if r.LinesKnown {
		if amount, err = pgMoney(what+": amount", s.Amount); err != nil {
			return nil, err
		}
	}
	if r.LinesKnown || (s.State != domain.StateReserved && s.State != domain.StatePartlyCaptured) {
		if remaining, err = pgMoney(what+": remaining", s.Remaining); err != nil {
			return nil, err
		}
	}
	captured, err := pgMoney(what+": captured", r.CapturedAmount)
	if err != nil {
		return nil, err
	}
	refunded, err := pgMoney(what+": refunded", r.RefundedAmount)
	if err != nil {
		return nil, err
	}
	unsplit, err := pgMoney(what+": unsplit captured", r.UnsplitCaptured)
	if err != nil {
		return nil, err
	}
	billing, err := pgJSON(what+": billing address", r.Billing, false)
	if err != nil {
		return nil, err
	}
	shipping, err := pgJSON(what+": shipping address", r.Shipping, false)
	if err != nil {
		return nil, err
	}
	reserve, err := pgJSON(what+": the Reserve as sent", r.Original, false)
	if err != nil {
		return nil, err
	}
	requests, err := pgJSON(what+": requests", r.Requests, r.Requests == nil)
	if err != nil {
		return nil, err
	}
	for _, ss := range [][]string{r.InvoiceNumbers, r.Transactions} {
		for _, x := range ss {
			if err := pgTextErr(what, "a key or invoice number", x); err != nil {
				return nil, err
			}
		}
	}
	var unknown []int64
	if r.UnknownOps != nil {
		unknown = make([]int64, len(r.UnknownOps))
		for i, id := range r.UnknownOps {
			unknown[i] = int64(id)
		}
	}
	return []any{pgText(r.Key), pgText(r.ReservationNumber), pgText(r.Invoice), string(s.State), int16(domain.StateRank(s.State)),
		r.Status.Code, pgText(r.Status.SubCode), pgTime(r.Status.Time), amount, captured, refunded, remaining, unsplit,
		pgText(r.Currency), pgText(r.CustomerName), pgText(strings.ToLower(r.CustomerName)), pgText(r.CustomerEmail), pgText(r.Country),
		r.IsTest, pgTime(r.Created), pgTime(r.Updated), r.LinesKnown, r.Cancelled, r.CapturedInFull, r.OutcomeUnknown,
		domain.OrderMissing(&s), pgText(r.OrderSource), pgText(r.RedirectURL), pgStrings(r.InvoiceNumbers), pgStrings(r.Transactions),
		unknown, SearchText(domain.AppendSearchText(nil, &s, f)), billing, shipping, reserve, requests}, nil
}

// pgResCols are paydesk_reservations' columns in resArgs's order.
const pgResCols = `key, reservation_number, invoice, state, state_rank,
	status, sub_code, status_time, amount, captured, refunded, remaining, unsplit_captured,
	currency, customer, customer_sort, email, country, is_test, created, updated, lines_known, cancelled,
	captured_in_full, outcome_unknown, order_missing, order_source, redirect_url, invoice_numbers,
	transaction_keys, unknown_ops, search, billing, shipping, reserve, requests`

const pgResInsert = `INSERT INTO paydesk_reservations (` + pgResCols + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
	$23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36)`

// pgResUpsert replaces the row of a reservation written before.
var pgResUpsert = pgResInsert + ` ON CONFLICT (key) DO UPDATE SET ` + upsertSet(`reservation_number, invoice, state, state_rank,
	status, sub_code, status_time, amount, captured, refunded, remaining, unsplit_captured,
	currency, customer, customer_sort, email, country, is_test, created, updated, lines_known, cancelled,
	captured_in_full, outcome_unknown, order_missing, order_source, redirect_url, invoice_numbers,
	transaction_keys, unknown_ops, search, billing, shipping, reserve, requests`)

// columns are the names of a column list ("key, kind,\n\tstatus").
func columns(list string) []string {
	cs := strings.Split(list, ",")
	for i, c := range cs {
		cs[i] = strings.TrimSpace(c)
	}
	return cs
}

func upsertSet(cols string) string {
	var b strings.Builder
	for i, c := range columns(cols) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + " = excluded." + c)
	}
	return b.String()
}

// lineArgs are the array arguments of pgLinesInsert for r's lines.
func lineArgs(r *domain.Reservation) ([]any, error) {
	n := len(r.Lines)
	pos, reserved, captured, cancelled, refunded := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	numbers, titles, types := make([]string, n), make([]string, n), make([]string, n)
	prices, vats := make([]pgtype.Numeric, n), make([]pgtype.Numeric, n)
	for i, l := range r.Lines {
		what := fmt.Sprintf("reservation %s: line %d", r.Key, i+1)
		if err := pgTextErr(what, "article number", l.ArticleNumber, "title", l.Title, "type", l.Type); err != nil {
			return nil, err
		}
		var err error
		if prices[i], err = pgMoney(what+": price", l.Price); err != nil {
			return nil, err
		}
		if vats[i], err = pgVat(what+": VAT", l.Vat); err != nil {
			return nil, err
		}
		pos[i] = int32(i)
		numbers[i], titles[i], types[i] = pgText(l.ArticleNumber), pgText(l.Title), pgText(l.Type)
		reserved[i], captured[i], cancelled[i], refunded[i] = int32(l.Reserved), int32(l.Captured), int32(l.Cancelled), int32(l.Refunded)
	}
	return []any{pgText(r.Key), pgText(r.ReservationNumber), pos, numbers, titles, types, prices, vats, reserved, captured, cancelled, refunded}, nil
}

// pgLineCols are paydesk_lines' columns in lineArgs's order.
const pgLineCols = `reservation_key, reservation_number, position, article_number, title, type,
	price, vat, reserved, captured, cancelled, refunded`

const pgLinesInsert = `INSERT INTO paydesk_lines (` + pgLineCols + `)
	SELECT $1, $2, * FROM unnest($3::integer[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::numeric[],
	$9::integer[], $10::integer[], $11::integer[], $12::integer[])`

// PutReservation is RepoTx.PutReservation: r's row (which is also its row
// of the reservation list) and lines as they are — the rules recomputed
// the ledger — its number, and its requests' and transactions' keys made
// its own, in one round trip.
func (t *Tx) PutReservation(r *domain.Reservation) (created bool, err error) {
	if t.err != nil {
		return false, t.err
	}
	var b pgx.Batch
	if err := queueReservation(&b, r, &created); err != nil {
		return false, err
	}
	if err := t.flush(); err != nil {
		return false, err
	}
	if err := t.tx.SendBatch(t.ctx, &b).Close(); err != nil {
		return false, t.fail(fmt.Errorf("reservation %s: %w", r.Key, err))
	}
	return created, nil
}

// queueReservation adds to b the statements that put r (PutReservation);
// created, when not nil, is set to whether r is new when b runs.
func queueReservation(b *pgx.Batch, r *domain.Reservation, created *bool) error {
	largs, err := lineArgs(r) // first: a line's price is the cause of a derived amount's trouble
	if err != nil {
		return err
	}
	var f fold.Folder
	args, err := resArgs(r, &f)
	if err != nil {
		return err
	}
	owned := make([]string, 0, len(r.Requests)+len(r.Transactions))
	seen := make(map[string]bool, cap(owned))
	own := func(k string) error {
		if err := pgTextErr("reservation "+r.Key, "a request's or transaction's key", k); err != nil {
			return err
		}
		if k = pgText(k); !seen[k] { // one row may not be upserted twice in a statement
			seen[k] = true
			owned = append(owned, k)
		}
		return nil
	}
	for _, rq := range r.Requests {
		if err := own(rq.Key); err != nil {
			return err
		}
	}
	for _, k := range r.Transactions {
		if err := own(k); err != nil {
			return err
		}
	}
	if created != nil {
		b.Queue(`SELECT NOT EXISTS (SELECT 1 FROM paydesk_reservations WHERE key = $1)`, pgText(r.Key)).QueryRow(func(row pgx.Row) error {
			return row.Scan(created)
		})
	}
	b.Queue(pgResUpsert, args...)
	b.Queue(`DELETE FROM paydesk_lines WHERE reservation_key = $1`, pgText(r.Key))
	if len(r.Lines) > 0 {
		b.Queue(pgLinesInsert, largs...)
	}
	if r.ReservationNumber != "" {
		b.Queue(pgNumberUpsert, pgText(r.ReservationNumber), pgText(r.Key))
	}
	if len(owned) > 0 {
		b.Queue(`INSERT INTO paydesk_key_owners (key, reservation_key) SELECT k, $2 FROM unnest($1::text[]) AS k
			ON CONFLICT (key) DO UPDATE SET reservation_key = excluded.reservation_key
			WHERE paydesk_key_owners.reservation_key <> excluded.reservation_key`, owned, pgText(r.Key))
	}
	return nil
}

// pgNumberUpsert makes a reservation number lead to a reservation.
const pgNumberUpsert = `INSERT INTO paydesk_reservation_numbers (reservation_number, reservation_key) VALUES ($1, $2)
	ON CONFLICT (reservation_number) DO UPDATE SET reservation_key = excluded.reservation_key
	WHERE paydesk_reservation_numbers.reservation_key <> excluded.reservation_key`

// DeleteReservation is RepoTx.DeleteReservation: the row, its lines, and
// the number and owners that lead to it.
func (t *Tx) DeleteReservation(key string) error {
	if t.err != nil {
		return t.err
	}
	var b pgx.Batch
	b.Queue(`DELETE FROM paydesk_reservations WHERE key = $1`, key)
	b.Queue(`DELETE FROM paydesk_reservation_numbers WHERE reservation_key = $1`, key)
	b.Queue(`DELETE FROM paydesk_key_owners WHERE reservation_key = $1`, key)
	if err := t.flush(); err != nil {
		return err
	}
	if err := t.tx.SendBatch(t.ctx, &b).Close(); err != nil {
		return t.fail(fmt.Errorf("delete reservation %s: %w", key, err))
	}
	return nil
}

// pgSummarySelect are the columns of a reservation's list row (scanSummary
// reads them) from paydesk_reservations AS r: the list row is part of the
// reservation's row, its articles are its lines'.
const pgSummarySelect = `r.key, r.reservation_number, r.invoice, r.customer, r.country, r.currency,
	coalesce(r.amount, 0), r.captured, coalesce(r.remaining, 0), r.state, r.created, r.outcome_unknown, r.is_test,
	coalesce((SELECT string_agg(l.article_number || ' ' || l.title, E'\n' ORDER BY l.position)
		FROM paydesk_lines l WHERE l.reservation_key = r.key), ''),
	r.email, array_to_string(r.invoice_numbers, E'\n'), NOT r.lines_known`

// scanSummary reads a list row (pgSummarySelect): what r.Summary() was
// when the reservation was put.
func scanSummary(row pgx.Row) (domain.Summary, error) {
	var s domain.Summary
	var amount, captured, remaining pgtype.Numeric
	var created *time.Time
	var invoiceNumbers *string
	err := row.Scan(&s.Key, &s.ReservationNumber, &s.Invoice, &s.Customer, &s.Country, &s.Currency, &amount, &captured,
		&remaining, &s.State, &created, &s.OutcomeUnknown, &s.IsTest, &s.Articles, &s.Email, &invoiceNumbers, &s.LinesUnknown)
	if err != nil {
		return domain.Summary{}, err
	}
	s.Amount, s.Captured, s.Remaining, s.Created = decOf(amount), decOf(captured), decOf(remaining), timeOf(created)
	if invoiceNumbers != nil {
		s.InvoiceNumbers = *invoiceNumbers
	}
	return s, nil
}

// Summaries is RepoTx.Summaries.
func (t *Tx) Summaries() ([]domain.Summary, error) {
	rows, err := t.query(`SELECT ` + pgSummarySelect + ` FROM paydesk_reservations r ORDER BY r.key`)
	if err != nil {
		return nil, fmt.Errorf("reservation list: %w", err)
	}
	defer rows.Close()
	var out []domain.Summary
	for rows.Next() {
		s, err := scanSummary(rows)
		if err != nil {
			return nil, t.fail(fmt.Errorf("reservation list: %w", err))
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(fmt.Errorf("reservation list: %w", err))
	}
	return out, nil
}

// ---- transactions ----

// pgTxSelect are the columns a transaction is read from, in scanTx's order.
const pgTxSelect = `key, kind, transaction_type, service, invoice, currency, amount, status, sub_code,
	status_time, is_test, reservation_key, reservation_number, invoice_number, payment_key, original, grp, related,
	lines, full_capture, refunded, refunds, provider, has_contact, remainder_amount, customer, op_id, created,
	updated, order_ref, additional, custom, parcels`

func scanTxRow(row pgx.Row) (*domain.Transaction, error) {
	var t domain.Transaction
	var amount, refunded, remainder pgtype.Numeric
	var statusTime, created, updated *time.Time
	var related, lines, additional, custom, parcels []byte
	var opID int64
	err := row.Scan(&t.Key, &t.Kind, &t.TransactionType, &t.ServiceCode, &t.Invoice, &t.Currency, &amount, &t.Status.Code,
		&t.Status.SubCode, &statusTime, &t.IsTest, &t.ReservationKey, &t.ReservationNumber, &t.InvoiceNumber, &t.PaymentKey,
		&t.Original, &t.Group, &related, &lines, &t.FullCapture, &refunded, &t.Refunds, &t.Provider, &t.HasContact,
		&remainder, &t.CustomerName, &opID, &created, &updated, &t.Order, &additional, &custom, &parcels)
	if err != nil {
		return nil, err
	}
	t.Amount, t.Refunded, t.RemainderAmount = decOf(amount), decOf(refunded), decOf(remainder)
	t.Status.Time, t.Created, t.Updated = timeOf(statusTime), timeOf(created), timeOf(updated)
	t.OpID = uint64(opID)
	for _, j := range []struct {
		name string
		b    []byte
		v    any
	}{{"related", related, &t.RelatedTransactions}, {"lines", lines, &t.Lines}, {"additional", additional, &t.Additional},
		{"custom", custom, &t.Custom}, {"parcels", parcels, &t.Parcels}} {
		if j.b == nil {
			continue
		}
		if err := json.Unmarshal(j.b, j.v); err != nil {
			return nil, fmt.Errorf("transaction %s: %s: %w", t.Key, j.name, err)
		}
	}
	return &t, nil
}

// transactionsWhere reads the transactions a condition selects.
func (t *Tx) transactionsWhere(cond, order string, args ...any) ([]*domain.Transaction, error) {
	rows, err := t.query(`SELECT `+pgTxSelect+` FROM paydesk_transactions WHERE `+cond+` ORDER BY `+order, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*domain.Transaction
	for rows.Next() {
		x, err := scanTxRow(rows)
		if err != nil {
			return nil, t.fail(err)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

// Transaction is RepoTx.Transaction.
func (t *Tx) Transaction(key string) (*domain.Transaction, error) {
	if t.pre != nil && t.pre.noTx[key] {
		return nil, nil
	}
	xs, err := t.transactionsWhere(`key = $1`, `key`, key)
	if err != nil {
		return nil, fmt.Errorf("transaction %s: %w", key, err)
	}
	if len(xs) == 0 {
		return nil, nil
	}
	return xs[0], nil
}

// Transactions is RepoTx.Transactions.
func (t *Tx) Transactions() ([]*domain.Transaction, error) {
	xs, err := t.transactionsWhere(`true`, `key`)
	if err != nil {
		return nil, fmt.Errorf("transactions: %w", err)
	}
	return xs, nil
}

// TransactionGroup is RepoTx.TransactionGroup.
func (t *Tx) TransactionGroup(group string) ([]*domain.Transaction, error) {
	if group == "" {
		return nil, nil
	}
	xs, err := t.transactionsWhere(`key = $1 OR grp = $1`, `key`, group)
	if err != nil {
		return nil, fmt.Errorf("gift card group %s: %w", group, err)
	}
	return xs, nil
}

// TransactionKeysByInvoice is RepoTx.TransactionKeysByInvoice: the
// captures and refunds with the invoice (gift cards are not looked up by
// invoice).
func (t *Tx) TransactionKeysByInvoice(invoice string) ([]string, error) {
	if invoice == "" {
		return nil, nil
	}
	keys, err := t.strings(`SELECT key FROM paydesk_transactions WHERE invoice = $1 AND kind IN ('capture', 'refund') ORDER BY key`, invoice)
	if err != nil {
		return nil, fmt.Errorf("transactions of invoice %s: %w", invoice, err)
	}
	return keys, nil
}

// LinkRefund is RepoTx.LinkRefund.
func (t *Tx) LinkRefund(original, refund string) error {
	if err := pgTextErr("refund "+refund, "original", original, "key", refund); err != nil {
		return err
	}
	if err := t.exec(pgRefundInsert, pgText(original), pgText(refund)); err != nil {
		return fmt.Errorf("refund %s of %s: %w", refund, original, err)
	}
	if t.pre != nil {
		delete(t.pre.noRefund, original)
	}
	return nil
}

// pgRefundInsert links a refund to the payment it refunds.
const pgRefundInsert = `INSERT INTO paydesk_refunds (original, refund) VALUES ($1, $2) ON CONFLICT DO NOTHING`

// RefundKeys is RepoTx.RefundKeys.
func (t *Tx) RefundKeys(original string) ([]string, error) {
	if t.pre != nil && t.pre.noRefund[original] {
		return nil, nil
	}
	keys, err := t.strings(`SELECT refund FROM paydesk_refunds WHERE original = $1 ORDER BY refund`, original)
	if err != nil {
		return nil, fmt.Errorf("refunds of %s: %w", original, err)
	}
	return keys, nil
}

// txArgs are a transaction's row values, in pgTxInsert's column order.
func txArgs(x *domain.Transaction, f *fold.Folder) ([]any, error) {
	what := "transaction " + x.Key
	if err := pgTextErr(what, "key", x.Key, "kind", string(x.Kind), "transaction type", x.TransactionType, "service", x.ServiceCode,
		"invoice", x.Invoice, "currency", x.Currency, "status subcode", x.Status.SubCode, "reservation key", x.ReservationKey,
		"reservation number", x.ReservationNumber, "invoice number", x.InvoiceNumber, "payment key", x.PaymentKey,
		"original", x.Original, "group", x.Group, "provider", string(x.Provider), "customer", x.CustomerName, "order", x.Order); err != nil {
		return nil, err
	}
	for _, k := range x.Refunds {
		if err := pgTextErr(what, "a refund's key", k); err != nil {
			return nil, err
		}
	}
	amount, err := pgMoney(what+": amount", x.Amount)
	if err != nil {
		return nil, err
	}
	refunded, err := pgMoney(what+": refunded", x.Refunded)
	if err != nil {
		return nil, err
	}
	remainder, err := pgMoney(what+": remainder amount", x.RemainderAmount)
	if err != nil {
		return nil, err
	}
	var js [5][]byte
	for i, j := range []struct {
		name string
		v    any
		null bool
	}{{"related transactions", x.RelatedTransactions, x.RelatedTransactions == nil}, {"lines", x.Lines, x.Lines == nil},
		{"additional parameters", x.Additional, x.Additional == nil}, {"custom parameters", x.Custom, x.Custom == nil},
		{"parcels", x.Parcels, x.Parcels == nil}} {
		if js[i], err = pgJSON(what+": "+j.name, j.v, j.null); err != nil {
			return nil, err
		}
	}
	return []any{pgText(x.Key), pgText(string(x.Kind)), pgText(x.TransactionType), pgText(x.ServiceCode), x.Status.Code,
		pgText(x.Status.SubCode), pgTime(x.Status.Time), amount, pgText(x.Currency), pgText(x.Invoice), x.IsTest,
		pgText(x.ReservationKey), pgText(x.ReservationNumber), pgText(x.Original), pgText(x.Group), pgText(x.InvoiceNumber),
		pgText(x.PaymentKey), refunded, pgStrings(x.Refunds), x.FullCapture, pgText(string(x.Provider)), x.HasContact, remainder,
		pgText(x.CustomerName), pgText(strings.ToLower(x.CustomerName)), int64(x.OpID), pgText(x.Order), pgTime(x.Created),
		pgTime(x.Updated), SearchText(domain.AppendTxSearchText(nil, x, f)), js[1], js[4], js[0], js[2], js[3]}, nil
}

const pgTxCols = `key, kind, transaction_type, service, status, sub_code, status_time, amount, currency, invoice,
	is_test, reservation_key, reservation_number, original, grp, invoice_number, payment_key, refunded, refunds,
	full_capture, provider, has_contact, remainder_amount, customer, customer_sort, op_id, order_ref, created, updated,
	search, lines, parcels, related, additional, custom`

var pgTxUpsert = `INSERT INTO paydesk_transactions (` + pgTxCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
	$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33,
	$34, $35) ON CONFLICT (key) DO UPDATE SET ` + upsertSet(strings.TrimPrefix(pgTxCols, "key, "))

// pgTxUpsertNew is pgTxUpsert reporting whether the row is new: xmax is 0
// on a row the statement inserted, not on one it updated.
var pgTxUpsertNew = pgTxUpsert + ` RETURNING xmax = 0`

// PutTransaction is RepoTx.PutTransaction: x's row as it is, which is also
// its row of the transaction list and its invoice look-up.
func (t *Tx) PutTransaction(x *domain.Transaction) (created bool, err error) {
	var f fold.Folder
	args, err := txArgs(x, &f)
	if err != nil {
		return false, err
	}
	if t.err != nil {
		return false, t.err
	}
	if t.pre != nil && t.pre.noTx[x.Key] {
		// The read-ahead found no row for the key in this transaction's
		// snapshot (SERIALIZABLE: a row another transaction commits
		// meanwhile fails this one), so the upsert creates it: its answer
		// is known, and it goes with the next statement.
		t.queue("transaction "+x.Key, pgTxUpsert, args...)
		delete(t.pre.noTx, x.Key)
		return true, nil
	}
	if err := t.flush(); err != nil {
		return false, err
	}
	if err := t.tx.QueryRow(t.ctx, pgTxUpsertNew, args...).Scan(&created); err != nil {
		return false, t.fail(fmt.Errorf("transaction %s: %w", x.Key, err))
	}
	if t.pre != nil {
		delete(t.pre.noTx, x.Key)
	}
	return created, nil
}

// ---- orphan data requests ----

const pgOrphanSelect = `key, invoice, reservation_number, action, status, sub_code, status_time, op_id, update`

func scanOrphan(row pgx.Row) (*domain.OrphanRequest, error) {
	var o domain.OrphanRequest
	var st *time.Time
	var opID int64
	var update []byte
	if err := row.Scan(&o.Key, &o.Invoice, &o.ReservationNumber, &o.Action, &o.Status.Code, &o.Status.SubCode, &st, &opID, &update); err != nil {
		return nil, err
	}
	o.Status.Time, o.OpID = timeOf(st), uint64(opID)
	if update != nil {
		o.Update = &domain.Update{}
		if err := json.Unmarshal(update, o.Update); err != nil {
			return nil, fmt.Errorf("orphan request %s: update: %w", o.Key, err)
		}
	}
	return &o, nil
}

// Orphan is RepoTx.Orphan.
func (t *Tx) Orphan(key string) (*domain.OrphanRequest, error) {
	o, err := scanOrphan(t.queryRow(`SELECT `+pgOrphanSelect+` FROM paydesk_orphan_requests WHERE key = $1`, key))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, t.fail(fmt.Errorf("orphan request %s: %w", key, err))
	}
	return o, nil
}

// OrphanKeysByInvoice is RepoTx.OrphanKeysByInvoice.
func (t *Tx) OrphanKeysByInvoice(invoice string) ([]string, error) {
	if invoice == "" {
		return nil, nil
	}
	keys, err := t.strings(`SELECT key FROM paydesk_orphan_requests WHERE invoice = $1 ORDER BY key`, invoice)
	if err != nil {
		return nil, fmt.Errorf("orphan requests of invoice %s: %w", invoice, err)
	}
	return keys, nil
}

func orphanArgs(o *domain.OrphanRequest) ([]any, error) {
	what := "orphan request " + o.Key
	if err := pgTextErr(what, "key", o.Key, "invoice", o.Invoice, "reservation number", o.ReservationNumber,
		"action", o.Action, "status subcode", o.Status.SubCode); err != nil {
		return nil, err
	}
	update, err := pgJSON(what+": update", o.Update, o.Update == nil)
	if err != nil {
		return nil, err
	}
	return []any{pgText(o.Key), pgText(o.Invoice), pgText(o.ReservationNumber), pgText(o.Action), o.Status.Code,
		pgText(o.Status.SubCode), pgTime(o.Status.Time), int64(o.OpID), update}, nil
}

const pgOrphanUpsert = `INSERT INTO paydesk_orphan_requests (` + pgOrphanSelect + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
	ON CONFLICT (key) DO UPDATE SET invoice = excluded.invoice, reservation_number = excluded.reservation_number,
	action = excluded.action, status = excluded.status, sub_code = excluded.sub_code,
	status_time = excluded.status_time, op_id = excluded.op_id, update = excluded.update`

// PutOrphan is RepoTx.PutOrphan: its row, which its invoice look-up reads.
func (t *Tx) PutOrphan(o *domain.OrphanRequest) error {
	args, err := orphanArgs(o)
	if err != nil {
		return err
	}
	if err := t.exec(pgOrphanUpsert, args...); err != nil {
		return fmt.Errorf("orphan request %s: %w", o.Key, err)
	}
	return nil
}

// DeleteOrphan is RepoTx.DeleteOrphan.
func (t *Tx) DeleteOrphan(key string) error {
	if err := t.exec(`DELETE FROM paydesk_orphan_requests WHERE key = $1`, key); err != nil {
		return fmt.Errorf("orphan request %s: %w", key, err)
	}
	return nil
}
