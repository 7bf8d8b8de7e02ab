package store

import (
	"strings"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/store/domain"
)

// The push log and the audit log are read whole by the command line and
// the console (newest first, a bounded count); their filter is applied to
// each record here, with the words' and text fields' meaning of the lists
// (folded, in the record's text).

// PushFilter is what the push list's filter takes.
var PushFilter = query.List{Name: "push", Fields: []query.Field{query.Amount, query.Created, query.Service}}

// AuditFilter is what the audit list's filter takes.
var AuditFilter = query.List{Name: "audit", Fields: []query.Field{query.Amount, query.Created, query.Operator}}

// foldedHasAll reports whether text (folded like a search text) holds
// every value folded.
func foldedHasAll(text string, values []string) bool {
	for _, v := range values {
		if !strings.Contains(text, domain.FoldValue(v)) {
			return false
		}
	}
	return true
}

func foldFields(fields ...string) string {
	var f strings.Builder
	for _, s := range fields {
		f.WriteString(domain.FoldValue(s))
		if g, ok := foldGerman(s); ok {
			f.WriteString(" " + g)
		}
		f.WriteByte(0)
	}
	return f.String()
}

// KeepPush reports whether a push passes the filter w (checked against
// PushFilter): words in its envelope, kind, key, invoice, service and
// reason; created is when it was received; amount only when it carried
// one.
func KeepPush(p *PushRecord, w *query.Query) bool {
	if w.Amount != nil && (!p.HasAmount || !w.Amount.Contains(p.Amount)) {
		return false
	}
	if !inCreated(w.Created, p.ReceivedAt) {
		return false
	}
	if len(w.Service) > 0 && !foldedHasAll(foldFields(p.Service), w.Service) {
		return false
	}
	return len(w.Words) == 0 || foldedHasAll(foldFields(p.Envelope, p.Kind, p.Key, p.Invoice, p.Service, p.Reason, p.Ignored), w.Words)
}

// KeepAudit reports whether an audit entry passes the filter w (checked
// against AuditFilter): words in its operator, action, target, result and
// reason; created is its time.
func KeepAudit(e *AuditEntry, w *query.Query) bool {
	if w.Amount != nil && (e.Amount.IsZero() || !w.Amount.Contains(e.Amount)) {
		return false
	}
	if !inCreated(w.Created, e.Time) {
		return false
	}
	if len(w.Operator) > 0 && !foldedHasAll(foldFields(e.Operator), w.Operator) {
		return false
	}
	return len(w.Words) == 0 || foldedHasAll(foldFields(e.Operator, e.Action, e.Target, e.Result, e.Reason), w.Words)
}

// KeepTransaction reports whether one transaction passes the filter w, as
// the transaction list would keep it (for a reservation's few
// transactions, read without the list).
func KeepTransaction(t *Transaction, w *query.Query) bool {
	q := PageQuery{Where: *w}
	var f fold.Folder
	if !keepTxWhere(t, &q, &f) {
		return false
	}
	words := q.SearchWords()
	return len(words) == 0 || containsAll(AppendTxSearchText(nil, t, &f), wordBytes(words))
}
