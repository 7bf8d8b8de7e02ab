package sandbox

import (
	"encoding/csv"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// PathStatement serves the settlement statement of a day, as the family's
// back office publishes it (CSV): GET /sandbox/statement?date=YYYY-MM-DD
// [&websiteKey=KEY]. Like the checkout pages it is not signed: it is the
// sandbox's stand-in for a file the merchant downloads.
const PathStatement = "/sandbox/statement"

// StatementHeader is the statement's first line; every later line is one
// settled transaction. Amounts have two decimals with a point; Gross is
// negative for a refund, Net is Gross less Fee.
var StatementHeader = []string{"PayoutReference", "SettlementDate", "TransactionKey", "Invoice", "TransactionType",
	"Service", "Currency", "Gross", "Fee", "Net", "StatusDate"}

// StatementLine is one settled transaction.
type StatementLine struct {
	PayoutReference string
	SettlementDate  string // YYYY-MM-DD
	Key             string
	Invoice         string
	Type            string // C700, C701, V238, V239, C001
	Service         string
	Currency        string
	Gross, Fee, Net decimal.Decimal
	StatusDate      string // YYYY-MM-DD: the day the transaction succeeded
}

// settles reports whether a transaction of kind moves money on a payout.
func settles(kind string) bool {
	switch kind {
	case api.TypeDeferredPay, api.TypeDeferredRefund, api.TypeGiftCardPay, api.TypeGiftCardRefund, typeTransfer:
		return true
	}
	return false
}

// Statement returns the lines settled on day (in the sandbox clock's
// time zone) for websiteKey ("": every website key), ordered by payout
// reference and the time each transaction succeeded.
func (s *Sandbox) Statement(websiteKey string, day time.Time) []StatementLine {
	loc := s.now().Location()
	y, m, d := day.Date()
	date := time.Date(y, m, d, 0, 0, 0, 0, loc).Format(time.DateOnly)
	s.mu.Lock()
	defer s.mu.Unlock()
	type settled struct {
		line StatementLine
		at   time.Time
		seq  uint64
	}
	var out []settled
	for _, t := range s.txs {
		if t.Status != api.StatusSuccess || !settles(t.Kind) || (websiteKey != "" && t.WebsiteKey != websiteKey) {
			continue
		}
		at := t.Created
		if !t.StatusAt.IsZero() {
			at = t.StatusAt
		}
		at = at.In(loc)
		sy, sm, sd := at.Date()
		if time.Date(sy, sm, sd+s.cfg.SettleDays, 0, 0, 0, 0, loc).Format(time.DateOnly) != date {
			continue
		}
		gross := t.Amount
		if isRefund(t.Kind) {
			gross = gross.Neg()
		}
		fee := s.cfg.SettleFee
		out = append(out, settled{at: at, seq: t.Seq, line: StatementLine{
			PayoutReference: "PO-" + strings.ReplaceAll(date, "-", "") + "-" + t.WebsiteKey,
			SettlementDate:  date, Key: t.Key, Invoice: t.Invoice, Type: t.Kind, Service: t.Service, Currency: t.Currency,
			Gross: gross, Fee: fee, Net: gross.Sub(fee), StatusDate: at.Format(time.DateOnly)}})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.line.PayoutReference != b.line.PayoutReference {
			return a.line.PayoutReference < b.line.PayoutReference
		}
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.seq < b.seq
	})
	lines := make([]StatementLine, len(out))
	for i, o := range out {
		lines[i] = o.line
	}
	return lines
}

func (s *Sandbox) serveStatement(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	day, err := time.ParseInLocation(time.DateOnly, q.Get("date"), s.now().Location())
	if err != nil {
		plain(w, http.StatusBadRequest, "Bad request", "date: give the day as YYYY-MM-DD")
		return
	}
	lines := s.Statement(q.Get("websiteKey"), day)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="statement-`+day.Format(time.DateOnly)+`.csv"`)
	_ = WriteStatement(w, lines)
}

// WriteStatement writes lines as the statement's CSV, header first.
func WriteStatement(w io.Writer, lines []StatementLine) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(StatementHeader)
	for _, l := range lines {
		_ = cw.Write([]string{l.PayoutReference, l.SettlementDate, l.Key, l.Invoice, l.Type, l.Service, l.Currency,
			l.Gross.StringFixed(2), l.Fee.StringFixed(2), l.Net.StringFixed(2), l.StatusDate})
	}
	cw.Flush()
	return cw.Error()
}
